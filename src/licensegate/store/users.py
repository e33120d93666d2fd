"""SQL for end users of an application and their HWIDs."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def find(db: Executor, app_id: int, username: str) -> Row | None:
    return await db.fetch_one(
        "SELECT id, username, banned_reason, last_ip, password_hash FROM users "
        "WHERE app_id = ? AND username = ?",
        app_id,
        username,
    )


async def find_by_id(db: Executor, app_id: int, user_id: int) -> Row | None:
    return await db.fetch_one(
        "SELECT id, username, banned_reason, last_ip, password_hash FROM users WHERE app_id = ? AND id = ?",
        app_id,
        user_id,
    )


async def hwids(db: Executor, user_id: int) -> list[str]:
    rows = await db.fetch_all("SELECT hwid FROM user_hwids WHERE user_id = ? ORDER BY id", user_id)
    return [row["hwid"] for row in rows]


async def set_ban(db: Executor, user_id: int, reason: str | None) -> int:
    return await db.execute("UPDATE users SET banned_reason = ? WHERE id = ?", reason, user_id)


async def delete(db: Executor, user_id: int) -> int:
    """Delete the user; HWIDs, grants, variables, sessions and mutes go with it (foreign keys)."""
    return await db.execute("DELETE FROM users WHERE id = ?", user_id)
