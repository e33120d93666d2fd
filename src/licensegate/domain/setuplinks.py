"""One-time setup links: `serve` on a database where nobody can sign in prints one, valid an
hour, that lets whoever opens it create the owner account. Only the link's digest is stored."""

from __future__ import annotations

import secrets

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain.accounts import Guard
from licensegate.store import setuplinks as store
from licensegate.store.database import Executor

LIFETIME = 3600
OWNER = "owner"
PATH = "/dashboard/setup"


async def issue(db: Executor, now: int, purpose: str = OWNER) -> str:
    token = secrets.token_urlsafe(32)
    await store.insert(db, token_hash=ids.digest(token), purpose=purpose, now=now, expires_at=now + LIFETIME)
    return token


async def is_live(db: Executor, token: str, now: int) -> bool:
    return bool(token) and len(token) <= 128 and await store.find_live(db, ids.digest(token), now) is not None


GONE = errorcodes.SETUP_LINK_INVALID.message


def spend(token: str, now: int) -> Guard:
    """A guard (see `accounts.Guard`) that spends the link in the transaction making the account,
    so a link makes exactly one account, and a refused account leaves the link unspent."""

    async def guard(tx: Executor) -> None:
        if not token or len(token) > 128 or not await store.consume(tx, ids.digest(token), now):
            raise errorcodes.SETUP_LINK_INVALID()

    return guard
