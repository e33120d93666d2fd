"""The client API (`/api/1.0/`). Importing a group module registers its operations."""

from licensegate.api.client import (  # noqa: F401  (importing registers the operations)
    accounts,
    chat,
    files,
    logs,
    otp,
    protection,
    security,
    session,
    variables,
    webhooks,
)
from licensegate.api.client.endpoint import endpoint
from licensegate.api.client.registry import ClientCall, registry

__all__ = ["ClientCall", "endpoint", "registry"]
