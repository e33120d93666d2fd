"""Fixed-window request counters: in-process by default, Redis when `LICENSEGATE_REDIS_URL` is set.

With Redis every worker process (and every machine) shares one counter per key, so a limit holds
however the service is scaled. In-process counters are per worker, so the limit is divided by the
worker count to keep the total near what was configured.
"""

from __future__ import annotations

import hashlib
import logging
import math
from typing import Any, Protocol

from licensegate.clock import Clock

log = logging.getLogger("licensegate.ratelimit")

# INCR and EXPIRE in one round trip, atomically: a counter never outlives its window.
_REDIS_HIT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
"""


def _bucket(key: str) -> str:
    # Keys can contain usernames or license keys; only a digest of them is kept.
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class RateLimiter(Protocol):
    async def hit(self, key: str, limit: int, window: int) -> int:
        """Count one request; return 0 if it is allowed, else the seconds until it would be."""
        ...

    async def close(self) -> None: ...


class MemoryRateLimiter:
    def __init__(self, clock: Clock, workers: int = 1) -> None:
        self._clock = clock
        self._workers = max(1, workers)
        self._counts: dict[str, tuple[int, int]] = {}  # bucket -> (window end, count)
        self._hits_since_sweep = 0

    async def hit(self, key: str, limit: int, window: int) -> int:
        now = self._clock.now()
        end = (now // window + 1) * window
        bucket = f"{window}:{key}"  # in this process's memory only, so no digest is needed
        current_end, count = self._counts.get(bucket, (end, 0))
        if current_end != end:
            count = 0
        count += 1
        self._counts[bucket] = (end, count)
        self._sweep(now)
        if count > math.ceil(limit / self._workers):
            return max(1, end - now)
        return 0

    def _sweep(self, now: int) -> None:
        self._hits_since_sweep += 1
        if self._hits_since_sweep < 10_000:
            return
        self._hits_since_sweep = 0
        self._counts = {k: v for k, v in self._counts.items() if v[0] > now}

    async def close(self) -> None:
        self._counts.clear()


class RedisRateLimiter:
    def __init__(self, url: str, clock: Clock, prefix: str = "lg") -> None:
        import redis.asyncio as redis

        self._clock = clock
        self._prefix = prefix
        self._redis: Any = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._script = self._redis.register_script(_REDIS_HIT)
        self._last_warning = 0

    async def hit(self, key: str, limit: int, window: int) -> int:
        now = self._clock.now()
        index = now // window
        end = (index + 1) * window
        try:
            count = int(
                await self._script(
                    keys=[f"{self._prefix}:rl:{window}:{index}:{_bucket(key)}"], args=[window + 1]
                )
            )
        except Exception as exc:  # Redis down: fail open rather than refuse every request
            if now - self._last_warning >= 60:
                self._last_warning = now
                log.warning("rate limiter cannot reach Redis, not limiting: %s", exc)
            return 0
        if count > limit:
            return max(1, end - now)
        return 0

    async def close(self) -> None:
        await self._redis.aclose()


def open_rate_limiter(redis_url: str | None, clock: Clock, workers: int, prefix: str = "lg") -> RateLimiter:
    if redis_url:
        return RedisRateLimiter(redis_url, clock, prefix)
    return MemoryRateLimiter(clock, workers)
