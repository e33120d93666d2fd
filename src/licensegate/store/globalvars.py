"""SQL for global variables: named values of an application, readable by its clients."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor, Row


async def insert(db: Executor, app_id: int, *, name: str, value: str, authed: bool, now: int) -> int | None:
    """The new id, or None when the application already has a variable of that name."""
    var_id: int | None = await db.fetch_value(
        "INSERT INTO global_vars (app_id, name, value, authed, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (app_id, name) DO NOTHING RETURNING id",
        app_id,
        name,
        value,
        1 if authed else 0,
        now,
        now,
    )
    return var_id


async def find(db: Executor, app_id: int, name: str) -> Row | None:
    return await db.fetch_one(
        "SELECT id, name, value, authed, created_at FROM global_vars WHERE app_id = ? AND name = ?",
        app_id,
        name,
    )


async def update(db: Executor, app_id: int, name: str, *, value: str, authed: bool | None, now: int) -> int:
    flag = ", authed = ?" if authed is not None else ""
    args: list[object] = [value, now]
    if authed is not None:
        args.append(1 if authed else 0)
    return await db.execute(
        f"UPDATE global_vars SET value = ?, updated_at = ?{flag} WHERE app_id = ? AND name = ?",
        *args,
        app_id,
        name,
    )


class GlobalVarRow(TypedDict):
    """A variable as `list_for_app` lists it."""

    name: str
    value: str
    authed: int
    created_at: int
    updated_at: int


async def list_for_app(db: Executor, app_id: int) -> list[GlobalVarRow]:
    rows = await db.fetch_all(
        "SELECT name, value, authed, created_at, updated_at FROM global_vars WHERE app_id = ? ORDER BY id",
        app_id,
    )
    return cast("list[GlobalVarRow]", rows)


async def delete(db: Executor, app_id: int, name: str) -> int:
    return await db.execute("DELETE FROM global_vars WHERE app_id = ? AND name = ?", app_id, name)


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM global_vars WHERE app_id = ?", app_id)
