"""The client API (`/api/1.0/` … `/api/1.3/`) over HTTP, one endpoint per dialect; its operations
live in `licensegate.operations.client`."""

from licensegate.api.client.endpoint import endpoint, endpoint_for, unrouted
from licensegate.api.envelope import DIALECTS

endpoints = {version: endpoint_for(dialect) for version, dialect in DIALECTS.items()}

__all__ = ["DIALECTS", "endpoint", "endpoints", "unrouted"]
