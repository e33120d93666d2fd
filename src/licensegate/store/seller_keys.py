"""SQL for seller keys. Only a SHA-256 digest of each key is stored."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def insert(
    db: Executor, *, app_id: int, key_hash: str, prefix: str, name: str, permissions: int, now: int
) -> int:
    key_id: int = await db.fetch_value(
        "INSERT INTO seller_keys (app_id, key_hash, prefix, name, permissions, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        key_hash,
        prefix,
        name,
        permissions,
        now,
    )
    return key_id


async def find_caller(db: Executor, key_hash: str) -> Row | None:
    """Everything a seller call needs to know about its caller, in one indexed lookup."""
    return await db.fetch_one(
        "SELECT k.id AS key_id, k.permissions, k.last_used_at, a.id AS app_id, a.name AS app_name, "
        "a.ownerid, a.seller_log, a.account_id, o.disabled AS account_disabled, o.username AS owner "
        "FROM seller_keys k JOIN apps a ON a.id = k.app_id JOIN accounts o ON o.id = a.account_id "
        "WHERE k.key_hash = ?",
        key_hash,
    )


async def touch(db: Executor, key_id: int, now: int) -> None:
    await db.execute("UPDATE seller_keys SET last_used_at = ? WHERE id = ?", now, key_id)


async def list_for_app(db: Executor, app_id: int) -> list[Row]:
    return await db.fetch_all(
        "SELECT id, name, prefix, permissions, created_at, last_used_at FROM seller_keys "
        "WHERE app_id = ? ORDER BY id",
        app_id,
    )


async def delete(db: Executor, app_id: int, key_id: int) -> int:
    return await db.execute("DELETE FROM seller_keys WHERE app_id = ? AND id = ?", app_id, key_id)
