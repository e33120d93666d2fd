"""SQL for the seller log: one row per seller API call of an application that turned it on."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store import bulk
from licensegate.store.database import Executor
from licensegate.store.paging import PageRequest, keyset

COLUMNS = "id, ip, operation, params, status, created_at, key_id, key_name"


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


class KeyedCall(LoggedCall):
    """An entry with the seller key that made the call (both None: signed in to an account)."""

    key_id: int | None
    key_name: str | None


async def browse(
    db: Executor,
    app_id: int,
    *,
    operation: str | None,
    status: int | None,
    key_id: int | None,
    without_key: bool,
    request: PageRequest,
) -> list[KeyedCall]:
    """One keyset page by id (`request.size + 1` rows, see `paging.finish`), optionally of one
    operation, one status and/or one key (`without_key`: the calls made signed in to an
    account); each answered by an index on (app_id, it, id)."""
    where = ""
    args: list[object] = []
    for column, value in (("operation", operation), ("status", status), ("key_id", key_id)):
        if value is not None:
            where += f" AND {column} = ?"
            args.append(value)
    if without_key:
        where += " AND key_id IS NULL"
    more, more_args, order = keyset("id", request)
    rows = await db.fetch_all(
        f"SELECT {COLUMNS} FROM seller_log WHERE app_id = ?{where}{more} {order} LIMIT ?",
        app_id,
        *args,
        *more_args,
        request.size + 1,
    )
    return cast("list[KeyedCall]", rows)


async def count(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM seller_log WHERE app_id = ?", app_id)
    return total


async def delete_all(db: Executor, app_id: int) -> int:
    return await bulk.delete_where(db, "seller_log", "app_id = ?", app_id)
