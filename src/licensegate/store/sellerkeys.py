"""SQL for seller keys. Only a SHA-256 digest of each key is stored."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def insert(
    db: Executor,
    *,
    app_id: int,
    key_hash: str,
    prefix: str,
    name: str,
    permissions: int,
    now: int,
    account_id: int | None = None,
) -> int:
    """`account_id`: the reseller or manager account the key acts as (None: the owner's key)."""
    key_id: int = await db.fetch_value(
        "INSERT INTO seller_keys (app_id, account_id, key_hash, prefix, name, permissions, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        account_id,
        key_hash,
        prefix,
        name,
        permissions,
        now,
    )
    return key_id


async def find_caller(db: Executor, key_hash: str) -> Row | None:
    """Everything a seller call needs to know about its caller, in one indexed lookup: the key,
    its application and owner, and, for a team member's key, the member's account and team row."""
    return await db.fetch_one(
        "SELECT k.id AS key_id, k.name AS key_name, k.prefix AS key_prefix, k.permissions, "
        "k.last_used_at, a.id AS app_id, a.name AS app_name, "
        "a.ownerid, a.seller_log, a.account_id, o.disabled AS account_disabled, o.username AS owner, "
        "k.account_id AS member_account_id, m.username AS member_username, m.role AS member_role, "
        "m.disabled AS member_disabled, t.app_id AS member_app_id, t.permissions AS member_permissions, "
        "t.key_levels AS member_key_levels "
        "FROM seller_keys k JOIN apps a ON a.id = k.app_id JOIN accounts o ON o.id = a.account_id "
        "LEFT JOIN accounts m ON m.id = k.account_id "
        "LEFT JOIN team_members t ON t.account_id = k.account_id "
        "WHERE k.key_hash = ?",
        key_hash,
    )


async def touch(db: Executor, key_id: int, now: int, ip: str | None) -> None:
    await db.execute(
        "UPDATE seller_keys SET last_used_at = ?, last_used_ip = ? WHERE id = ?", now, ip, key_id
    )


async def list_for_app(db: Executor, app_id: int) -> list[Row]:
    return await db.fetch_all(
        "SELECT k.id, k.name, k.prefix, k.permissions, k.created_at, k.last_used_at, k.last_used_ip, "
        "a.username AS account, a.role AS account_role FROM seller_keys k "
        "LEFT JOIN accounts a ON a.id = k.account_id WHERE k.app_id = ? ORDER BY k.id",
        app_id,
    )


async def find(db: Executor, app_id: int, key_id: int) -> Row | None:
    """One key of the application with what decides its areas: its own, and for a team member's
    key the member's role and team row."""
    return await db.fetch_one(
        "SELECT k.id, k.permissions, m.role AS member_role, t.permissions AS member_permissions "
        "FROM seller_keys k LEFT JOIN accounts m ON m.id = k.account_id "
        "LEFT JOIN team_members t ON t.account_id = k.account_id WHERE k.app_id = ? AND k.id = ?",
        app_id,
        key_id,
    )


async def delete(db: Executor, app_id: int, key_id: int) -> int:
    return await db.execute("DELETE FROM seller_keys WHERE app_id = ? AND id = ?", app_id, key_id)
