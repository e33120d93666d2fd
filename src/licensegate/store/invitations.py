"""SQL for team accounts' invitation links (only the link's SHA-256 kept)."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def replace(db: Executor, account_id: int, *, token_hash: str, now: int, expires_at: int) -> None:
    """The account's one live link (an earlier one stops working)."""
    await db.execute("DELETE FROM team_invitations WHERE account_id = ?", account_id)
    await db.execute(
        "INSERT INTO team_invitations (account_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)",
        account_id,
        token_hash,
        now,
        expires_at,
    )


_FOUND = (
    "SELECT i.account_id, a.username, a.role, t.app_id, p.name AS app_name FROM team_invitations i "
    "JOIN accounts a ON a.id = i.account_id "
    "JOIN team_members t ON t.account_id = a.id JOIN apps p ON p.id = t.app_id "
)


async def find(db: Executor, token_hash: str, now: int) -> Row | None:
    """The account (username, role, its application and that one's name) of a live link, or None."""
    return await db.fetch_one(f"{_FOUND}WHERE i.token_hash = ? AND i.expires_at > ?", token_hash, now)


async def take(db: Executor, token_hash: str, now: int) -> int | None:
    """Spend the link (its row goes whether or not it is still valid): the account's id when it
    was live; exactly one caller gets it."""
    row = await db.fetch_one(
        "DELETE FROM team_invitations WHERE token_hash = ? RETURNING account_id, expires_at", token_hash
    )
    if row is None or row["expires_at"] <= now:
        return None
    account_id: int = row["account_id"]
    return account_id


async def pending(db: Executor, account_id: int, now: int) -> int | None:
    """When the account's live link stops working, if it has one."""
    expires: int | None = await db.fetch_value(
        "SELECT expires_at FROM team_invitations WHERE account_id = ? AND expires_at > ?", account_id, now
    )
    return expires


async def pending_in_app(db: Executor, app_id: int, now: int) -> dict[int, int]:
    """When each live link of the application's team stops working, by account."""
    rows = await db.fetch_all(
        "SELECT i.account_id, i.expires_at FROM team_invitations i "
        "JOIN team_members t ON t.account_id = i.account_id WHERE t.app_id = ? AND i.expires_at > ?",
        app_id,
        now,
    )
    return {row["account_id"]: row["expires_at"] for row in rows}


async def cancel(db: Executor, account_id: int) -> int:
    return await db.execute("DELETE FROM team_invitations WHERE account_id = ?", account_id)
