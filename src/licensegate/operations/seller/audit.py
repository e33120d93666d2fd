"""Seller API — Audit Log: read and verify the audit log of changes (which no operation can edit
or delete)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import audit
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

AREA: Area = "logs"


@registry.operation(
    "fetchauditlogs",
    group="Audit Log",
    summary="Get Audit Logs",
    area=AREA,
    params=[
        PAGE,
        LIMIT,
        Param("action", max_length=audit.MAX_ACTION_FILTER, doc="only entries of this operation `type`"),
    ],
    returns={
        "logs": "[{id, actor, action, target, before, after, ip, created}], newest first; before "
        "and after are JSON values (null where nothing existed)",
        "count": "how many entries match (all pages)",
    },
)
async def fetch_audit_logs(call: SellerCall) -> dict[str, Any]:
    """Every change made through the seller API: who (`actor`), what (`action`, the operation's
    `type`, and `target`), when, from which IP, with the state before and after."""
    limit, offset = paging(call.args)
    logs, count = await audit.page(
        call.db, call.app_id, action=call.args.opt_text("action"), limit=limit, offset=offset
    )
    return {
        "message": "Successfully retrieved audit logs",
        "logs": [audit_entry(e) for e in logs],
        "count": count,
    }


def audit_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry (`domain.audit.shown`) as fetchauditlogs lists it."""
    return {
        "id": str(entry["id"]),
        "actor": entry["actor"],
        "action": entry["action"],
        "target": entry["target"],
        "before": entry["before"],
        "after": entry["after"],
        "ip": entry["ip"],
        "created": entry["created_at"],
    }


@registry.operation(
    "verifyauditlog",
    group="Audit Log",
    summary="Verify Audit Log",
    area=AREA,
    returns={
        "valid": "true when every entry fits the hash chain",
        "entries": "number of entries checked",
        "broken_at": "id of the first entry that does not fit, or null",
    },
)
async def verify_audit_log(call: SellerCall) -> dict[str, Any]:
    """Recompute the audit log's hash chain: an entry edited, removed or reordered in the
    database after it was written shows up as the first entry that does not fit."""
    result = await audit.verify(call.db, call.app_id)
    return {
        "message": "The audit log is intact." if result.valid else "The audit log has been altered.",
        "valid": result.valid,
        "entries": result.entries,
        "broken_at": None if result.broken_at is None else str(result.broken_at),
    }
