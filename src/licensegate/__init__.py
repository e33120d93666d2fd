"""licensegate: self-hosted software licensing and end-user authentication."""

__version__ = "0.1.0"
