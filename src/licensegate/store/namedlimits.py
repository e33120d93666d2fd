"""SQL for named rate limits: requests per window set on a user or on a key."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.credits import Owner
from licensegate.store.database import Executor

_COLUMN: dict[Owner, str] = {"user": "user_id", "key": "key_id"}


class LimitRow(TypedDict):
    name: str
    max_requests: int
    window_seconds: int


class AppLimitRow(LimitRow):
    user_id: int | None
    key: str | None  # the license key's text (what a session knows it by)


async def put(
    db: Executor,
    app_id: int,
    owner: Owner,
    owner_id: int,
    name: str,
    max_requests: int,
    window: int,
    now: int,
) -> None:
    """Create the named limit or change it; the application's flag is set (once) with it."""
    column = _COLUMN[owner]
    await db.execute(
        f"INSERT INTO named_limits (app_id, {column}, name, max_requests, window_seconds, created_at) "
        f"VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT ({column}, name) DO UPDATE SET "
        "max_requests = excluded.max_requests, window_seconds = excluded.window_seconds",
        app_id,
        owner_id,
        name,
        max_requests,
        window,
        now,
    )
    await db.execute("UPDATE apps SET named_limits = 1 WHERE id = ? AND named_limits = 0", app_id)


async def of_owner(db: Executor, owner: Owner, owner_id: int) -> list[LimitRow]:
    rows = await db.fetch_all(
        "SELECT name, max_requests, window_seconds FROM named_limits "
        f"WHERE {_COLUMN[owner]} = ? ORDER BY name",
        owner_id,
    )
    return [cast(LimitRow, dict(row)) for row in rows]


async def delete(db: Executor, owner: Owner, owner_id: int, name: str) -> bool:
    deleted = await db.execute(
        f"DELETE FROM named_limits WHERE {_COLUMN[owner]} = ? AND name = ?", owner_id, name
    )
    return deleted > 0


async def of_app(db: Executor, app_id: int) -> list[AppLimitRow]:
    """Every named limit of the application, a key's with its text."""
    rows = await db.fetch_all(
        "SELECT n.user_id, k.key, n.name, n.max_requests, n.window_seconds FROM named_limits n "
        "LEFT JOIN license_keys k ON k.id = n.key_id WHERE n.app_id = ?",
        app_id,
    )
    return [cast(AppLimitRow, dict(row)) for row in rows]
