"""Rate limiting: counters in-process and in Redis, and the limit seen over HTTP."""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.ratelimit import MemoryRateLimiter, RedisRateLimiter, open_rate_limiter
from licensegate.store import migrate
from tests.live import create_app, free_port, start_server

pytestmark = pytest.mark.anyio
REDIS_URL = "redis://127.0.0.1:6379/0"
ROOM = 1800  # seconds a live test may take without its rate-limit window ending under it


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


def window_with_room(room: int = ROOM, now: float | None = None) -> int:
    """A window length (an hour or a little more) whose current window has at least `room` seconds
    left. The counters are fixed windows aligned on multiples of their length (`now // window`):
    with a plain hour, a test begun near its end would see its counts start again at the hour."""
    moment = int(time.time() if now is None else now)
    window = 3600
    while window - moment % window < room:
        window += 1
    return window


def test_window_with_room_leaves_room_wherever_the_clock_is() -> None:
    for moment in (1_800_000_000, 1_800_003_599, 1_800_001_799, 1_800_001_800, 1_799_999_990):
        window = window_with_room(now=moment)
        assert window - moment % window >= ROOM
        assert window < 3600 + 3600


@pytest.mark.server
@pytest.mark.parametrize("backend", ["redis", "memory"])
def test_seller_limit_holds_across_two_workers(tmp_path: Path, backend: str) -> None:
    url = f"sqlite:///{tmp_path / 'rl.db'}"
    migrate.upgrade(url)
    key = create_app(url, tmp_path, "rl", "rl")["sellerkey"]
    window = window_with_room()
    extra = {"LICENSEGATE_SELLER_RATE_LIMIT": "10", "LICENSEGATE_SELLER_RATE_WINDOW": str(window)}
    if backend == "redis":
        extra |= {
            "LICENSEGATE_REDIS_URL": REDIS_URL,
            "LICENSEGATE_REDIS_PREFIX": f"t{secrets.token_hex(4)}",
            "LICENSEGATE_REDIS_TIMEOUT_MS": "5000",  # a loaded machine must not make it fall back
        }
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
    assert 0 < int(throttled.headers["Retry-After"]) <= window


