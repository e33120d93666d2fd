"""SQL for single-use password-reset tokens (only their SHA-256 digest is stored)."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def user_with_email(
    db: Executor, app_id: int, key: str, email_lower: str, email_sha1: str
) -> Row | None:
    """The user whose `username_key` is `key`, if their address is this one: by the address, or
    (a user imported from KeyAuth, whose address is not known) by its SHA-1 while none is set."""
    return await db.fetch_one(
        "SELECT id, username, email FROM users WHERE app_id = ? AND username_key = ? "
        "AND (email_lower = ? OR (email IS NULL AND email_sha1 = ?))",
        app_id,
        key,
        email_lower,
        email_sha1,
    )


async def learn_email(db: Executor, user_id: int, email: str, email_sha1: str) -> int:
    """Set the address of an imported user known only by its SHA-1, once it is known (it hashes to
    that SHA-1); from then on it is matched as every address is. 1 when set."""
    return await db.execute(
        "UPDATE users SET email = ?, email_lower = ?, email_sha1 = NULL "
        "WHERE id = ? AND email IS NULL AND email_sha1 = ?",
        email,
        email.lower(),
        user_id,
        email_sha1,
    )


async def insert(db: Executor, *, user_id: int, token_hash: str, now: int, expires_at: int) -> None:
    await db.execute(
        "INSERT INTO password_resets (user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)",
        user_id,
        token_hash,
        now,
        expires_at,
    )


async def find_usable(db: Executor, token_hash: str, now: int) -> Row | None:
    return await db.fetch_one(
        "SELECT r.id, r.user_id, u.username, u.app_id, a.name AS app_name FROM password_resets r "
        "JOIN users u ON u.id = r.user_id JOIN apps a ON a.id = u.app_id "
        "WHERE r.token_hash = ? AND r.used_at IS NULL AND r.expires_at > ?",
        token_hash,
        now,
    )


async def use(db: Executor, reset_id: int, now: int) -> bool:
    """Spend the token; False when it was spent (or expired) meanwhile."""
    changed = await db.execute(
        "UPDATE password_resets SET used_at = ? WHERE id = ? AND used_at IS NULL AND expires_at > ?",
        now,
        reset_id,
        now,
    )
    return changed == 1


async def spend_all_for_user(db: Executor, user_id: int, now: int) -> None:
    await db.execute(
        "UPDATE password_resets SET used_at = ? WHERE user_id = ? AND used_at IS NULL", now, user_id
    )
