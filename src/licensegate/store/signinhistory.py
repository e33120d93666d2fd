"""SQL for the sign-in history of dashboard accounts: one row per attempt, newest 1,000 kept."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor

KEEP = 1000


class Attempt(TypedDict):
    id: int
    at: int
    ip: str | None
    user_agent: str | None
    result: str


async def record(
    db: Executor, account_id: int, *, at: int, ip: str | None, user_agent: str | None, result: str
) -> None:
    """Add one attempt and drop what falls beyond the newest KEEP of the account (an index seek
    on (account_id, id), so the table never grows past KEEP rows per account)."""
    await db.execute(
        "INSERT INTO signin_history (account_id, at, ip, user_agent, result) VALUES (?, ?, ?, ?, ?)",
        account_id,
        at,
        ip,
        user_agent,
        result,
    )
    await db.execute(
        "DELETE FROM signin_history WHERE account_id = ? AND id <= (SELECT id FROM signin_history "
        "WHERE account_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        account_id,
        account_id,
        KEEP,
    )


async def repeated(db: Executor, account_id: int, result: str, ip: str | None, *, since: int) -> bool:
    """Whether the account's newest attempt had this result, from this address, since `since`."""
    row = await db.fetch_one(
        "SELECT result, ip, at FROM signin_history WHERE account_id = ? ORDER BY id DESC LIMIT 1", account_id
    )
    return row is not None and row["result"] == result and row["ip"] == ip and row["at"] >= since


async def page(db: Executor, account_id: int, *, before: int | None, size: int) -> list[Attempt]:
    """Newest first, `size + 1` rows (the extra one says an older page exists), older than
    `before` (an id) when given."""
    rows = await db.fetch_all(
        "SELECT id, at, ip, user_agent, result FROM signin_history "
        "WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
        account_id,
        before if before is not None else 2**62,
        size + 1,
    )
    return cast(list[Attempt], rows)
