"""Seller API — Session: list, count and end the application's client sessions.

`fetchallsessions`, `kill` and `killall` are KeyAuth's type values. KeyAuth has no type for
Get Active Session Count or Kill Session By IP; ours are `countsessions` and `killbyip`, named in
the same style.
"""

from __future__ import annotations

from typing import Any

from licensegate.domain import sessions
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Session"
AREA: Area = "sessions"
IP = Param("ip", required=True, max_length=64, doc="an IPv4 or IPv6 address")


@registry.operation(
    "fetchallsessions",
    group=GROUP,
    summary="Get Sessions",
    area=AREA,
    params=[
        Param("all", "bool", max_length=5, doc="1 to include expired sessions (default 0)"),
        PAGE,
        LIMIT,
    ],
    returns={
        "sessions": "[{id (the SHA-256 of the id the client holds, which the database never holds), "
        "credential (username or license key, or null before login), created (Unix "
        "seconds), expiry (Unix seconds), validated (0/1: logged in), ip}], newest first",
        "count": "total number of sessions listed (all pages)",
    },
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """One page of the application's unexpired sessions (with all=1, expired ones too)."""
    limit, offset = paging(call.args)
    rows, total = await sessions.list_page(
        call.db,
        call.app_id,
        now=call.now(),
        include_expired=call.args.flag("all"),
        limit=limit,
        offset=offset,
    )
    found = [session_entry(row) for row in rows]
    return {"message": "Successfully retrieved sessions", "sessions": found, "count": total}


def session_entry(row: sessions.ListedSession) -> dict[str, Any]:
    """A session as fetchallsessions lists it."""
    return {
        "id": row["id"],
        "credential": row["credential"],
        "created": row["created_at"],
        "expiry": row["expires_at"],
        "validated": 1 if row["validated"] else 0,
        "ip": row["ip"],
    }


@registry.operation(
    "countsessions",
    group=GROUP,
    summary="Get Active Session Count",
    area=AREA,
    returns={
        "count": "unexpired sessions",
        "validated": "unexpired sessions that are logged in (the users online)",
    },
)
async def count(call: SellerCall) -> dict[str, Any]:
    """How many sessions are active, and how many of them are logged in."""
    total, validated = await sessions.count_live(call.db, call.app_id, call.now())
    return {"message": "Successfully counted sessions", "count": total, "validated": validated}


@registry.operation(
    "kill",
    group=GROUP,
    summary="End Single Session",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "sessid",
            required=True,
            max_length=64,
            aliases=("sessionid",),
            doc="the session: the id its client holds, or the `id` fetchallsessions lists",
        )
    ],
    returns={},
)
async def kill(call: SellerCall) -> dict[str, Any]:
    """End one session; its client must initialise again."""
    session_id = call.args.text("sessid")
    ended = await sessions.kill(call.db, call.app_id, session_id, now=call.now())
    # A prefix names the session well enough; the whole id never goes into the audit log.
    call.record(f"session:{session_id[:8]}", before=ended, after=None)
    return {"message": "Successfully killed session!"}


@registry.operation(
    "killall",
    group=GROUP,
    summary="End All Sessions",
    area=AREA,
    mutates=True,
    returns={"deleted": "number of sessions ended"},
)
async def kill_all(call: SellerCall) -> dict[str, Any]:
    """End every session of the application, which logs every user out."""
    deleted = await sessions.kill_all(call.db, call.app_id, now=call.now())
    call.record("sessions:all", before={"sessions": deleted}, after=None)
    return {"message": "Successfully killed all sessions!", "deleted": deleted}


@registry.operation(
    "killbyip",
    group=GROUP,
    summary="Kill Session By IP",
    area=AREA,
    mutates=True,
    params=[IP],
    returns={"deleted": "number of sessions ended (0 is a success too)"},
)
async def kill_by_ip(call: SellerCall) -> dict[str, Any]:
    """End every session from one address. IPv4-mapped IPv6 addresses count as IPv4."""
    ip, deleted = await sessions.kill_by_ip(call.db, call.app_id, call.args.text("ip"), now=call.now())
    call.record(f"sessions:ip:{ip}", before={"sessions": deleted}, after=None)
    return {"message": "Successfully killed sessions by IP!", "deleted": deleted}
