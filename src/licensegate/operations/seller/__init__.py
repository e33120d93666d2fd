"""The operations of the seller API (`/api/seller/`). Importing a group module registers its operations."""

# isort: off
# The import order is the registration order: the order of operations within a group of the
# reference, and of the groups the interface document does not name.
from licensegate.operations.seller import (  # noqa: F401  (importing registers the operations)
    sellerlog,
    audit,
    blacklists,
    chat,
    files,
    globalvars,
    licenses,
    logs,
    tamper,
    sellerkeys,
    sessions,
    settings,
    subscriptions,
    team,
    users,
    uservars,
    webhooks,
    events,
    appkeys,
    loader,
    tokens,
    entitlements,
    credits,
    seats,
    ratelimits,
    licensefiles,
)

# isort: on
from licensegate.operations.seller.invoke import invoke
from licensegate.operations.seller.registry import Caller, SellerCall, Upload, registry

__all__ = ["Caller", "SellerCall", "Upload", "invoke", "registry"]
