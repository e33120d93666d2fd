"""Named rate limits: requests per window the seller sets on a user or on a key (`api` at 100 per
minute, say), applied to every client call of a session of that user or logged in with that key,
on top of the address and application limits and counted by the same limiter (Redis when set up,
so every node shares the count). A call any limit refuses is counted by none.

An application with no named limit pays nothing: its `named_limits` flag (read with the
application) stays 0. Once set, the application's limits are kept per worker (`app_cache`) and
every change is announced, so no call reads them from the database."""

from __future__ import annotations

from dataclasses import dataclass, field

from licensegate.appcache import AppCache
from licensegate.domain import errorcodes
from licensegate.domain.credits import Target
from licensegate.domain.errors import RateLimited
from licensegate.invalidation import Invalidation
from licensegate.ratelimit import Check
from licensegate.store import namedlimits as store
from licensegate.store.database import Executor

LimitRow = store.LimitRow
TOPIC = "named_limits"
MAX_REQUESTS = 1_000_000_000
MAX_WINDOW = 31 * 86_400  # a month


@dataclass(frozen=True)
class Limit:
    name: str
    max_requests: int
    window: int


@dataclass(frozen=True)
class AppLimits:
    """One application's named limits, by user id and by key text."""

    by_user: dict[int, list[Limit]] = field(default_factory=dict)
    by_key: dict[str, list[Limit]] = field(default_factory=dict)


async def load(db: Executor, app_id: int) -> AppLimits:
    limits = AppLimits()
    for row in await store.of_app(db, app_id):
        limit = Limit(row["name"], row["max_requests"], row["window_seconds"])
        if row["user_id"] is not None:
            limits.by_user.setdefault(row["user_id"], []).append(limit)
        elif row["key"] is not None:
            limits.by_key.setdefault(row["key"], []).append(limit)
    return limits


def app_cache(invalidation: Invalidation) -> AppCache[AppLimits]:
    return AppCache(invalidation, TOPIC, load)


@dataclass(frozen=True)
class Counted:
    """One named limit as the limiter counts it, and how a refusal by it reads."""

    check: Check
    owner: str  # user | key
    name: str


def checks(app_id: int, limits: AppLimits, user_id: int, credential: str | None) -> list[Counted]:
    """The named limits a call of this session counts against: its user's, then its key's."""
    found = [
        Counted((f"named:{app_id}:user:{user_id}:{lim.name}", lim.max_requests, lim.window), "user", lim.name)
        for lim in limits.by_user.get(user_id, ())
    ]
    if credential is not None:
        found += [
            Counted(
                (f"named:{app_id}:key:{credential}:{lim.name}", lim.max_requests, lim.window), "key", lim.name
            )
            for lim in limits.by_key.get(credential, ())
        ]
    return found


def refused(counted: Counted, retry_after: int) -> RateLimited:
    entry = errorcodes.NAMED_LIMIT_EXCEEDED
    message = entry.message.format(owner=counted.owner, name=counted.name)
    return RateLimited(retry_after, message, entry.code, {"limit": counted.name})


async def put(
    db: Executor, app_id: int, to: Target, name: str, max_requests: int, window: int, now: int
) -> None:
    await store.put(db, app_id, to.owner, to.owner_id, name, max_requests, window, now)


async def of_target(db: Executor, to: Target) -> list[LimitRow]:
    return await store.of_owner(db, to.owner, to.owner_id)


async def delete(db: Executor, to: Target, name: str) -> None:
    if not await store.delete(db, to.owner, to.owner_id, name):
        raise errorcodes.NAMED_LIMIT_NOT_FOUND(name=name, owner=to.owner)
