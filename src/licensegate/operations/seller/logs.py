"""Seller API — Log: the logs client applications send.

`fetchalllogs` and `dellogs` are KeyAuth's type values. KeyAuth has no type for Delete Logs By IP
(its logs carry no IP); ours is `dellogsbyip`, named in the same style.
"""

from __future__ import annotations

from typing import Any

from licensegate.domain import logs
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Log"
AREA: Area = "logs"
MAX_TIME = 10**12
MAX_SEARCH = 200
FILTERS = (
    Param("user", max_length=128, doc="only entries of this credential (username or license key)"),
    Param("ip", max_length=64, doc="only entries sent from this IPv4 or IPv6 address"),
    Param("from", "int", max_length=13, minimum=0, maximum=MAX_TIME, doc="only entries at or after (Unix s)"),
    Param("to", "int", max_length=13, minimum=0, maximum=MAX_TIME, doc="only entries at or before (Unix s)"),
    Param(
        "search",
        max_length=MAX_SEARCH,
        doc="only entries holding this text, in any case (logs: the message or PC user; tamper "
        "reports: the reason, details or HWID); answered by an index from 3 characters",
    ),
)


def filter_of(call: SellerCall) -> logs.LogFilter:
    return logs.log_filter(
        credential=call.args.opt_text("user"),
        ip=call.args.opt_text("ip"),
        since=call.args.opt_integer("from"),
        until=call.args.opt_integer("to"),
        search=call.args.opt_text("search"),
    )


@registry.operation(
    "fetchalllogs",
    group=GROUP,
    summary="Get Logs",
    area=AREA,
    params=[*FILTERS, PAGE, LIMIT],
    returns={
        "logs": "[{id, logdata, credential, pcuser, ip, logdate (Unix seconds)}], newest first",
        "count": "total number of entries matching the filters (all pages)",
    },
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """One page of the logs the application's clients sent, optionally filtered by user, IP, an
    inclusive time range and a text they hold (`search`)."""
    limit, offset = paging(call.args)
    rows, total = await logs.list_page(call.db, call.app_id, filter_of(call), limit=limit, offset=offset)
    return {
        "message": "Successfully retrieved logs",
        "logs": [log_entry(row) for row in rows],
        "count": total,
    }


def log_entry(row: logs.LogRow) -> dict[str, Any]:
    """A client log line as fetchlogs lists it."""
    return {
        "id": str(row["id"]),
        "logdata": row["message"],
        "credential": row["credential"],
        "pcuser": row["pcuser"],
        "ip": row["ip"],
        "logdate": row["created_at"],
    }


@registry.operation(
    "dellogs",
    group=GROUP,
    summary="Delete All Logs",
    area=AREA,
    mutates=True,
    returns={"deleted": "number of entries deleted"},
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every log entry of the application."""
    deleted = await logs.delete_all(call.db, call.app_id)
    call.record("logs:all", before={"logs": deleted}, after=None)
    return {"message": "Successfully deleted all logs!", "deleted": deleted}


@registry.operation(
    "dellogsbyip",
    group=GROUP,
    summary="Delete Logs By IP",
    area=AREA,
    mutates=True,
    params=[Param("ip", required=True, max_length=64, doc="an IPv4 or IPv6 address")],
    returns={"deleted": "number of entries deleted (0 is a success too)"},
)
async def delete_by_ip(call: SellerCall) -> dict[str, Any]:
    """Delete the log entries sent from one address."""
    ip, deleted = await logs.delete_by_ip(call.db, call.app_id, call.args.text("ip"))
    call.record(f"logs:ip:{ip}", before={"logs": deleted}, after=None)
    return {"message": "Successfully deleted logs by IP!", "deleted": deleted}
