"""SQL for the HWID and IP blacklist. `kind` is `hwid`, `ip` (one address) or `cidr` (a range);
values are canonical text, so every lookup is an equality on the unique (app_id, kind, value,
banned_user_id) index. One value may be listed more than once, once per origin: added directly
(`banned_user_id` 0) and by the bans of users."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TypedDict, cast

from licensegate.store import bulk
from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest, keyset

_KIND = "SELECT kind FROM blacklist WHERE app_id = ?"


def _marks(count: int) -> str:
    return ", ".join("?" * count)


DIRECT = 0  # `banned_user_id` of an entry added directly, not by a ban


async def add(
    db: Executor,
    app_id: int,
    kind: str,
    value: str,
    reason: str | None,
    now: int,
    *,
    added_by: str | None,
    banned_user_id: int = DIRECT,
) -> int:
    """1 when added; 0 when this origin listed the value already (it keeps its reason)."""
    return await db.execute(
        "INSERT INTO blacklist (app_id, kind, value, reason, created_at, added_by, banned_user_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (app_id, kind, value, banned_user_id) DO NOTHING",
        app_id,
        kind,
        value,
        reason,
        now,
        added_by,
        banned_user_id,
    )


async def remove_added_by_ban(db: Executor, app_id: int, user_id: int) -> int:
    """Remove what the bans of this user added, and nothing else."""
    return await db.execute("DELETE FROM blacklist WHERE app_id = ? AND banned_user_id = ?", app_id, user_id)


async def matching_kinds(
    db: Executor, app_id: int, *, hwids: Sequence[str], ip: str | None, ranges: Sequence[str]
) -> set[str]:
    """The kinds of the entries that match any of the HWIDs, the address or one of the ranges
    containing it: one statement, each branch an index lookup."""
    args: list[object] = []
    if hwids:
        args += [app_id, *hwids]
    if ip is not None:
        args += [app_id, ip]
    if ranges:
        args += [app_id, *ranges]
    if not args:
        return set()
    rows = await db.fetch_all(_matching_sql(len(hwids), ip is not None, len(ranges)), *args)
    return {row["kind"] for row in rows}


@functools.lru_cache(maxsize=256)
def _matching_sql(hwids: int, ip: bool, ranges: int) -> str:
    """`matching_kinds`' statement for that many HWIDs and ranges (built once: it runs at every login)."""
    parts: list[str] = []
    if hwids:
        parts.append(f"{_KIND} AND kind = 'hwid' AND value IN ({_marks(hwids)})")
    if ip:
        parts.append(f"{_KIND} AND kind = 'ip' AND value = ?")
    if ranges:
        parts.append(f"{_KIND} AND kind = 'cidr' AND value IN ({_marks(ranges)})")
    return " UNION ALL ".join(parts)


async def delete_one(db: Executor, app_id: int, kind: str, value: str) -> Row | None:
    """Remove the value whatever listed it; returns one removed entry (the oldest), or None."""
    # fetch_all runs a RETURNING statement to completion on SQLite.
    rows = await db.fetch_all(
        "DELETE FROM blacklist WHERE app_id = ? AND kind = ? AND value = ? RETURNING id, reason, created_at",
        app_id,
        kind,
        value,
    )
    return min(rows, key=lambda row: row["id"]) if rows else None


async def delete_all(db: Executor, app_id: int) -> int:
    return await bulk.delete_where(db, "blacklist", "app_id = ?", app_id)


class ListedEntry(TypedDict):
    """An entry as `list_page` lists it (`banned_username`: None when the user is gone or the
    entry was added directly)."""

    kind: str  # 'hwid', 'ip' or 'cidr'
    value: str
    reason: str | None
    created_at: int
    added_by: str | None
    banned_user_id: int  # DIRECT: added directly
    banned_username: str | None


async def list_page(db: Executor, app_id: int, *, limit: int, offset: int) -> list[ListedEntry]:
    """Oldest first, with where each entry came from (the banned user's current name, if any)."""
    rows = await db.fetch_all(
        "SELECT b.kind, b.value, b.reason, b.created_at, b.added_by, b.banned_user_id, "
        "u.username AS banned_username FROM blacklist b "
        "LEFT JOIN users u ON u.id = b.banned_user_id AND b.banned_user_id <> 0 "
        "WHERE b.app_id = ? ORDER BY b.id LIMIT ? OFFSET ?",
        app_id,
        limit,
        offset,
    )
    return cast("list[ListedEntry]", rows)


async def count(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM blacklist WHERE app_id = ?", app_id)
    return total


class BrowsedEntry(ListedEntry):
    id: int


async def browse(
    db: Executor,
    app_id: int,
    *,
    kinds: Sequence[str],
    direct: bool | None,
    value: str | None,
    request: PageRequest,
) -> list[BrowsedEntry]:
    """One keyset page by id (`request.size + 1` rows, see `paging.finish`) of the entries of
    these kinds (none: every kind), added directly or by bans (`direct` None: both), listing
    exactly `value` when set; with the banned user's current name."""
    where, args = "b.app_id = ?", list[object]([app_id])
    if kinds:
        where += f" AND b.kind IN ({_marks(len(kinds))})"
        args += kinds
    if direct is not None:
        where += " AND b.banned_user_id = ?" if direct else " AND b.banned_user_id <> ?"
        args.append(DIRECT)
    if value is not None:
        where += " AND b.value = ?"
        args.append(value)
    after, after_args, order = keyset("id", request)
    rows = await db.fetch_all(
        "SELECT b.id, b.kind, b.value, b.reason, b.created_at, b.added_by, b.banned_user_id, "
        "u.username AS banned_username FROM blacklist b "
        "LEFT JOIN users u ON u.id = b.banned_user_id AND b.banned_user_id <> 0 "
        f"WHERE {where}{after.replace(' id ', ' b.id ')} {order.replace('id ', 'b.id ')} LIMIT ?",
        *args,
        *after_args,
        request.size + 1,
    )
    return cast("list[BrowsedEntry]", rows)
