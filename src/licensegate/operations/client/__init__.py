"""The operations of the client API (`/api/1.0/`). Importing a group module registers its operations."""

# isort: off
# The import order is the registration order: the order of operations within a group of the reference.
from licensegate.operations.client import (  # noqa: F401  (importing registers the operations)
    logins,
    passwordreset,
    chat,
    globalvars,
    uservars,
    files,
    logs,
    blacklists,
    users,
    otp,
    tamper,
    sessions,
    webhooks,
    entitlements,
    credits,
    heartbeats,
    licensefiles,
)

# isort: on
from licensegate.operations.client.registry import ClientCall, registry

__all__ = ["ClientCall", "registry"]
