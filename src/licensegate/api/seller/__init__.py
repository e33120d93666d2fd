"""The seller API (`/api/seller/`) over HTTP; its operations live in `licensegate.operations.seller`."""

from licensegate.api.seller.endpoint import endpoint

__all__ = ["endpoint"]
