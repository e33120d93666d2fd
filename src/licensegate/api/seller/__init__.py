"""The seller API (`/api/seller/`). Importing a group module registers its operations."""

from licensegate.api.seller import (  # noqa: F401  (importing registers the operations)
    auditlog,
    blacklists,
    chat,
    files,
    globalvars,
    licenses,
    logs,
    sellerkey,
    sessions,
    settings,
    subscriptions,
    team,
    users,
    uservars,
    webhooks,
)
from licensegate.api.seller.endpoint import endpoint
from licensegate.api.seller.registry import SellerCall, registry

__all__ = ["SellerCall", "endpoint", "registry"]
