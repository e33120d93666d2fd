"""SQL for dashboard sessions (browsers signed in to the dashboard). Each request of a signed-in
browser finds its session with its account in one indexed lookup."""

from __future__ import annotations

from licensegate.store.accounts import ACCOUNT_COLUMNS, TEAM_JOIN
from licensegate.store.database import Executor, Row

_COLUMNS = (
    "s.id AS session_id, s.account_id, s.ip AS session_ip, s.user_agent, s.created_at AS session_created, "
    "s.expires_at, s.last_seen_at, s.pending"
)


async def insert(
    db: Executor,
    *,
    account_id: int,
    token_hash: str,
    ip: str | None,
    user_agent: str | None,
    pending: bool,
    now: int,
    expires_at: int,
) -> int:
    session_id: int = await db.fetch_value(
        "INSERT INTO dashboard_sessions (account_id, token_hash, ip, user_agent, pending, created_at, "
        "expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        account_id,
        token_hash,
        ip,
        user_agent,
        int(pending),
        now,
        expires_at,
        now,
    )
    return session_id


async def find(db: Executor, token_hash: str) -> Row | None:
    """The session with this token digest, with its account (as `accounts.find_for_signin`)."""
    return await db.fetch_one(
        f"SELECT {_COLUMNS}, {ACCOUNT_COLUMNS} FROM dashboard_sessions s "
        f"JOIN accounts a ON a.id = s.account_id {TEAM_JOIN} WHERE s.token_hash = ?",
        token_hash,
    )


async def touch(db: Executor, session_id: int, now: int) -> None:
    await db.execute("UPDATE dashboard_sessions SET last_seen_at = ? WHERE id = ?", now, session_id)


async def delete(db: Executor, session_id: int) -> int:
    return await db.execute("DELETE FROM dashboard_sessions WHERE id = ?", session_id)


async def delete_for_account(db: Executor, account_id: int, keep: int | None = None) -> int:
    """End every session of the account but `keep`."""
    if keep is None:
        return await db.execute("DELETE FROM dashboard_sessions WHERE account_id = ?", account_id)
    return await db.execute(
        "DELETE FROM dashboard_sessions WHERE account_id = ? AND id <> ?", account_id, keep
    )


async def delete_one_of(db: Executor, account_id: int, session_id: int) -> int:
    return await db.execute(
        "DELETE FROM dashboard_sessions WHERE account_id = ? AND id = ?", account_id, session_id
    )


async def list_for_account(db: Executor, account_id: int, now: int) -> list[Row]:
    """Unexpired sessions, most recently active first."""
    return await db.fetch_all(
        "SELECT id, ip, user_agent, created_at, last_seen_at, expires_at, pending "
        "FROM dashboard_sessions WHERE account_id = ? AND expires_at > ? ORDER BY last_seen_at DESC, id DESC",
        account_id,
        now,
    )


async def set_challenge(db: Executor, session_id: int, challenge: str, expires: int) -> None:
    await db.execute(
        "UPDATE dashboard_sessions SET challenge = ?, challenge_expires = ? WHERE id = ?",
        challenge,
        expires,
        session_id,
    )


async def take_challenge(db: Executor, session_id: int, now: int) -> str | None:
    """The session's unexpired WebAuthn challenge, cleared so it answers only one ceremony (of two
    concurrent takers, the conditional clear lets one win)."""
    row = await db.fetch_one(
        "SELECT challenge, challenge_expires FROM dashboard_sessions WHERE id = ?", session_id
    )
    if row is None or row["challenge"] is None:
        return None
    cleared = await db.execute(
        "UPDATE dashboard_sessions SET challenge = NULL, challenge_expires = NULL "
        "WHERE id = ? AND challenge = ?",
        session_id,
        row["challenge"],
    )
    if cleared != 1 or (row["challenge_expires"] or 0) <= now:
        return None
    challenge: str = row["challenge"]
    return challenge


async def purge_expired(db: Executor, now: int, idle_before: int) -> int:
    return await db.execute(
        "DELETE FROM dashboard_sessions WHERE expires_at <= ? OR last_seen_at < ?", now, idle_before
    )
