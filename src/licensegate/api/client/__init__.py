"""The client API (`/api/1.0/`) over HTTP; its operations live in `licensegate.operations.client`."""

from licensegate.api.client.endpoint import endpoint

__all__ = ["endpoint"]
