"""Rate limiting: counters in-process and in Redis, and the limit seen over HTTP."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.ratelimit import MemoryRateLimiter, RedisRateLimiter
from tests.live import create_app, start_server

pytestmark = pytest.mark.anyio
REDIS_URL = "redis://127.0.0.1:6379/0"


async def test_memory_limiter_allows_the_limit_then_says_when_to_retry() -> None:
    clock = MovableClock(start=1_000_000_000)  # 10 s into a 60 s window
    limiter = MemoryRateLimiter(clock)
    assert [await limiter.hit("k", 3, 60) for _ in range(3)] == [0, 0, 0]
    assert await limiter.hit("k", 3, 60) == 20
    assert await limiter.hit("other", 3, 60) == 0
    clock.advance(20)  # a new window
    assert await limiter.hit("k", 3, 60) == 0


async def test_memory_limiter_shares_the_limit_between_workers() -> None:
    limiter = MemoryRateLimiter(MovableClock(), workers=2)
    allowed = [await limiter.hit("k", 5, 60) == 0 for _ in range(5)]
    assert allowed == [True, True, True, False, False]  # ceil(5 / 2) per worker


async def test_redis_limiter_counts_across_instances() -> None:
    """Two limiters stand for two worker processes sharing one Redis."""
    clock = MovableClock()
    prefix = f"test-{secrets.token_hex(4)}"
    first = RedisRateLimiter(REDIS_URL, clock, prefix)
    second = RedisRateLimiter(REDIS_URL, clock, prefix)
    try:
        results = await asyncio.gather(*(lim.hit("k", 10, 60) for lim in (first, second) for _ in range(10)))
        assert sum(1 for r in results if r == 0) == 10
        assert all(r > 0 for r in results if r)
    finally:
        await first.close()
        await second.close()


async def test_redis_limiter_fails_open_when_redis_is_down() -> None:
    limiter = RedisRateLimiter("redis://127.0.0.1:1/0", MovableClock(), "x")
    try:
        assert [await limiter.hit("k", 1, 60) for _ in range(3)] == [0, 0, 0]
    finally:
        await limiter.close()


@pytest.mark.server
@pytest.mark.parametrize("backend", ["redis", "memory"])
def test_seller_limit_holds_across_two_workers(tmp_path: Path, backend: str) -> None:
    url = f"sqlite:///{tmp_path / 'rl.db'}"
    key = create_app(url, tmp_path, "rl", "rl")["sellerkey"]
    extra = {"LICENSEGATE_SELLER_RATE_LIMIT": "10", "LICENSEGATE_SELLER_RATE_WINDOW": "3600"}
    if backend == "redis":
        extra |= {"LICENSEGATE_REDIS_URL": REDIS_URL, "LICENSEGATE_REDIS_PREFIX": f"t{secrets.token_hex(4)}"}
    server = start_server(url, tmp_path, 2, **extra)
    try:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            # Fresh connections spread the requests over both workers.
            statuses = [
                httpx.get(
                    f"{server.url}/api/seller/", params={"sellerkey": key, "type": "setseller"}
                ).status_code
                for _ in range(30)
            ]
            throttled = http.get("/api/seller/", params={"sellerkey": key, "type": "setseller"})
    finally:
        server.stop()
    if backend == "redis":
        assert statuses.count(200) == 10  # exactly the limit, whichever worker answered
    else:
        assert 5 <= statuses.count(200) <= 10  # each worker allows its share, ceil(10 / 2)
    assert set(statuses) == {200, 429}
    assert throttled.status_code == 429
    assert throttled.json()["error"] == "rate_limited"
    assert 0 < int(throttled.headers["Retry-After"]) <= 3600
