"""Seller API — Seller Log: read and clear the log of seller API calls."""

from __future__ import annotations

from typing import Any

import orjson

from licensegate.domain import sellerlog
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, paging
from licensegate.operations.seller.registry import SellerCall, registry

AREA: Area = "logs"


@registry.operation(
    "fetchsellerlogs",
    group="Seller Log",
    summary="Get Seller Logs",
    area=AREA,
    params=[PAGE, LIMIT],
    returns={
        "logs": "[{id, ip, operation, params (secrets removed), status (HTTP), created}], newest first",
        "count": "how many entries the seller log holds (all pages)",
    },
)
async def fetch_seller_logs(call: SellerCall) -> dict[str, Any]:
    """The recorded seller API calls of this application (recorded only while the `sellerlogs`
    setting is on). Passwords, keys, tokens and URLs are never recorded."""
    limit, offset = paging(call.args)
    rows, count = await sellerlog.page(call.db, call.app_id, limit=limit, offset=offset)
    return {
        "message": "Successfully retrieved seller logs",
        "logs": [log_entry(row) for row in rows],
        "count": count,
    }


def log_entry(row: sellerlog.LoggedCall) -> dict[str, Any]:
    """An entry as fetchsellerlogs lists it, its parameters as a JSON object."""
    return {
        "id": str(row["id"]),
        "ip": row["ip"],
        "operation": row["operation"],
        "params": orjson.loads(row["params"]),
        "status": row["status"],
        "created": row["created_at"],
    }


@registry.operation(
    "delsellerlogs",
    group="Seller Log",
    summary="Delete Seller Logs",
    area=AREA,
    mutates=True,
    returns={"deleted": "how many entries were removed"},
)
async def delete_seller_logs(call: SellerCall) -> dict[str, Any]:
    """Empty the seller log."""
    deleted = await sellerlog.delete_all(call.db, call.app_id)
    call.record("seller_log", before={"entries": deleted}, after={"entries": 0})
    return {"message": "Successfully deleted seller logs", "deleted": deleted}
