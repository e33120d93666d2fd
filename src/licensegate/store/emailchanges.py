"""SQL for pending e-mail address changes of dashboard accounts (only the link's SHA-256 kept)."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor


class Change(TypedDict):
    account_id: int
    new_email: str
    old_email: str | None
    username: str


async def replace(
    db: Executor, account_id: int, *, token_hash: str, new_email: str, now: int, expires_at: int
) -> None:
    """The account's one pending change (an earlier link stops working)."""
    await db.execute("DELETE FROM email_changes WHERE account_id = ?", account_id)
    await db.execute(
        "INSERT INTO email_changes (account_id, token_hash, new_email, created_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?)",
        account_id,
        token_hash,
        new_email,
        now,
        expires_at,
    )


async def take(db: Executor, token_hash: str, now: int) -> Change | None:
    """Spend the link: its row goes whether or not it is still valid; the change when it was."""
    row = await db.fetch_one(
        "DELETE FROM email_changes WHERE token_hash = ? RETURNING account_id, new_email, expires_at",
        token_hash,
    )
    if row is None or row["expires_at"] <= now:
        return None
    account = await db.fetch_one("SELECT username, email FROM accounts WHERE id = ?", row["account_id"])
    if account is None:
        return None
    return cast(
        Change,
        {
            "account_id": row["account_id"],
            "new_email": row["new_email"],
            "old_email": account["email"],
            "username": account["username"],
        },
    )


class Pending(TypedDict):
    username: str
    new_email: str


async def find(db: Executor, token_hash: str, now: int) -> Pending | None:
    """A live link's change, without spending it."""
    row = await db.fetch_one(
        "SELECT a.username, c.new_email FROM email_changes c JOIN accounts a ON a.id = c.account_id "
        "WHERE c.token_hash = ? AND c.expires_at > ?",
        token_hash,
        now,
    )
    return None if row is None else cast(Pending, row)


async def pending(db: Executor, account_id: int, now: int) -> str | None:
    """The address a live link would set, if any."""
    value: str | None = await db.fetch_value(
        "SELECT new_email FROM email_changes WHERE account_id = ? AND expires_at > ?", account_id, now
    )
    return value


async def cancel(db: Executor, account_id: int) -> int:
    return await db.execute("DELETE FROM email_changes WHERE account_id = ?", account_id)


async def set_email(db: Executor, account_id: int, email: str) -> int:
    return await db.execute("UPDATE accounts SET email = ? WHERE id = ?", email, account_id)
