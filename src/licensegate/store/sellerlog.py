"""SQL for the seller log: one row per seller API call of an application that turned it on."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store import bulk
from licensegate.store.database import Executor


async def insert(
    db: Executor,
    *,
    app_id: int,
    ip: str | None,
    operation: str,
    params: str,
    status: int,
    now: int,
    key_id: int | None,
    key_name: str | None,
) -> None:
    await db.execute(
        "INSERT INTO seller_log (app_id, ip, operation, params, status, created_at, key_id, key_name) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        app_id,
        ip,
        operation,
        params,
        status,
        now,
        key_id,
        key_name,
    )


class LoggedCall(TypedDict):
    """A seller log entry (`params`: JSON, secrets removed; `status`: the answer's HTTP status)."""

    id: int
    ip: str | None
    operation: str
    params: str
    status: int
    created_at: int


async def page(db: Executor, app_id: int, limit: int, offset: int) -> list[LoggedCall]:
    """Newest first."""
    rows = await db.fetch_all(
        "SELECT id, ip, operation, params, status, created_at FROM seller_log WHERE app_id = ? "
        "ORDER BY id DESC LIMIT ? OFFSET ?",
        app_id,
        limit,
        offset,
    )
    return cast("list[LoggedCall]", rows)


async def count(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM seller_log WHERE app_id = ?", app_id)
    return total


async def delete_all(db: Executor, app_id: int) -> int:
    return await bulk.delete_where(db, "seller_log", "app_id = ?", app_id)
