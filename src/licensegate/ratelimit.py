"""Fixed-window request counters: in-process by default, Redis when `LICENSEGATE_REDIS_URL` is set.

With Redis every worker process (and every machine) shares one counter per key, so a limit holds
however the service is scaled. In-process counters are per worker, so the limit is divided by the
worker count to keep the total near what was configured. When Redis fails, the in-process counters
stand in until it answers again (`FallbackRateLimiter`): limits still hold, per worker.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Sequence
from typing import Any, Protocol

from licensegate.clock import Clock

log = logging.getLogger("licensegate.ratelimit")

# INCR and EXPIRE in one round trip, atomically: a counter never outlives its window.
_REDIS_HIT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count
"""

# Several counters, all or none, in one round trip: the first that is full refuses the request
# (its 1-based position is returned, 0 when none is) and then no counter counts it, so a refused
# request never spends the window of any limit (its address's, its user's, its application's).
_REDIS_HIT_ALL = """
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[2 * i - 1]) then return i end
end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then redis.call('EXPIRE', key, ARGV[2 * i]) end
end
return 0
"""

# A sign-in attempt: one counter counted, then (if it admits) another only looked at (`attempt`).
_REDIS_ATTEMPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if count > tonumber(ARGV[2]) then return 1 end
if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[3]) then return 2 end
return 0
"""

Check = tuple[str, int, int]  # (key, limit, window in seconds)
Admitted = tuple[int, int]  # (1-based position of the refusing check or 0, seconds until it admits)


def _retry(window: int, now: int) -> int:
    return max(1, (now // window + 1) * window - now)


def _bucket(key: str) -> str:
    # Keys can contain usernames or license keys; only a digest of them is kept.
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class RateLimiter(Protocol):
    async def hit(self, key: str, limit: int, window: int) -> int:
        """Count one request; return 0 if it is allowed, else the seconds until it would be."""
        ...

    async def hit_all(self, checks: Sequence[Check]) -> int:
        """Count one request against every `(key, limit, window)` if all of them admit it, else
        against none; 0 if counted, else the seconds until the first refusing one would admit it."""
        ...

    async def admit_all(self, checks: Sequence[Check]) -> Admitted:
        """`hit_all`, also saying which check refused (its 1-based position; 0: none did)."""
        ...

    async def peek(self, key: str, limit: int, window: int) -> int:
        """Without counting: 0 if `key` has been hit fewer than `limit` times in this window, else
        the seconds until the window ends (for limits on failures, counted only once they fail)."""
        ...

    async def attempt(self, counted: Check, peeked: Check) -> int:
        """`hit(*counted)`, then, if it admits the request, `peek(*peeked)`: 0 if both admit it,
        else the seconds the refusing one says (with Redis, one round trip for both)."""
        ...

    async def redis_answers(self) -> bool | None:
        """Whether Redis answers a ping now (within the short timeout); None without Redis."""
        ...

    @property
    def status(self) -> str:
        """Where the counters are now: `in-process`, `redis`, or `in-process (Redis unavailable)`."""
        ...

    async def close(self) -> None: ...


class MemoryRateLimiter:
    status = "in-process"

    async def redis_answers(self) -> bool | None:
        return None

    def __init__(self, clock: Clock, workers: int = 1) -> None:
        self._clock = clock
        self._workers = max(1, workers)
        # (window, key) -> (window end, count); in this process's memory only, so no digest is needed
        self._counts: dict[tuple[int, str], tuple[int, int]] = {}
        self._hits_since_sweep = 0

    def _share(self, limit: int) -> int:
        """This worker's part of a limit, rounded up (in integers: no float on the way)."""
        return -(-limit // self._workers)

    def _count(self, key: str, limit: int, window: int, now: int) -> int:
        end = (now // window + 1) * window
        bucket = (window, key)
        current = self._counts.get(bucket)
        count = current[1] + 1 if current is not None and current[0] == end else 1
        self._counts[bucket] = (end, count)
        if count > self._share(limit):
            return max(1, end - now)
        return 0

    async def hit(self, key: str, limit: int, window: int) -> int:
        now = self._clock.now()
        self._sweep(now)
        return self._count(key, limit, window, now)

    async def peek(self, key: str, limit: int, window: int) -> int:
        return self._peek(key, limit, window, self._clock.now())

    def _peek(self, key: str, limit: int, window: int, now: int) -> int:
        end = (now // window + 1) * window
        current_end, count = self._counts.get((window, key), (end, 0))
        if current_end == end and count >= self._share(limit):
            return max(1, end - now)
        return 0

    async def attempt(self, counted: Check, peeked: Check) -> int:
        # On every sign-in attempt (a License Login re-check too): one clock read, no awaits.
        now = self._clock.now()
        self._sweep(now)
        return self._count(*counted, now) or self._peek(*peeked, now)

    async def hit_all(self, checks: Sequence[Check]) -> int:
        return (await self.admit_all(checks))[1]

    async def admit_all(self, checks: Sequence[Check]) -> Admitted:
        # On every client call: each counter's window and place worked out once, then counted.
        now = self._clock.now()
        self._sweep(now)
        counts, workers = self._counts, self._workers
        admitted: list[tuple[tuple[int, str], int]] = []
        for position, (key, limit, window) in enumerate(checks, 1):
            end = (now // window + 1) * window
            bucket = (window, key)
            current = counts.get(bucket)
            if current is not None and current[0] == end and current[1] >= -(-limit // workers):
                return position, _retry(window, now)
            admitted.append((bucket, end))
        for bucket, end in admitted:
            current = counts.get(bucket)  # read again: two checks may name one counter
            counts[bucket] = (end, current[1] + 1 if current is not None and current[0] == end else 1)
        return 0, 0

    def _sweep(self, now: int) -> None:
        self._hits_since_sweep += 1
        if self._hits_since_sweep < 10_000:
            return
        self._hits_since_sweep = 0
        self._counts = {k: v for k, v in self._counts.items() if v[0] > now}

    async def close(self) -> None:
        self._counts.clear()


class RedisUnavailable(Exception):
    """Redis did not answer in time, or cannot be reached."""


class RedisRateLimiter:
    """Counters in Redis, one atomic round trip per hit. Alone it lets a request through when Redis
    fails; the service wraps it in `FallbackRateLimiter`, which counts in-process meanwhile."""

    def __init__(self, url: str, clock: Clock, prefix: str = "lg", timeout: float = 2.0) -> None:
        import redis.asyncio as redis

        self._clock = clock
        self._prefix = prefix
        self._redis: Any = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._script = self._redis.register_script(_REDIS_HIT)
        self._script_all = self._redis.register_script(_REDIS_HIT_ALL)
        self._script_attempt = self._redis.register_script(_REDIS_ATTEMPT)
        self._last_warning = 0
        self.in_flight = 0  # calls waiting for Redis now (a metric)

    async def count(self, key: str, limit: int, window: int) -> int:
        """`hit`, raising `RedisUnavailable` when Redis fails."""
        now = self._clock.now()
        index = now // window
        end = (index + 1) * window
        self.in_flight += 1
        try:
            count = int(
                await self._script(
                    keys=[f"{self._prefix}:rl:{window}:{index}:{_bucket(key)}"], args=[window + 1]
                )
            )
        except Exception as exc:
            raise RedisUnavailable(str(exc) or type(exc).__name__) from exc
        finally:
            self.in_flight -= 1
        if count > limit:
            return max(1, end - now)
        return 0

    async def count_peeked(self, key: str, limit: int, window: int) -> int:
        """`peek`, raising `RedisUnavailable` when Redis fails."""
        now = self._clock.now()
        index = now // window
        try:
            found = await self._redis.get(f"{self._prefix}:rl:{window}:{index}:{_bucket(key)}")
        except Exception as exc:
            raise RedisUnavailable(str(exc) or type(exc).__name__) from exc
        if found is not None and int(found) >= limit:
            return max(1, (index + 1) * window - now)
        return 0

    async def peek(self, key: str, limit: int, window: int) -> int:
        try:
            return await self.count_peeked(key, limit, window)
        except RedisUnavailable as exc:
            return self._fail_open(exc)

    async def count_attempt(self, counted: Check, peeked: Check) -> int:
        """`attempt`, raising `RedisUnavailable` when Redis fails."""
        now = self._clock.now()
        (key, limit, window), (peeked_key, peeked_limit, peeked_window) = counted, peeked
        keys = [
            f"{self._prefix}:rl:{window}:{now // window}:{_bucket(key)}",
            f"{self._prefix}:rl:{peeked_window}:{now // peeked_window}:{_bucket(peeked_key)}",
        ]
        self.in_flight += 1
        try:
            refused = int(await self._script_attempt(keys=keys, args=[window + 1, limit, peeked_limit]))
        except Exception as exc:
            raise RedisUnavailable(str(exc) or type(exc).__name__) from exc
        finally:
            self.in_flight -= 1
        if not refused:
            return 0
        return _retry(window if refused == 1 else peeked_window, now)

    async def attempt(self, counted: Check, peeked: Check) -> int:
        try:
            return await self.count_attempt(counted, peeked)
        except RedisUnavailable as exc:
            return self._fail_open(exc)

    async def count_all(self, checks: Sequence[Check]) -> Admitted:
        """`admit_all`, raising `RedisUnavailable` when Redis fails."""
        now = self._clock.now()
        keys: list[str] = []
        args: list[int] = []
        for key, limit, window in checks:
            keys.append(f"{self._prefix}:rl:{window}:{now // window}:{_bucket(key)}")
            args += [limit, window + 1]
        try:
            refused = int(await self._script_all(keys=keys, args=args))
        except Exception as exc:
            raise RedisUnavailable(str(exc) or type(exc).__name__) from exc
        if not refused:
            return 0, 0
        return refused, _retry(checks[refused - 1][2], now)

    async def hit_all(self, checks: Sequence[Check]) -> int:
        return (await self.admit_all(checks))[1]

    async def admit_all(self, checks: Sequence[Check]) -> Admitted:
        try:
            return await self.count_all(checks)
        except RedisUnavailable as exc:
            return 0, self._fail_open(exc)

    async def hit(self, key: str, limit: int, window: int) -> int:
        try:
            return await self.count(key, limit, window)
        except RedisUnavailable as exc:
            return self._fail_open(exc)

    def _fail_open(self, exc: RedisUnavailable) -> int:
        """Let the request through rather than refuse every request (said once a minute)."""
        now = self._clock.now()
        if now - self._last_warning >= 60:
            self._last_warning = now
            log.warning("rate limiter cannot reach Redis, not limiting: %s", exc)
        return 0

    async def ping(self) -> None:
        try:
            await self._redis.ping()
        except Exception as exc:
            raise RedisUnavailable(str(exc) or type(exc).__name__) from exc

    async def redis_answers(self) -> bool | None:
        try:
            await self.ping()
        except RedisUnavailable:
            return False
        return True

    async def close(self) -> None:
        await self._redis.aclose()


class FallbackRateLimiter:
    """Redis while it answers; the in-process counters at once when it does not (an unreachable
    Redis fails at once, a hung one after the short socket timeout), and until it answers again.

    Only the first failure waits for Redis: after it, requests count in-process without trying
    Redis, and one background task pings it every `retry` seconds. Each change is logged once.
    Meanwhile each worker enforces its share of a limit, as without Redis."""

    def __init__(self, redis: RedisRateLimiter, memory: MemoryRateLimiter, retry: float) -> None:
        self._redis = redis
        self._memory = memory
        self._retry = retry
        self._failing: str | None = None  # why Redis is not used now
        self._probe: asyncio.Task[None] | None = None

    @property
    def status(self) -> str:
        return "redis" if self._failing is None else "in-process (Redis unavailable)"

    @property
    def in_flight(self) -> int:
        return self._redis.in_flight

    async def hit(self, key: str, limit: int, window: int) -> int:
        if self._failing is None:
            try:
                return await self._redis.count(key, limit, window)
            except RedisUnavailable as exc:
                self._fall_back(str(exc))
        return await self._memory.hit(key, limit, window)

    async def peek(self, key: str, limit: int, window: int) -> int:
        if self._failing is None:
            try:
                return await self._redis.count_peeked(key, limit, window)
            except RedisUnavailable as exc:
                self._fall_back(str(exc))
        return await self._memory.peek(key, limit, window)

    async def attempt(self, counted: Check, peeked: Check) -> int:
        if self._failing is None:
            try:
                return await self._redis.count_attempt(counted, peeked)
            except RedisUnavailable as exc:
                self._fall_back(str(exc))
        return await self._memory.attempt(counted, peeked)

    async def hit_all(self, checks: Sequence[Check]) -> int:
        return (await self.admit_all(checks))[1]

    async def admit_all(self, checks: Sequence[Check]) -> Admitted:
        if self._failing is None:
            try:
                return await self._redis.count_all(checks)
            except RedisUnavailable as exc:
                self._fall_back(str(exc))
        return await self._memory.admit_all(checks)

    async def redis_answers(self) -> bool | None:
        """A ping: one that fails makes the counters go in-process at once (as a failed hit does),
        one that answers brings them back to Redis."""
        try:
            await self._redis.ping()
        except RedisUnavailable as exc:
            self._fall_back(str(exc))
            return False
        if self._failing is not None:
            if self._probe is not None:
                self._probe.cancel()
            self._back_to_redis()
        return True

    def _fall_back(self, reason: str) -> None:
        if self._failing is not None:
            return
        self._failing = reason
        log.warning(
            "rate limiter: Redis does not answer (%s); counting in this process until it does", reason
        )
        self._probe = asyncio.create_task(self._wait_for_redis())

    async def _wait_for_redis(self) -> None:
        while True:
            await asyncio.sleep(self._retry)
            try:
                await self._redis.ping()
            except RedisUnavailable:
                continue
            self._back_to_redis()
            return

    def _back_to_redis(self) -> None:
        self._failing = None
        self._probe = None
        log.warning("rate limiter: Redis answers again; counting in Redis")

    async def close(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
        await self._redis.close()
        await self._memory.close()


def open_rate_limiter(
    redis_url: str | None,
    clock: Clock,
    workers: int,
    prefix: str = "lg",
    *,
    redis_timeout: float = 0.25,
    redis_retry: float = 5.0,
) -> RateLimiter:
    if redis_url:
        return FallbackRateLimiter(
            RedisRateLimiter(redis_url, clock, prefix, redis_timeout),
            MemoryRateLimiter(clock, workers),
            redis_retry,
        )
    return MemoryRateLimiter(clock, workers)
