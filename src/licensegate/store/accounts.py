"""SQL for owner accounts (sellers, resellers, managers)."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def find_by_username(db: Executor, username: str) -> Row | None:
    return await db.fetch_one(
        "SELECT id, username, role, ownerid, parent_id, disabled FROM accounts WHERE username = ?",
        username,
    )


async def insert(
    db: Executor, *, username: str, role: str, ownerid: str | None, parent_id: int | None, now: int
) -> int:
    account_id: int = await db.fetch_value(
        "INSERT INTO accounts (username, role, ownerid, parent_id, created_at) "
        "VALUES (?, ?, ?, ?, ?) RETURNING id",
        username,
        role,
        ownerid,
        parent_id,
        now,
    )
    return account_id
