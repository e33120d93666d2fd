"""The client API (`/api/1.0/`). Importing a group module registers its operations."""

from licensegate.api.client import accounts, otp, protection, session  # noqa: F401  (registers operations)
from licensegate.api.client.endpoint import endpoint
from licensegate.api.client.registry import ClientCall, registry

__all__ = ["ClientCall", "endpoint", "registry"]
