"""HWID and IP blacklists, the IP whitelist, and the check the client API runs at every login
and registration.

IP values are stored in one canonical text form so that equal addresses compare equal in SQL:
Python's `str(ipaddress.ip_address(x))`, with an IPv4-mapped IPv6 address written as IPv4 and an
IPv6 zone (`%eth0`) dropped. A blacklist entry has kind `hwid`, `ip` (one address) or `cidr` (a
range with its host bits cleared, e.g. `10.0.0.0/8`); a range that covers a single address is
stored as that address. Whitelist entries are addresses or ranges in the same forms.

The check (`blocked`) never scans the exact entries or the ranges: an address lies in a range
exactly when the range equals the address's own network at that prefix length, so the 32 (IPv4)
or 128 (IPv6) candidate networks are looked up through the unique index like the address itself.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal
from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.store import audit as audit_store
from licensegate.store import blacklists as store
from licensegate.store import whitelist as white_store
from licensegate.store.database import Database, Executor

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

HWID = "hwid"
IP = "ip"
CIDR = "cidr"
MAPPED_IPV4 = ipaddress.IPv6Network("::ffff:0:0/96")
DELETED_USER = "(deleted user)"


# --- canonical IP text -------------------------------------------------------------------------


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.scope_id is not None:
            return ipaddress.IPv6Address(int(address))  # the zone names a local interface only
    return address


@lru_cache(maxsize=4096)  # the client's address is checked at every login
def canonical_ip(text: str | None) -> str | None:
    """The canonical text of an IP address, or None when `text` is not one."""
    if text is None:
        return None
    address = _address(text)
    return None if address is None else str(address)


def parse_ip(text: str) -> str:
    """The canonical text of a single IP address; 400 `invalid_ip` otherwise."""
    canonical = canonical_ip(text)
    if canonical is None:
        raise errorcodes.INVALID_IP(text=text[:64])
    return canonical


@dataclass(frozen=True, slots=True)
class IpEntry:
    """An address (kind `ip`) or a range (kind `cidr`), in canonical text."""

    kind: str
    value: str


def parse_ip_or_range(text: str) -> IpEntry:
    """An address or a CIDR range (host bits set are cleared: 10.1.2.3/8 is 10.0.0.0/8);
    400 `invalid_ip` otherwise."""
    if "/" not in text:
        return IpEntry(IP, parse_ip(text))
    try:
        network: Network = ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise errorcodes.INVALID_IP(f"'{text[:64]}' is not an IPv4 or IPv6 address or CIDR range.") from None
    if isinstance(network, ipaddress.IPv6Network):
        if network.prefixlen >= 96 and network.network_address in MAPPED_IPV4:
            network = ipaddress.IPv4Network(
                (int(network.network_address) & 0xFFFFFFFF, network.prefixlen - 96)
            )
        elif network.network_address.scope_id is not None:
            network = ipaddress.IPv6Network((int(network.network_address), network.prefixlen))
    if network.prefixlen == network.max_prefixlen:
        return IpEntry(IP, str(network.network_address))
    return IpEntry(CIDR, str(network))


@lru_cache(maxsize=4096)
def containing_ranges(ip: str) -> tuple[str, ...]:
    """Every range (prefix /0 up to one short of a single address) that contains `ip`, in the
    canonical text a stored `cidr` entry has. `ip` must be canonical already."""
    address = ipaddress.ip_address(ip)
    address_type = type(address)
    bits = address.max_prefixlen
    number = int(address)
    full = (1 << bits) - 1
    # The address text of the masked number plus "/prefix" is exactly str() of the network.
    ranges = [
        f"{address_type(number & (full ^ ((1 << (bits - prefix)) - 1)))}/{prefix}" for prefix in range(bits)
    ]
    return tuple(ranges)


# --- the login-time check ------------------------------------------------------------------------


async def blocked(db: Executor, app_id: int, *, hwids: Sequence[str], ip: str | None) -> str | None:
    """Why a client is refused: "hwid" when one of its HWIDs is blacklisted, else "ip" when its
    IP is blacklisted (as an address or inside a range) and not whitelisted, else None.

    At most two indexed queries: one for every blacklist match, one for the whitelist (only
    when the IP matched). An IP that does not parse is ignored (only the HWIDs count)."""
    asked = probe(hwids, ip)
    canonical, ranges = asked.ip, asked.ranges
    if not asked.hwids and canonical is None:
        return None
    kinds = await store.matching_kinds(db, app_id, hwids=asked.hwids, ip=canonical, ranges=ranges)
    if HWID in kinds:
        return HWID
    if not kinds or canonical is None:
        return None
    if await white_store.contains_any(db, app_id, (canonical, *ranges)):
        return None
    return IP


@dataclass(frozen=True, slots=True)
class Probe:
    """What `blocked` asks the blacklist about a client, for a statement that asks it along with
    something else (`store.logins.first_use_postgres`)."""

    hwids: tuple[str, ...]
    ip: str | None  # canonical; None: the address does not parse (only the HWIDs count)
    ranges: tuple[str, ...]  # every range that contains `ip`


def probe(hwids: Sequence[str], ip: str | None) -> Probe:
    canonical = canonical_ip(ip)
    ranges = containing_ranges(canonical) if canonical is not None else ()
    return Probe(tuple(dict.fromkeys(h for h in hwids if h)), canonical, ranges)


async def is_blacklisted_ip(db: Executor, app_id: int, ip: str | None) -> bool:
    """The IP alone is blocked (blacklisted as an address or range, and not whitelisted)."""
    return await blocked(db, app_id, hwids=(), ip=ip) == IP


async def is_blacklisted_hwid(db: Executor, app_id: int, hwid: str) -> bool:
    return await blocked(db, app_id, hwids=(hwid,), ip=None) == HWID


async def is_whitelisted(db: Executor, app_id: int, ip: str | None) -> bool:
    """The IP is whitelisted as an address or inside a whitelisted range."""
    canonical = canonical_ip(ip)
    if canonical is None:
        return False
    return await white_store.contains_any(db, app_id, (canonical, *containing_ranges(canonical)))


# --- the seller's management -------------------------------------------------------------------


async def add(
    db: Database,
    app_id: int,
    *,
    ip: str | None,
    hwid: str | None,
    reason: str | None,
    now: int,
    added_by: str | None,
) -> tuple[int, list[dict[str, str]]]:
    """Blacklist an IP (address or range) and/or a HWID directly (no ban lifts such an entry).
    Returns how many entries were new and the entries asked for (`type`, `value`). An existing
    direct entry keeps its reason."""
    entries: list[tuple[str, str]] = []
    if ip is not None:
        parsed = parse_ip_or_range(ip)
        entries.append((parsed.kind, parsed.value))
    if hwid is not None:
        entries.append((HWID, hwid))
    if not entries:
        raise errorcodes.MISSING_PARAMETER("Give an 'ip', a 'hwid' or both to blacklist.")
    added = 0
    async with db.transaction() as tx:
        for kind, value in entries:
            added += await store.add(tx, app_id, kind, value, reason, now, added_by=added_by)
    return added, [{"type": HWID if kind == HWID else IP, "value": value} for kind, value in entries]


async def delete(db: Executor, app_id: int, *, data: str, blacktype: str) -> dict[str, Any]:
    """Remove one entry; `data` is a HWID, or for `blacktype` ip an address or a range.
    Returns the removed entry."""
    if blacktype == HWID:
        kind, value = HWID, data
    elif blacktype == IP:
        parsed = parse_ip_or_range(data)
        kind, value = parsed.kind, parsed.value
    else:
        raise errorcodes.INVALID_BLACKLIST_TYPE()
    removed = await store.delete_one(db, app_id, kind, value)
    if removed is None:
        raise errorcodes.BLACKLIST_NOT_FOUND(type=blacktype, value=value[:64])
    return {"type": blacktype, "value": value, "reason": removed["reason"]}


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)


@dataclass(frozen=True, slots=True)
class Entry:
    """A blacklist entry and where it came from: `added_by` (who added it; None before this was
    recorded) and `ban_of` (the user whose ban added it, None for a direct entry; `(deleted
    user)` once that user is gone). A value listed directly and by bans is one entry per origin."""

    kind: str  # HWID, or IP for an address or a range
    value: str
    reason: str | None
    created_at: int
    added_by: str | None
    ban_of: str | None


def _entry(row: store.ListedEntry) -> Entry:
    direct = row["banned_user_id"] == store.DIRECT
    return Entry(
        kind=HWID if row["kind"] == HWID else IP,
        value=row["value"],
        reason=row["reason"],
        created_at=row["created_at"],
        added_by=row["added_by"],
        ban_of=None if direct else row["banned_username"] or DELETED_USER,
    )


async def list_page(db: Executor, app_id: int, *, limit: int, offset: int) -> tuple[list[Entry], int]:
    """One page of entries, oldest first, and the total number."""
    rows = await store.list_page(db, app_id, limit=limit, offset=offset)
    return [_entry(row) for row in rows], await store.count(db, app_id)


# --- whitelist ---------------------------------------------------------------------------------


async def add_white(db: Executor, app_id: int, ip: str, now: int) -> tuple[bool, str]:
    """Whitelist an address or range. Returns whether it was new, and its canonical text."""
    value = parse_ip_or_range(ip).value
    return await white_store.add(db, app_id, value, now) > 0, value


async def delete_white(db: Executor, app_id: int, ip: str) -> str:
    value = parse_ip_or_range(ip).value
    if await white_store.remove(db, app_id, value) == 0:
        raise errorcodes.WHITELIST_NOT_FOUND(value=value)
    return value


async def delete_all_whites(db: Executor, app_id: int) -> int:
    return await white_store.delete_all(db, app_id)


async def list_whites(
    db: Executor, app_id: int, *, limit: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    rows = await white_store.list_page(db, app_id, limit=limit, offset=offset)
    entries = [{"ip": row["value"], "created": row["created_at"]} for row in rows]
    return entries, await white_store.count(db, app_id)


# --- the dashboard's lists ---------------------------------------------------------------------

KINDS_OF = {HWID: (HWID,), IP: (IP,), CIDR: (CIDR,), "": ()}


def _as_listed(value: str) -> str:
    """An address or range as the lists store it; any other text as it is (a HWID)."""
    try:
        return parse_ip_or_range(value).value
    except Refusal:
        return value


async def browse(
    db: Executor, app_id: int, *, kind: str, origin: str, value: str | None, request: PageRequest
) -> Page:
    """One keyset page of the blacklist: `kind` hwid, ip (one address), cidr (a range) or ''
    (every kind); `origin` 'direct', 'ban' or '' (both); `value` exactly (an address or range in
    any form). Each row says where it came from (`ban_of`, `banned_user_id`, `added_by`)."""
    if value is not None and kind != HWID:
        value = _as_listed(value)
    rows = await store.browse(
        db,
        app_id,
        kinds=KINDS_OF.get(kind, ()),
        direct={"direct": True, "ban": False}.get(origin),
        value=value,
        request=request,
    )
    page = finish([dict(row) for row in rows], request)
    for row in page.rows:
        direct = row["banned_user_id"] == store.DIRECT
        row["ban_of"] = None if direct else row["banned_username"] or DELETED_USER
        row["blacktype"] = HWID if row["kind"] == HWID else IP
    return page


async def browse_whites(db: Executor, app_id: int, *, value: str | None, request: PageRequest) -> Page:
    """One keyset page of the whitelist, `value` exactly (an address or range in any form)."""
    if value is not None:
        value = _as_listed(value)
    rows = [dict(row) for row in await white_store.browse(db, app_id, value=value, request=request)]
    # Who added each entry, as the audit log (append-only) recorded its `addWhite`.
    actors = await audit_store.newest_actors(
        db, app_id, "addWhite", [f"whitelist:{r['value']}" for r in rows]
    )
    for row in rows:
        row["added_by"] = actors.get(f"whitelist:{row['value']}")
    return finish(rows, request)


async def count(db: Executor, app_id: int) -> int:
    return await store.count(db, app_id)


async def count_whites(db: Executor, app_id: int) -> int:
    return await white_store.count(db, app_id)
