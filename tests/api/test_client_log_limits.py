"""Client logs and tamper reports are bounded (issue 10 item 9): a quota per session, a size limit
per line, and a retention period per application (default 30 days, `updatesettings
logretention=`), after which a background sweep deletes them in batches."""

from __future__ import annotations

import asyncio

import pytest

from licensegate import app as app_module
from licensegate.clock import MovableClock
from licensegate.domain import logs
from licensegate.services import Services
from licensegate.store import turns
from tests.helpers import Client, Seller, client_of, create_seller

pytestmark = pytest.mark.anyio

DAY = 86400


@pytest.fixture
async def app(seller: Seller, services: Services) -> Client:
    services.settings = services.settings.with_overrides(
        log_lines_per_session=3, tamper_reports_per_session=2
    )
    client = client_of(seller)
    await client.init()
    return client


async def stored(services: Services, table: str) -> int:
    count: int = await services.db.fetch_value(f"SELECT COUNT(*) FROM {table}")
    return count


async def test_a_session_stores_at_most_its_quota_of_log_lines(app: Client, services: Services) -> None:
    for n in range(3):
        await app.ok("log", message=f"line {n}")
    body = await app.fails("log", 403, "log_quota_exceeded", message="one too many")
    assert "3 log lines" in body["message"]
    assert await stored(services, "client_logs") == 3
    other = app.fresh()
    await other.init()
    await other.ok("log", message="a new session has its own quota")
    assert await stored(services, "client_logs") == 4


async def test_a_session_stores_at_most_its_quota_of_tamper_reports(app: Client, services: Services) -> None:
    await app.ok("tamper", reason="debugger")
    await app.ok("tamper", reason="debugger again")
    await app.fails("tamper", 403, "log_quota_exceeded", reason="and again")
    assert await stored(services, "tamper_logs") == 2
    await app.ok("log", message="logs count apart")


async def test_each_line_has_a_size_limit(app: Client) -> None:
    await app.fails("log", 400, "parameter_too_long", message="x" * (logs.MAX_MESSAGE + 1))
    await app.fails("tamper", 400, "parameter_too_long", reason="debugger", details="x" * 2001)


async def test_the_retention_period_is_a_setting_of_each_application(seller: Seller) -> None:
    assert (await seller.ok("getsettings"))["settings"]["log_retention_days"] == 30
    await seller.ok("updatesettings", logretention=7)
    assert (await seller.ok("getsettings"))["settings"]["log_retention_days"] == 7
    await seller.fails("updatesettings", 400, "number_out_of_range", logretention=0)
    await seller.fails("updatesettings", 400, "number_out_of_range", logretention=3651)


async def test_the_sweep_deletes_rows_past_each_applications_retention(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs, "PURGE_BATCH", 2)  # several batches per table
    other_seller = await create_seller(services, seller.http, owner="other", name="other")
    await seller.ok("updatesettings", logretention=2)
    short, default = client_of(seller), client_of(other_seller)
    for client in (short, default):
        for n in range(5):  # sessions of their own: the quota is not what this is about
            await client.init()
            await client.ok("log", message=f"old {n}")
            await client.ok("tamper", reason=f"old {n}")
    clock.advance(3 * DAY)
    await short.init()
    await short.ok("log", message="recent")
    deleted = await logs.purge_expired(services.db, clock.now())
    assert deleted == 10  # the first application's 5 old lines and 5 old reports
    assert [row["logdata"] for row in (await seller.ok("fetchalllogs"))["logs"]] == ["recent"]
    assert (await seller.ok("fetchtamperlogs"))["logs"] == []
    assert len((await other_seller.ok("fetchalllogs"))["logs"]) == 5
    clock.advance(28 * DAY)  # 31 days on: the other's old rows too, and "recent"
    assert await logs.purge_expired(services.db, clock.now()) == 11
    assert (await seller.ok("fetchalllogs"))["logs"] == []
    assert (await other_seller.ok("fetchalllogs"))["logs"] == []


async def an_old_line(seller: Seller, clock: MovableClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """One log line past its one day of retention, and the sweeper going round every 0.01 s."""
    await seller.ok("updatesettings", logretention=1)
    client = client_of(seller)
    await client.init()
    await client.ok("log", message="old")
    clock.advance(2 * DAY)
    monkeypatch.setattr(app_module, "PURGE_INTERVAL", 0.01)


async def lines_left_once_swept(services: Services) -> int:
    """The log lines stored once the sweeper deleted them all, or after five seconds of trying."""
    for _ in range(500):
        if await stored(services, "client_logs") == 0:
            break
        await asyncio.sleep(0.01)
    return await stored(services, "client_logs")


async def test_the_worker_sweeps_in_the_background(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    await an_old_line(seller, clock, monkeypatch)
    sweeper = asyncio.create_task(app_module.purge_expired_sessions(services))
    try:
        assert await lines_left_once_swept(services) == 0
    finally:
        sweeper.cancel()


async def test_a_worker_skips_the_sweep_whose_turn_another_took(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worker (or node) swept this second: this one's sweeper leaves the old line until
    the turn is due again (a second on, as the interval is under one), then sweeps it. The clock
    stands still meanwhile, so no amount of going round makes the turn due."""
    await an_old_line(seller, clock, monkeypatch)
    assert await turns.take(services.db, app_module.SWEEP_TURN, clock.now(), app_module.PURGE_INTERVAL)
    sweeper = asyncio.create_task(app_module.purge_expired_sessions(services))
    try:
        await asyncio.sleep(0.5)  # the sweeper goes round, refused the turn each time
        assert await stored(services, "client_logs") == 1
        clock.advance(1)
        assert await lines_left_once_swept(services) == 0
    finally:
        sweeper.cancel()
