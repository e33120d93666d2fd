"""`/readyz`: whether this worker can serve requests now, for load balancers and orchestrators.

`/healthz` says only that the process answers (it touches nothing); `/readyz` asks the database a
real question with a short timeout and, when Redis is configured, pings it. Each check is named in
the answer with `ok` or why it failed (`timeout`, `unreachable`: never a host name or a driver's
message, since the page is public); one failed check makes the answer 503. `rate_limiter` says
where the rate-limit counters are: `redis`, `in-process`, or `in-process (Redis unavailable)` when
the limiter has fallen back to counting in each worker."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from licensegate.ratelimit import RateLimiter
from licensegate.store.database import Database, DatabaseUnavailable

log = logging.getLogger("licensegate.readiness")

OK = "ok"


# The database question under way in this process, per database: a frozen server is asked once,
# not once per /readyz. Cancelling a query would not help: the driver then waits for the server to
# acknowledge the cancellation, so a timed-out question is left to end by the database's own
# timeout (`LICENSEGATE_PG_TIMEOUT`) while /readyz answers at once.
_asking: dict[int, asyncio.Task[object]] = {}


def _settle(key: int, task: asyncio.Task[object]) -> None:
    if _asking.get(key) is task:
        del _asking[key]
    if not task.cancelled():
        task.exception()  # retrieved here: a question nobody waited for any more may fail quietly


async def database_check(db: Database, wait: float) -> str:
    """A real query (the schema's revision) answered within `wait` seconds."""
    key = id(db)
    asking = _asking.get(key)
    if asking is None:
        asking = asyncio.ensure_future(db.fetch_value("SELECT version_num FROM alembic_version"))
        _asking[key] = asking
        asking.add_done_callback(lambda task: _settle(key, task))
    done, _ = await asyncio.wait({asking}, timeout=wait)
    if not done:
        return "timeout"
    failure = asking.exception() if not asking.cancelled() else DatabaseUnavailable("cancelled")
    if failure is not None:  # a refused connection, a missing table, a driver error
        log.info("readiness: the database check failed: %s", failure)
        return "unreachable"
    return OK


async def redis_check(limiter: RateLimiter) -> str | None:
    answers = await limiter.redis_answers()
    if answers is None:
        return None
    return OK if answers else "unreachable"


async def report(db: Database, limiter: RateLimiter, wait: float) -> tuple[int, dict[str, Any]]:
    """(status, body) of `/readyz`."""
    checks: dict[str, str] = {"database": await database_check(db, wait)}
    redis = await redis_check(limiter)
    if redis is not None:
        checks["redis"] = redis
    ready = all(result == OK for result in checks.values())
    body = {"status": "ready" if ready else "not ready", "checks": checks, "rate_limiter": limiter.status}
    return (200 if ready else 503), body
