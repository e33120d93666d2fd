"""SQL for the web loader's buttons (`loader_buttons`)."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def list_all(db: Executor, app_id: int) -> list[Row]:
    return await db.fetch_all("SELECT value, text FROM loader_buttons WHERE app_id = ? ORDER BY id", app_id)


async def insert(db: Executor, app_id: int, *, value: str, text: str) -> bool:
    """False when the application has a button with that value already."""
    added = await db.fetch_value(
        "INSERT INTO loader_buttons (app_id, value, text) VALUES (?, ?, ?) "
        "ON CONFLICT (app_id, value) DO NOTHING RETURNING id",
        app_id,
        value,
        text,
    )
    return added is not None


async def delete(db: Executor, app_id: int, value: str) -> int:
    return await db.execute("DELETE FROM loader_buttons WHERE app_id = ? AND value = ?", app_id, value)


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM loader_buttons WHERE app_id = ?", app_id)
