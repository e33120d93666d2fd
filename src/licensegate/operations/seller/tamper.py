"""Seller API — Log: the tamper reports the client API records. KeyAuth has no types for them;
ours, `fetchtamperlogs` and `deltamperlogs`, are named in the style of its log types."""

from __future__ import annotations

from typing import Any

from licensegate.domain import tamper
from licensegate.operations.declarations import LIMIT, PAGE, paging
from licensegate.operations.seller.logs import AREA, FILTERS, GROUP, filter_of
from licensegate.operations.seller.registry import SellerCall, registry


@registry.operation(
    "fetchtamperlogs",
    group=GROUP,
    summary="Get Tamper Logs",
    area=AREA,
    params=[*FILTERS, PAGE, LIMIT],
    returns={
        "logs": "[{id, reason, details, credential, hwid, ip, created (Unix seconds)}], newest first",
        "count": "total number of entries matching the filters (all pages)",
    },
)
async def fetch_tamper(call: SellerCall) -> dict[str, Any]:
    """One page of the tamper reports (failed integrity checks of clients), with the same
    filters as Get Logs."""
    limit, offset = paging(call.args)
    rows, total = await tamper.list_page(call.db, call.app_id, filter_of(call), limit=limit, offset=offset)
    found = [tamper_entry(row) for row in rows]
    return {"message": "Successfully retrieved tamper logs", "logs": found, "count": total}


def tamper_entry(row: tamper.TamperRow) -> dict[str, Any]:
    """A tamper report as fetchtamperlogs lists it."""
    return {
        "id": str(row["id"]),
        "reason": row["reason"],
        "details": row["details"],
        "credential": row["credential"],
        "hwid": row["hwid"],
        "ip": row["ip"],
        "created": row["created_at"],
    }


@registry.operation(
    "deltamperlogs",
    group=GROUP,
    summary="Delete All Tamper Logs",
    area=AREA,
    mutates=True,
    returns={"deleted": "number of entries deleted"},
)
async def delete_tamper(call: SellerCall) -> dict[str, Any]:
    """Delete every tamper report of the application."""
    deleted = await tamper.delete_all(call.db, call.app_id)
    call.record("tamperlogs:all", before={"logs": deleted}, after=None)
    return {"message": "Successfully deleted all tamper logs!", "deleted": deleted}
