"""SQL for an account's second factor: its TOTP secret (sealed; the domain seals and unseals)
and its single-use recovery codes (digests only)."""

from __future__ import annotations

from collections.abc import Sequence

from licensegate.store.database import Executor, Row


async def totp_of(db: Executor, account_id: int) -> Row | None:
    return await db.fetch_one(
        "SELECT totp_secret, totp_last_step, totp_pending_secret, totp_pending_expires "
        "FROM accounts WHERE id = ?",
        account_id,
    )


async def set_pending(db: Executor, account_id: int, sealed: str, expires: int) -> None:
    await db.execute(
        "UPDATE accounts SET totp_pending_secret = ?, totp_pending_expires = ? WHERE id = ?",
        sealed,
        expires,
        account_id,
    )


async def confirm(db: Executor, account_id: int, sealed: str, step: int) -> int:
    """Make the pending secret the account's, unless it changed meanwhile."""
    return await db.execute(
        "UPDATE accounts SET totp_secret = totp_pending_secret, totp_last_step = ?, "
        "totp_pending_secret = NULL, totp_pending_expires = NULL "
        "WHERE id = ? AND totp_pending_secret = ?",
        step,
        account_id,
        sealed,
    )


async def use_step(db: Executor, account_id: int, step: int) -> bool:
    """Record `step` as used; False when it (or a later one) already was: a code works once."""
    changed = await db.execute(
        "UPDATE accounts SET totp_last_step = ? "
        "WHERE id = ? AND totp_secret IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < ?)",
        step,
        account_id,
        step,
    )
    return changed == 1


async def clear_totp(db: Executor, account_id: int) -> None:
    await db.execute(
        "UPDATE accounts SET totp_secret = NULL, totp_last_step = NULL, totp_pending_secret = NULL, "
        "totp_pending_expires = NULL WHERE id = ?",
        account_id,
    )


async def replace_codes(db: Executor, account_id: int, digests: Sequence[str], now: int) -> None:
    await db.execute("DELETE FROM recovery_codes WHERE account_id = ?", account_id)
    await db.execute_many(
        "INSERT INTO recovery_codes (account_id, code_hash, created_at) VALUES (?, ?, ?)",
        [(account_id, digest, now) for digest in digests],
    )


async def use_code(db: Executor, account_id: int, digest: str, now: int) -> bool:
    changed = await db.execute(
        "UPDATE recovery_codes SET used_at = ? WHERE account_id = ? AND code_hash = ? AND used_at IS NULL",
        now,
        account_id,
        digest,
    )
    return changed == 1


async def codes_left(db: Executor, account_id: int) -> int:
    left: int = await db.fetch_value(
        "SELECT COUNT(*) FROM recovery_codes WHERE account_id = ? AND used_at IS NULL", account_id
    )
    return left


async def delete_codes(db: Executor, account_id: int) -> None:
    await db.execute("DELETE FROM recovery_codes WHERE account_id = ?", account_id)