class PrivateRedis:
    """A Redis server of this test's own, to stop or freeze (never the shared one)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGCONT)
        self.process.kill()
        self.process.wait(timeout=10)


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    try:
        yield server
    finally:
        server.stop()


def _fallbacks(caplog: pytest.LogCaptureFixture) -> int:
    return sum("counting in this process" in record.getMessage() for record in caplog.records)


async def test_a_hung_redis_is_replaced_by_in_process_counters_at_once_and_used_again_later(
    private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger="licensegate.ratelimit")
    asked: list[str] = []  # the keys counted in Redis (each such call waits while Redis hangs)
    count_in_redis = RedisRateLimiter.count

    async def counting(self: RedisRateLimiter, key: str, limit: int, window: int) -> int:
        asked.append(key)
        return await count_in_redis(self, key, limit, window)

    monkeypatch.setattr(RedisRateLimiter, "count", counting)
    limiter = open_rate_limiter(private_redis.url, MovableClock(), 1, "t", redis_timeout=0.2, redis_retry=1)
    try:
        assert await limiter.hit("warm", 100, 60) == 0
        assert limiter.status == "redis"
        private_redis.signal(signal.SIGSTOP)  # connections stay open; nothing answers
        results = [await limiter.hit("k", 3, 60) for _ in range(20)]
        # Only the first call waited for Redis; the limit still held, counted in-process.
        assert asked.count("k") == 1
        assert results[:3] == [0, 0, 0]
        assert all(retry > 0 for retry in results[3:])
        assert limiter.status == "in-process (Redis unavailable)"
        assert _fallbacks(caplog) == 1  # said once, not per request
        private_redis.signal(signal.SIGCONT)
        deadline = time.monotonic() + 15
        while limiter.status != "redis":
            assert time.monotonic() < deadline, "the limiter did not go back to Redis"
            await asyncio.sleep(0.2)
        assert await limiter.hit("k", 3, 60) == 0  # a fresh count in Redis
        assert any("answers again" in record.getMessage() for record in caplog.records)
    finally:
        await limiter.close()


async def test_an_unreachable_redis_still_limits(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="licensegate.ratelimit")
    limiter = open_rate_limiter(f"redis://127.0.0.1:{free_port()}/0", MovableClock(), 1, "t", redis_retry=60)
    try:
        assert [await limiter.hit("k", 2, 60) > 0 for _ in range(4)] == [False, False, True, True]
        assert limiter.status == "in-process (Redis unavailable)"
        assert _fallbacks(caplog) == 1
    finally:
        await limiter.close()


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_hit_all_stops_counting_at_the_first_refusal(backend: str) -> None:
    clock = MovableClock(start=1_000_000_000)  # 10 s into a 60 s window
    limiter = (
        MemoryRateLimiter(clock)
        if backend == "memory"
        else RedisRateLimiter(REDIS_URL, clock, f"test-{secrets.token_hex(4)}")
    )
    try:
        narrow = [("address", 2, 60), ("app", 5, 3600)]
        assert [await limiter.hit_all(narrow) for _ in range(4)] == [0, 0, 20, 20]
        # The application's counter saw only the two requests the address was allowed.
        wider = [("other", 9, 60), ("app", 5, 3600)]
        assert [await limiter.hit_all(wider) for _ in range(4)] == [0, 0, 0, 800]  # 800 s to the hour
    finally:
        await limiter.close()


@pytest.mark.parametrize("backend", ["memory", "redis", "redis down"])
async def test_an_attempt_counts_its_first_counter_and_only_looks_at_the_second(backend: str) -> None:
    """`attempt` is `hit` then, if it admits, `peek`, in one call (one Redis round trip)."""
    clock = MovableClock(start=1_000_000_000)  # 20 s before a minute ends, 800 s before an hour does
    if backend == "memory":
        limiter: MemoryRateLimiter | RedisRateLimiter = MemoryRateLimiter(clock)
    else:
        url = REDIS_URL if backend == "redis" else f"redis://127.0.0.1:{free_port()}/0"
        limiter = RedisRateLimiter(url, clock, f"test-{secrets.token_hex(4)}", timeout=0.5)
    try:
        attempt = (("key", 3, 60), ("failures", 2, 3600))
        assert [await limiter.attempt(*attempt) for _ in range(4)] == (
            [0, 0, 0, 0] if backend == "redis down" else [0, 0, 0, 20]  # counted: the 4th is over
        )
        if backend == "redis down":
            return  # lets everything through, as `hit` and `peek` do
        assert await limiter.peek("failures", 2, 3600) == 0  # never counted by an attempt
        await limiter.hit("failures", 2, 3600)
        await limiter.hit("failures", 2, 3600)
        assert await limiter.attempt(("other key", 3, 60), ("failures", 2, 3600)) == 800
        assert await limiter.peek("other key", 3, 60) == 0  # counted once: room for two more
        assert await limiter.attempt(*attempt) == 20  # the first refusal is the one said
    finally:
        await limiter.close()


@pytest.mark.server
@pytest.mark.parametrize("backend", ["redis", "memory"])
def test_client_address_limit_holds_across_two_workers_and_spares_other_addresses(
    tmp_path: Path, backend: str
) -> None:
    """Addresses as a trusted proxy forwards them: one floods `init`, the others are served."""
    url = f"sqlite:///{tmp_path / 'rl.db'}"
    extra = {
        "LICENSEGATE_CLIENT_ADDRESS_LIMIT": "10",
        "LICENSEGATE_CLIENT_LIMIT_WINDOW": str(window_with_room()),  # one window for the whole test
        "LICENSEGATE_TRUSTED_PROXIES": "127.0.0.1",
    }
    if backend == "redis":
        extra |= {
            "LICENSEGATE_REDIS_URL": REDIS_URL,
            "LICENSEGATE_REDIS_PREFIX": f"t{secrets.token_hex(4)}",
            "LICENSEGATE_REDIS_TIMEOUT_MS": "5000",  # a loaded machine must not make it fall back
        }
    server = start_server(url, tmp_path, 2, **extra)
    created = server.create_app("rl", "rl")
    params = {"type": "init", "ownerid": created["ownerid"], "name": "rl"}

    def init_from(address: str) -> int:
        # A fresh connection each time spreads the requests over both workers.
        return httpx.post(
            f"{server.url}/api/1.0/", params=params, headers={"X-Forwarded-For": address}
        ).status_code

    try:
        flood = [init_from("198.51.100.66") for _ in range(30)]
        others = [init_from(f"198.51.100.{n}") for n in range(1, 6)]
    finally:
        server.stop()
    log = (tmp_path / "server.log").read_text()
    if backend == "redis":
        assert "counting in this process" not in log
        assert flood.count(200) == 10, log  # exactly the limit, whichever worker answered
    else:
        assert 5 <= flood.count(200) <= 10  # each worker allows its share, ceil(10 / 2)
    assert set(flood) == {200, 429}
    assert others == [200] * 5
