"""SQL for the IP whitelist: canonical addresses and CIDR ranges, unique per application."""

from __future__ import annotations

from collections.abc import Sequence

from licensegate.store import bulk
from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest, keyset


async def add(db: Executor, app_id: int, value: str, now: int) -> int:
    return await db.execute(
        "INSERT INTO whitelist (app_id, value, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (app_id, value) DO NOTHING",
        app_id,
        value,
        now,
    )


async def remove(db: Executor, app_id: int, value: str) -> int:
    return await db.execute("DELETE FROM whitelist WHERE app_id = ? AND value = ?", app_id, value)


async def delete_all(db: Executor, app_id: int) -> int:
    return await bulk.delete_where(db, "whitelist", "app_id = ?", app_id)


async def contains_any(db: Executor, app_id: int, values: Sequence[str]) -> bool:
    """Whether any of these exact values is whitelisted (an index lookup)."""
    if not values:
        return False
    marks = ", ".join("?" * len(values))
    found = await db.fetch_value(
        f"SELECT 1 FROM whitelist WHERE app_id = ? AND value IN ({marks}) LIMIT 1", app_id, *values
    )
    return found is not None


async def list_page(db: Executor, app_id: int, *, limit: int, offset: int) -> list[Row]:
    return await db.fetch_all(
        "SELECT value, created_at FROM whitelist WHERE app_id = ? ORDER BY id LIMIT ? OFFSET ?",
        app_id,
        limit,
        offset,
    )


async def count(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM whitelist WHERE app_id = ?", app_id)
    return total


async def browse(db: Executor, app_id: int, *, value: str | None, request: PageRequest) -> list[Row]:
    """One keyset page by id (`request.size + 1` rows, see `paging.finish`), listing exactly
    `value` when set."""
    where, args = "app_id = ?", list[object]([app_id])
    if value is not None:
        where += " AND value = ?"
        args.append(value)
    after, after_args, order = keyset("id", request)
    return await db.fetch_all(
        f"SELECT id, value, created_at FROM whitelist WHERE {where}{after} {order} LIMIT ?",
        *args,
        *after_args,
        request.size + 1,
    )
