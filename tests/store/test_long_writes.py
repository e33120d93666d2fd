"""Long writes against a real `licensegate serve` with two workers: deleting hundreds of thousands of
keys must not stall other requests (on SQLite statements run on the worker's event loop, and the
other worker waits for the write lock), and SQLite's write-ahead log must not stay large after."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate.store.database import open_database
from tests import databases
from tests.conftest import serve_live
from tests.live import LiveServer, execute_sql, seller_call

pytestmark = pytest.mark.server

KEYS = 200_000
ANSWER_BOUND = 2.0  # seconds: generous, yet well under what one 200k-row statement holds a worker
WAL_LIMIT = 1024 * 1024  # the smallest LICENSEGATE_SQLITE_WAL_BYTES


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # The probes come from one address for as long as the delete lasts (longer on a loaded
    # machine): its client rate limit must not be what answers them.
    yield from serve_live(
        request,
        tmp_path_factory,
        LICENSEGATE_SQLITE_WAL_BYTES=str(WAL_LIMIT),
        LICENSEGATE_CLIENT_ADDRESS_LIMIT="1000000",
    )


async def _seed_keys(database_url: str, ownerid: str, count: int) -> None:
    db = await open_database(database_url, pool_size=1)
    try:
        app_id = await db.fetch_value("SELECT id FROM apps WHERE ownerid = ?", ownerid)
        await db.execute_many(
            "INSERT INTO license_keys (app_id, key, level, duration, status, generated_by, created_at) "
            "VALUES (?, ?, '1', 86400, 'unused', 'SellerAPI', 0)",
            [(app_id, f"LONG-{index:09d}-{ownerid[:8]}") for index in range(count)],
        )
    finally:
        await db.close()


def _wal(server: LiveServer) -> Path:
    return Path(server.database_url.removeprefix("sqlite:///") + "-wal")


def test_a_long_delete_does_not_stall_other_requests(server: LiveServer) -> None:
    created = server.create_app("long-writes", "app")
    execute_sql(
        server.database_url,
        "UPDATE apps SET client_rate_limit = 1000000 WHERE ownerid = ?",
        created["ownerid"],
    )
    asyncio.run(_seed_keys(server.database_url, created["ownerid"], KEYS))

    if not server.database_url.startswith("sqlite:///"):
        asyncio.run(_probe_a_held_delete(server, created))
        return
    outcome: dict[str, Any] = {}

    def delete_all() -> None:
        response = seller_call(server, created["sellerkey"], "delalllicenses")
        outcome["response"] = response

    deleting = threading.Thread(target=delete_all)
    probes = 0
    # The client's timeout is the bound: a request answered later fails the test.
    with httpx.Client(base_url=server.url, timeout=ANSWER_BOUND) as http:
        deleting.start()
        while deleting.is_alive():
            assert http.get("/healthz").status_code == 200
            init = http.post(
                "/api/1.0/", params={"type": "init", "ownerid": created["ownerid"], "name": created["name"]}
            )
            assert init.status_code == 200, init.text  # a write, needing the write lock meanwhile
            probes += 1
            time.sleep(0.02)
    deleting.join()
    response = outcome["response"]
    assert response.status_code == 200, response.text
    assert response.json()["deleted"] == KEYS
    assert probes >= 3  # the probes ran while the delete did


PROBES = 5


async def _probe_a_held_delete(server: LiveServer, created: dict[str, str]) -> None:
    """PostgreSQL deletes in one statement, quickly: probes racing it may all land before or after
    it. So the test holds one of the keys (a row lock in its own transaction): the delete is then
    certainly under way, waiting at that row with every row before it locked, while the probes
    run; letting go of the row lets it finish."""
    import asyncpg

    holder = await asyncpg.connect(server.database_url)
    watcher = await asyncpg.connect(server.database_url)
    try:
        held = holder.transaction()
        await held.start()
        await holder.execute(
            "SELECT id FROM license_keys WHERE key = $1 FOR UPDATE",
            f"LONG-{KEYS - 1:09d}-{created['ownerid'][:8]}",
        )
        deleting = asyncio.create_task(
            asyncio.to_thread(seller_call, server, created["sellerkey"], "delalllicenses")
        )
        # Asked on another connection: inside a transaction the activity view is a snapshot.
        while not await watcher.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database() AND query ILIKE '%DELETE FROM license_keys%'"
        ):
            assert not deleting.done(), (await deleting).text
            await asyncio.sleep(0.05)
        # The client's timeout is the bound: a request answered later fails the test.
        async with httpx.AsyncClient(base_url=server.url, timeout=ANSWER_BOUND) as http:
            for _ in range(PROBES):
                assert (await http.get("/healthz")).status_code == 200
                init = await http.post(
                    "/api/1.0/",
                    params={"type": "init", "ownerid": created["ownerid"], "name": created["name"]},
                )
                assert init.status_code == 200, init.text  # a write, while the delete holds its rows
        assert not deleting.done()  # the probes ran while the delete did
        await held.rollback()
        response = await deleting
    finally:
        await holder.close()
        await watcher.close()
    assert response.status_code == 200, response.text
    assert response.json()["deleted"] == KEYS


@pytest.mark.parametrize("server", ["sqlite"], indirect=True)  # PostgreSQL manages its own log
def test_the_write_ahead_log_does_not_stay_large(server: LiveServer) -> None:
    created = server.create_app("wal-size", "app")
    asyncio.run(_seed_keys(server.database_url, created["ownerid"], 50_000))
    assert seller_call(server, created["sellerkey"], "delalllicenses").json()["deleted"] == 50_000
    deadline = time.monotonic() + 30
    while _wal(server).stat().st_size > 2 * WAL_LIMIT and time.monotonic() < deadline:
        time.sleep(0.25)
    assert _wal(server).stat().st_size <= 2 * WAL_LIMIT
