"""SQL for the web loader's buttons (`loader_buttons`), in the customer panel's order."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor

ORDER = "ORDER BY position, id"


class ButtonRow(TypedDict):
    value: str
    text: str


async def list_all(db: Executor, app_id: int) -> list[ButtonRow]:
    rows = await db.fetch_all(f"SELECT value, text FROM loader_buttons WHERE app_id = ? {ORDER}", app_id)
    return cast("list[ButtonRow]", rows)


async def count(db: Executor, app_id: int) -> int:
    found = await db.fetch_value("SELECT COUNT(*) FROM loader_buttons WHERE app_id = ?", app_id)
    return int(found or 0)


async def insert(db: Executor, app_id: int, *, value: str, text: str) -> bool:
    """Add at the end of the order; False when the application has a button with that value."""
    added = await db.fetch_value(
        "INSERT INTO loader_buttons (app_id, value, text, position) "
        "SELECT ?, ?, ?, COALESCE(MAX(position), 0) + 1 FROM loader_buttons WHERE app_id = ? "
        "ON CONFLICT (app_id, value) DO NOTHING RETURNING id",
        app_id,
        value,
        text,
        app_id,
    )
    return added is not None


async def update(db: Executor, app_id: int, value: str, *, new_value: str, text: str) -> int:
    """Change a button's value and text in place (its place in the order stays)."""
    return await db.execute(
        "UPDATE loader_buttons SET value = ?, text = ? WHERE app_id = ? AND value = ?",
        new_value,
        text,
        app_id,
        value,
    )


async def values_in_order(db: Executor, app_id: int) -> list[str]:
    rows = await db.fetch_all(f"SELECT value FROM loader_buttons WHERE app_id = ? {ORDER}", app_id)
    return [row["value"] for row in rows]


async def set_position(db: Executor, app_id: int, value: str, position: int) -> int:
    return await db.execute(
        "UPDATE loader_buttons SET position = ? WHERE app_id = ? AND value = ?", position, app_id, value
    )


async def delete(db: Executor, app_id: int, value: str) -> int:
    return await db.execute("DELETE FROM loader_buttons WHERE app_id = ? AND value = ?", app_id, value)


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM loader_buttons WHERE app_id = ?", app_id)
