"""SQL for applications."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def exists_for_account(db: Executor, account_id: int, name: str) -> bool:
    found = await db.fetch_value("SELECT 1 FROM apps WHERE account_id = ? AND name = ?", account_id, name)
    return found is not None


async def insert(db: Executor, *, account_id: int, ownerid: str, name: str, secret: str, now: int) -> int:
    app_id: int = await db.fetch_value(
        "INSERT INTO apps (account_id, ownerid, name, secret, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        account_id,
        ownerid,
        name,
        secret,
        now,
        now,
    )
    return app_id


async def get(db: Executor, app_id: int) -> Row | None:
    return await db.fetch_one("SELECT * FROM apps WHERE id = ?", app_id)


async def lock(db: Executor, app_id: int) -> None:
    """Serialise writers of one application until the transaction ends.

    A no-op UPDATE takes the application row's lock on PostgreSQL (SQLite's BEGIN IMMEDIATE
    serialises writers already). Used where two transactions could otherwise both see a name or
    key free and then collide on a unique index, or deadlock inserting what the other will try.
    """
    await db.execute("UPDATE apps SET updated_at = updated_at WHERE id = ?", app_id)
