"""SQL for the program hashes an application's client `init` accepts when hash checking is on."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def list_for_app(db: Executor, app_id: int) -> list[Row]:
    return await db.fetch_all("SELECT hash, created_at FROM app_hashes WHERE app_id = ? ORDER BY id", app_id)


async def count(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM app_hashes WHERE app_id = ?", app_id)
    return total


async def insert(db: Executor, app_id: int, hash_: str, now: int) -> bool:
    """False when the application already accepts this hash."""
    new_id = await db.fetch_value(
        "INSERT INTO app_hashes (app_id, hash, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (app_id, hash) DO NOTHING RETURNING id",
        app_id,
        hash_,
        now,
    )
    return new_id is not None


async def delete(db: Executor, app_id: int, hash_: str) -> int:
    return await db.execute("DELETE FROM app_hashes WHERE app_id = ? AND hash = ?", app_id, hash_)


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM app_hashes WHERE app_id = ?", app_id)


async def contains(db: Executor, app_id: int, hash_: str) -> bool:
    """Whether the program hash is one of the application's allowed hashes (init's check)."""
    found = await db.fetch_value("SELECT 1 FROM app_hashes WHERE app_id = ? AND hash = ?", app_id, hash_)
    return found is not None
