"""Seller API — Blacklists and the IP whitelist.

KeyAuth's type values: `black`, `delblack`, `delblacks`, `fetchallblacks`, `addWhite`,
`delWhite` and `delallwhites` (also accepted as `delAllWhites`, as KeyAuth's Telegram bot sends
it). KeyAuth has no type listing the whitelist; ours is `fetchallwhites`, in the same style.

IP values are single IPv4/IPv6 addresses or CIDR ranges; they are stored and returned in
canonical form (10.1.2.3/8 becomes 10.0.0.0/8, ::ffff:1.2.3.4 becomes 1.2.3.4). A whitelisted
IP bypasses IP and range blacklist entries, never HWID entries.
"""

from __future__ import annotations

from typing import Any

from licensegate.domain import blacklists
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Blacklists"
AREA: Area = "blacklists"
IP_OR_RANGE = "an IPv4 or IPv6 address, or a CIDR range such as 10.0.0.0/8"
MAX_IP = 64
MAX_HWID = 256


@registry.operation(
    "black",
    group=GROUP,
    summary="Add Blacklist",
    area=AREA,
    mutates=True,
    params=[
        Param("ip", max_length=MAX_IP, doc=IP_OR_RANGE),
        Param("hwid", max_length=MAX_HWID, doc="a hardware id"),
        Param("reason", max_length=256, doc="why (optional)"),
    ],
    returns={"added": "how many of the given entries were new (an existing entry is kept as it is)"},
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Blacklist an IP (address or range), a HWID, or one of each. Clients from a blacklisted
    HWID or IP are refused at login and registration."""
    added, entries = await blacklists.add(
        call.db,
        call.app_id,
        ip=call.args.opt_text("ip"),
        hwid=call.args.opt_text("hwid"),
        reason=call.args.opt_text("reason"),
        now=call.now(),
        added_by=call.caller.actor,
    )
    call.record("blacklist", before=None, after={"entries": entries, "reason": call.args.opt_text("reason")})
    return {"message": "Blacklist Addition Successful", "added": added}


@registry.operation(
    "delblack",
    group=GROUP,
    summary="Delete Blacklist",
    area=AREA,
    mutates=True,
    params=[
        Param("data", required=True, max_length=MAX_HWID, doc=f"the HWID, or for blacktype ip {IP_OR_RANGE}"),
        Param("blacktype", required=True, max_length=8, doc="ip or hwid"),
    ],
    returns={},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Remove one blacklist entry."""
    removed = await blacklists.delete(
        call.db, call.app_id, data=call.args.text("data"), blacktype=call.args.text("blacktype")
    )
    call.record(f"blacklist:{removed['type']}:{removed['value']}", before=removed, after=None)
    return {"message": "Successfully deleted blacklist!"}


@registry.operation(
    "delblacks",
    group=GROUP,
    summary="Delete All Blacklists",
    area=AREA,
    mutates=True,
    returns={"deleted": "number of entries deleted"},
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Remove every blacklist entry (HWIDs, addresses and ranges)."""
    deleted = await blacklists.delete_all(call.db, call.app_id)
    call.record("blacklist:all", before={"entries": deleted}, after=None)
    return {"message": "Successfully deleted all blacklists!", "deleted": deleted}


@registry.operation(
    "fetchallblacks",
    group=GROUP,
    summary="Get Blacklists",
    area=AREA,
    params=[
        PAGE,
        LIMIT,
        Param(
            "origin",
            "bool",
            max_length=5,
            doc="1: each entry also says who added it (`added_by`) and whose ban added it (`ban_of`)",
        ),
    ],
    returns={
        "blacklists": '[{type ("hwid" or "ip"), hwid (or null), ip (an address or CIDR range, or null), '
        "reason (or null), created (Unix seconds); with origin=1 also added_by (who added it: the "
        "owner, a manager, `client program`, `tamper detection`; null before this was recorded) "
        "and ban_of (the user whose ban added it; null for an entry added directly)}], oldest first. "
        "A value listed directly and by bans appears once per origin",
        "count": "total number of entries (all pages)",
    },
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """One page of the blacklist (an empty list when there is none)."""
    limit, offset = paging(call.args)
    entries, total = await blacklists.list_page(call.db, call.app_id, limit=limit, offset=offset)
    origin = call.args.flag("origin")
    found = [blacklist_entry(entry, origin=origin) for entry in entries]
    return {"message": "Successfully retrieved blacklists", "blacklists": found, "count": total}


def blacklist_entry(entry: blacklists.Entry, *, origin: bool) -> dict[str, Any]:
    """An entry as fetchallblacklists lists it; with `origin`, also who added it and whose ban did."""
    hwid = entry.kind == blacklists.HWID
    shown: dict[str, Any] = {
        "type": entry.kind,
        "hwid": entry.value if hwid else None,
        "ip": None if hwid else entry.value,
        "reason": entry.reason,
        "created": entry.created_at,
    }
    if origin:
        shown["added_by"] = entry.added_by
        shown["ban_of"] = entry.ban_of
    return shown


WHITE_IP = Param("ip", required=True, max_length=MAX_IP, doc=IP_OR_RANGE)


@registry.operation(
    "addWhite",
    group=GROUP,
    summary="Add Whitelist",
    area=AREA,
    mutates=True,
    params=[WHITE_IP],
    returns={"added": "1 when the entry was new, 0 when it was already whitelisted"},
)
async def add_white(call: SellerCall) -> dict[str, Any]:
    """Whitelist an address or range: it bypasses IP blacklist entries (never HWID ones)."""
    added, value = await blacklists.add_white(call.db, call.app_id, call.args.text("ip"), call.now())
    call.record(f"whitelist:{value}", before=None if added else {"ip": value}, after={"ip": value})
    return {"message": "Successfully added whitelist!", "added": 1 if added else 0}


@registry.operation(
    "delWhite",
    group=GROUP,
    summary="Delete Whitelist",
    area=AREA,
    mutates=True,
    params=[WHITE_IP],
    returns={},
)
async def delete_white(call: SellerCall) -> dict[str, Any]:
    """Remove one whitelist entry."""
    value = await blacklists.delete_white(call.db, call.app_id, call.args.text("ip"))
    call.record(f"whitelist:{value}", before={"ip": value}, after=None)
    return {"message": "Successfully deleted whitelist!"}


@registry.operation(
    "delallwhites",
    group=GROUP,
    summary="Delete All Whitelists",
    area=AREA,
    mutates=True,
    aliases=("delAllWhites",),
    returns={"deleted": "number of entries deleted"},
)
async def delete_all_whites(call: SellerCall) -> dict[str, Any]:
    """Remove every whitelist entry."""
    deleted = await blacklists.delete_all_whites(call.db, call.app_id)
    call.record("whitelist:all", before={"entries": deleted}, after=None)
    return {"message": "Successfully deleted all whitelists!", "deleted": deleted}


@registry.operation(
    "fetchallwhites",
    group=GROUP,
    summary="Get Whitelists",
    area=AREA,
    params=[PAGE, LIMIT],
    returns={
        "whitelist": "[{ip (an address or CIDR range), created (Unix seconds)}], oldest first",
        "count": "total number of entries (all pages)",
    },
)
async def fetch_all_whites(call: SellerCall) -> dict[str, Any]:
    """One page of the whitelist."""
    limit, offset = paging(call.args)
    found, total = await blacklists.list_whites(call.db, call.app_id, limit=limit, offset=offset)
    return {"message": "Successfully retrieved whitelists", "whitelist": found, "count": total}
