"""SQL for the HWID and IP blacklist. `kind` is `hwid`, `ip` (one address) or `cidr` (a range);
values are canonical text, so every lookup is an equality on the unique (app_id, kind, value)
index."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from licensegate.store.database import Executor, Row

_KIND = "SELECT kind FROM blacklist WHERE app_id = ?"


def _marks(count: int) -> str:
    return ", ".join("?" * count)


async def add(db: Executor, app_id: int, kind: str, value: str, reason: str | None, now: int) -> int:
    return await db.execute(
        "INSERT INTO blacklist (app_id, kind, value, reason, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (app_id, kind, value) DO NOTHING",
        app_id,
        kind,
        value,
        reason,
        now,
    )


async def remove(db: Executor, app_id: int, kind: str, values: Iterable[str]) -> int:
    removed = 0
    for value in values:
        removed += await db.execute(
            "DELETE FROM blacklist WHERE app_id = ? AND kind = ? AND value = ?", app_id, kind, value
        )
    return removed


async def matching_kinds(
    db: Executor, app_id: int, *, hwids: Sequence[str], ip: str | None, ranges: Sequence[str]
) -> set[str]:
    """The kinds of the entries that match any of the HWIDs, the address or one of the ranges
    containing it: one statement, each branch an index lookup."""
    parts: list[str] = []
    args: list[object] = []
    if hwids:
        parts.append(f"{_KIND} AND kind = 'hwid' AND value IN ({_marks(len(hwids))})")
        args += [app_id, *hwids]
    if ip is not None:
        parts.append(f"{_KIND} AND kind = 'ip' AND value = ?")
        args += [app_id, ip]
    if ranges:
        parts.append(f"{_KIND} AND kind = 'cidr' AND value IN ({_marks(len(ranges))})")
        args += [app_id, *ranges]
    if not parts:
        return set()
    rows = await db.fetch_all(" UNION ALL ".join(parts), *args)
    return {row["kind"] for row in rows}


async def delete_one(db: Executor, app_id: int, kind: str, value: str) -> Row | None:
    # fetch_all runs a RETURNING statement to completion on SQLite.
    rows = await db.fetch_all(
        "DELETE FROM blacklist WHERE app_id = ? AND kind = ? AND value = ? RETURNING reason, created_at",
        app_id,
        kind,
        value,
    )
    return rows[0] if rows else None


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM blacklist WHERE app_id = ?", app_id)


async def list_page(db: Executor, app_id: int, *, limit: int, offset: int) -> list[Row]:
    return await db.fetch_all(
        "SELECT kind, value, reason, created_at FROM blacklist WHERE app_id = ? ORDER BY id LIMIT ? OFFSET ?",
        app_id,
        limit,
        offset,
    )


async def count(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM blacklist WHERE app_id = ?", app_id)
    return total
