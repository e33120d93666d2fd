"""`/readyz`: the database (a real query, briefly) and Redis when configured, each check named;
503 when one fails, and where the rate-limit counters are. `/healthz` stays a liveness check.

Frozen and stopped servers are private ones these tests start (never the shared ones)."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate.app import build_app
from licensegate.services import Services
from licensegate.store import migrate
from tests import privatepg
from tests.conftest import make_settings
from tests.privatepg import PrivatePostgres
from tests.test_ratelimit import REDIS_URL, PrivateRedis

pytestmark = pytest.mark.anyio

BOUND = 10.0  # seconds an answer may take at most here (generous, but finite)


@asynccontextmanager
async def serving(db_url: str, tmp_path: Path, **overrides: object) -> AsyncIterator[httpx.AsyncClient]:
    services = await Services.open(make_settings(db_url, tmp_path / "data", **overrides))
    try:
        transport = httpx.ASGITransport(app=build_app(services.settings, services))
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver", timeout=BOUND
        ) as http:
            yield http
    finally:
        await services.close()


async def ready(http: httpx.AsyncClient) -> tuple[int, dict[str, Any]]:
    started = time.monotonic()
    answer = await http.get("/readyz")
    assert time.monotonic() - started < BOUND
    assert answer.headers["Cache-Control"] == "no-store"
    body: dict[str, Any] = answer.json()
    return answer.status_code, body


async def test_ready_names_the_database_check(db_url: str, tmp_path: Path) -> None:
    async with serving(db_url, tmp_path) as http:
        assert await ready(http) == (
            200,
            {"status": "ready", "checks": {"database": "ok"}, "rate_limiter": "in-process"},
        )
        assert (await http.head("/readyz")).status_code == 200
        assert (await http.get("/healthz")).status_code == 200


async def test_ready_with_redis_names_it(db_url: str, tmp_path: Path) -> None:
    async with serving(db_url, tmp_path, redis_url=REDIS_URL) as http:
        assert await ready(http) == (
            200,
            {"status": "ready", "checks": {"database": "ok", "redis": "ok"}, "rate_limiter": "redis"},
        )


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    server = PrivateRedis()
    try:
        yield server
    finally:
        server.stop()


async def wait_until_ready(http: httpx.AsyncClient) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        status, body = await ready(http)
        if status == 200:
            return body
        assert time.monotonic() < deadline, body
        await asyncio.sleep(0.2)


async def test_a_frozen_or_stopped_redis_is_not_ready_and_says_the_limiter_fell_back(
    db_url: str, tmp_path: Path, private_redis: PrivateRedis
) -> None:
    async with serving(db_url, tmp_path, redis_url=private_redis.url, redis_retry=1) as http:
        assert (await ready(http))[0] == 200
        private_redis.signal(signal.SIGSTOP)  # hung: connections stay open, nothing answers
        try:
            assert await ready(http) == (
                503,
                {
                    "status": "not ready",
                    "checks": {"database": "ok", "redis": "unreachable"},
                    "rate_limiter": "in-process (Redis unavailable)",
                },
            )
            assert (await http.get("/healthz")).status_code == 200
        finally:
            private_redis.signal(signal.SIGCONT)
        body = await wait_until_ready(http)
        assert body["rate_limiter"] == "redis"
        private_redis.stop()  # gone: connections refused
        status, body = await ready(http)
        assert (status, body["checks"]["redis"], body["rate_limiter"]) == (
            503,
            "unreachable",
            "in-process (Redis unavailable)",
        )


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    with privatepg.private_postgres() as server:
        yield server


async def test_a_frozen_or_stopped_database_is_not_ready(
    tmp_path: Path, private_postgres: PrivatePostgres
) -> None:
    url = private_postgres.create_database("ready")
    migrate.upgrade(url)
    async with serving(url, tmp_path, pg_timeout=30, ready_timeout=1) as http:
        assert (await ready(http))[0] == 200
        private_postgres.freeze()
        try:
            assert await ready(http) == (
                503,
                {"status": "not ready", "checks": {"database": "timeout"}, "rate_limiter": "in-process"},
            )
            assert (await http.get("/healthz")).status_code == 200
        finally:
            private_postgres.thaw()
        await wait_until_ready(http)
        private_postgres.halt()
        status, body = await ready(http)
        assert (status, body["checks"]) == (503, {"database": "unreachable"})
        assert (await http.get("/healthz")).status_code == 200


async def test_a_database_without_the_schema_is_not_ready(tmp_path: Path) -> None:
    async with serving(f"sqlite:///{tmp_path / 'empty.db'}", tmp_path) as http:
        assert await ready(http) == (
            503,
            {"status": "not ready", "checks": {"database": "unreachable"}, "rate_limiter": "in-process"},
        )
