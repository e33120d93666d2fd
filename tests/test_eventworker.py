"""The event delivery loop through a database outage: it waits longer each time (doubling up to a
minute) and says so once when the outage begins and once when it ends, never a line every few
seconds. Against a private PostgreSQL this test stops and starts (never the shared one), and with
an outage made up on SQLite and PostgreSQL. The loop's waits are counted, not slept."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from licensegate import eventworker
from licensegate.config import Settings
from licensegate.domain import eventdelivery
from licensegate.services import Services
from licensegate.store import migrate
from licensegate.store.database import DatabaseUnavailable
from tests.conftest import make_settings
from tests.privatepg import PrivatePostgres, private_postgres

pytestmark = pytest.mark.anyio
BACKOFF = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]  # the first eight waits of an outage
POLL_MS = 250  # the wait when nothing is due: told apart from the outage's


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", event_poll_ms=POLL_MS)


class Waits:
    """A `sleep` for the loop that notes each wait and returns at once; `on_wait` may act on them."""

    def __init__(self, poll: float) -> None:
        self.poll = poll
        self.seen: list[float] = []
        self.done = asyncio.Event()

    def outage(self) -> list[float]:
        return [wait for wait in self.seen if wait != self.poll]

    async def __call__(self, seconds: float) -> None:
        self.seen.append(seconds)
        await self.on_wait(seconds)
        await asyncio.sleep(0)

    async def on_wait(self, seconds: float) -> None:
        pass


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "licensegate.events"]


async def run_until_done(services: Services, waits: Waits) -> None:
    task = asyncio.create_task(eventworker.keep_delivering(services, sleep=waits))
    try:
        await asyncio.wait_for(waits.done.wait(), timeout=120)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_an_outage_backs_off_and_is_logged_once(
    services: Services, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures = len(BACKOFF)
    deliver = eventdelivery.deliver_due

    async def unavailable_at_first(courier: Any, limit: int | None = None) -> int:
        nonlocal failures
        if failures:
            failures -= 1
            raise DatabaseUnavailable("the database did not answer in time")
        return await deliver(courier, limit)

    monkeypatch.setattr(eventdelivery, "deliver_due", unavailable_at_first)
    waits = Waits(services.settings.event_poll_ms / 1000)

    async def stop_after_two_polls(seconds: float) -> None:
        if waits.seen.count(waits.poll) == 2:
            waits.done.set()

    waits.on_wait = stop_after_two_polls  # type: ignore[method-assign]
    caplog.set_level(logging.WARNING, "licensegate.events")
    await run_until_done(services, waits)
    assert waits.outage() == BACKOFF
    assert set(waits.seen[len(BACKOFF) :]) == {waits.poll}  # back to polling
    said = lines(caplog)
    assert len(said) == 2, said
    assert "did not answer in time" in said[0]
    assert "after 8 failed tries" in said[1]


@pytest.fixture
def stopped_postgres() -> Iterator[PrivatePostgres]:
    with private_postgres() as server:
        yield server


@pytest.mark.server
async def test_a_stopped_postgresql_is_waited_for_with_backoff(
    stopped_postgres: PrivatePostgres, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = stopped_postgres.create_database("events")
    await asyncio.to_thread(migrate.upgrade, url)
    services = await Services.open(make_settings(url, tmp_path / "data", event_poll_ms=POLL_MS))
    try:
        waits = Waits(services.settings.event_poll_ms / 1000)

        async def restart_then_stop(seconds: float) -> None:
            if len(waits.outage()) == len(BACKOFF) and seconds != waits.poll:
                await asyncio.to_thread(stopped_postgres.resume)  # the outage ends
            elif seconds == waits.poll and waits.outage():
                waits.done.set()  # polling again after the outage

        waits.on_wait = restart_then_stop  # type: ignore[method-assign]
        await asyncio.to_thread(stopped_postgres.halt)  # the outage begins
        caplog.set_level(logging.WARNING, "licensegate.events")
        await run_until_done(services, waits)
    finally:
        await services.close()
    # A try or two may still fail while the restarted server opens its doors: waits of a minute.
    outage = waits.outage()
    assert outage[: len(BACKOFF)] == BACKOFF
    assert set(outage[len(BACKOFF) :]) <= {60.0}
    said = lines(caplog)
    assert len(said) == 2, said
    assert "delivering events:" in said[0]
    assert f"after {len(outage)} failed tries" in said[1]
