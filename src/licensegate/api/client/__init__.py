"""The client API (`/api/1.0/` … `/api/1.3/`) over HTTP, one endpoint per dialect; its operations
live in `licensegate.operations.client`."""

from licensegate.api.client.endpoint import (
    ScopeEndpoint,
    endpoint,
    endpoint_for,
    scope_endpoint_for,
    unrouted,
)
from licensegate.api.envelope import DIALECTS

endpoints = {version: endpoint_for(dialect) for version, dialect in DIALECTS.items()}
# What app.FastPaths calls for each dialect (no Starlette Request on the way).
scope_endpoints = {version: scope_endpoint_for(dialect) for version, dialect in DIALECTS.items()}

__all__ = ["DIALECTS", "ScopeEndpoint", "endpoint", "endpoints", "scope_endpoints", "unrouted"]
