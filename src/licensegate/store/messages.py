"""SQL for an application's replacements of the client API's messages (absent = the default)."""

from __future__ import annotations

from licensegate.store.database import Executor


async def for_app(db: Executor, app_id: int) -> dict[str, str]:
    rows = await db.fetch_all("SELECT name, text FROM app_messages WHERE app_id = ?", app_id)
    return {row["name"]: row["text"] for row in rows}


async def put(db: Executor, app_id: int, name: str, text: str) -> None:
    await db.execute(
        "INSERT INTO app_messages (app_id, name, text) VALUES (?, ?, ?) "
        "ON CONFLICT (app_id, name) DO UPDATE SET text = excluded.text",
        app_id,
        name,
        text,
    )


async def delete(db: Executor, app_id: int, name: str) -> int:
    return await db.execute("DELETE FROM app_messages WHERE app_id = ? AND name = ?", app_id, name)
