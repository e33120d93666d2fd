"""Dashboard sessions: a browser signed in to the dashboard.

The browser holds a random token (256 bits); only its SHA-256 is stored. A session ends at its
absolute deadline, after `idle` seconds without a request, on sign-out, or when its account's
password changes. A session still `pending` has passed the password but not yet the second
factor: it lives a few minutes and opens only the second-factor page.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from licensegate import ids
from licensegate.domain.accounts import Account, from_row
from licensegate.store import websessions as store
from licensegate.store.database import Executor, Row

PENDING_SECONDS = 300  # to enter the second factor after the password
TOUCH_INTERVAL = 60  # seconds between `last_seen_at` writes of one session
TOKEN_FORMAT = re.compile(r"[A-Za-z0-9_-]{43}")


@dataclass(frozen=True, slots=True)
class Timeouts:
    idle: int
    lifetime: int


@dataclass(frozen=True, slots=True)
class WebSession:
    id: int
    account: Account
    pending: bool
    created_at: int
    expires_at: int
    last_seen_at: int


def new_token() -> str:
    return secrets.token_urlsafe(32)


def _session(row: Row, account: Account) -> WebSession:
    return WebSession(
        id=row["session_id"],
        account=account,
        pending=bool(row["pending"]),
        created_at=row["session_created"],
        expires_at=row["expires_at"],
        last_seen_at=row["last_seen_at"],
    )


async def start(
    db: Executor,
    account: Account,
    *,
    pending: bool,
    ip: str | None,
    user_agent: str | None,
    now: int,
    timeouts: Timeouts,
) -> tuple[str, int]:
    """A new session (and so a new token) for the account: (token, session id)."""
    token = new_token()
    lifetime = PENDING_SECONDS if pending else timeouts.lifetime
    session_id = await store.insert(
        db,
        account_id=account.id,
        token_hash=ids.digest(token),
        ip=ip,
        user_agent=(user_agent or "")[:256] or None,
        pending=pending,
        now=now,
        expires_at=now + lifetime,
    )
    return token, session_id


async def resume(db: Executor, token: str, now: int, timeouts: Timeouts) -> WebSession | None:
    """The live session this token opens, or None (unknown, expired, idle too long, or its account
    can no longer sign in; such a session is deleted)."""
    if not TOKEN_FORMAT.fullmatch(token):
        return None
    row = await store.find(db, ids.digest(token))
    if row is None:
        return None
    account = from_row(row)
    idle_limit = PENDING_SECONDS if row["pending"] else timeouts.idle
    if account is None or row["expires_at"] <= now or now - row["last_seen_at"] >= idle_limit:
        await store.delete(db, row["session_id"])
        return None
    if now - row["last_seen_at"] >= TOUCH_INTERVAL:
        await store.touch(db, row["session_id"], now)
    return _session(row, account)


async def end(db: Executor, session_id: int) -> None:
    await store.delete(db, session_id)


async def end_others(db: Executor, account_id: int, keep: int) -> int:
    return await store.delete_for_account(db, account_id, keep=keep)


async def end_one(db: Executor, account_id: int, session_id: int) -> bool:
    return await store.delete_one_of(db, account_id, session_id) == 1


async def list_for(db: Executor, account_id: int, now: int) -> list[Row]:
    return await store.list_for_account(db, account_id, now)


async def purge_expired(db: Executor, now: int, timeouts: Timeouts) -> int:
    return await store.purge_expired(db, now, now - max(timeouts.idle, PENDING_SECONDS))
