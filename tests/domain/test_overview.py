"""The overview's figures (domain/overview.py over store/overview.py), on SQLite and PostgreSQL:
logins counted by outcome in memory and written by a flush, new users and redeemed keys counted
as they are written, keys and users by status, expiries to come, users online, tamper reports."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from licensegate.app import write_counts
from licensegate.clock import MovableClock
from licensegate.domain import apps, overview
from licensegate.domain.overview import Chart, LoginTally
from licensegate.services import Services
from licensegate.store import overview as store
from licensegate.store.database import Database
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
DAY = 86400


def today_of(chart: Chart) -> dict[str, int]:
    """Each series' value on the last category (today, for the per-day charts)."""
    return {s.label: s.values[-1] for s in chart.series}


def by_label(chart: Chart) -> dict[str, int]:
    [series] = chart.series
    return dict(zip(chart.labels, series.values, strict=True))


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def _key(seller: Seller, days: int = 30) -> str:
    key: str = (await seller.ok("add", expiry=days))["key"]
    return key


async def test_logins_are_counted_by_outcome_in_memory_and_written_by_a_flush(
    services: Services, seller: Seller, app: Client
) -> None:
    key, banned = await _key(seller), await _key(seller)
    await seller.ok("ban", key=banned, reason="chargeback")
    await app.ok("license", key=key, hwid=HWID)
    await app.fresh().init()
    again = app.fresh()
    await again.init()
    await again.ok("license", key=key, hwid=HWID)
    other = app.fresh()
    await other.init()
    await other.fails("license", 403, "hwid_mismatch", key=key, hwid="another-machine-0001")
    await other.fails("license", 403, "key_not_found", key="NOPE-NOPE")
    await other.fails("license", 403, "key_banned", key=banned)
    await other.fails("login", 403, "invalid_credentials", username="nobody", **{"pass": "wrong"})
    db, now = services.db, services.clock.now()
    before, _ = await overview.logins_per_day(db, seller.app_id, now)
    assert before.total == 0  # counted in memory only
    assert await services.logins.flush(db) == 6
    assert await services.logins.flush(db) == 0
    logins, growth = await overview.logins_per_day(db, seller.app_id, now)
    assert today_of(logins) == {
        "Success": 2,
        "Wrong password or unknown user": 1,
        "Unknown key": 1,
        "HWID mismatch": 1,
        "Banned": 1,
    }
    assert len(logins.labels) == overview.DAYS
    assert today_of(growth) == {"New users": 1, "Keys redeemed": 1}
    # Counts add up across flushes, and other days stay apart.
    services.clock.advance(DAY)  # type: ignore[attr-defined]
    later = app.fresh()
    await later.init()
    await later.ok("license", key=key, hwid=HWID)
    await services.logins.flush(db)
    logins, _ = await overview.logins_per_day(db, seller.app_id, services.clock.now())
    success = next(s for s in logins.series if s.label == "Success")
    assert success.values[-2:] == [2, 1]


async def test_a_failed_flush_keeps_the_counts_and_a_deleted_application_is_skipped(
    services: Services, seller: Seller
) -> None:
    tally, now = LoginTally(), services.clock.now()
    tally.count(seller.app_id, now, "success")
    tally.count(seller.app_id + 1000, now, "success")  # no such application (any more)

    class Broken:
        def transaction(self) -> Any:
            raise ConnectionError("database gone")

    with pytest.raises(ConnectionError):
        await tally.flush(Broken())  # type: ignore[arg-type]
    assert sum(tally.pending.values()) == 2
    assert await tally.flush(services.db) == 2
    rows = await services.db.fetch_all("SELECT app_id, kind, outcome, count FROM daily_counts")
    assert rows == [{"app_id": seller.app_id, "kind": "login", "outcome": "success", "count": 1}]


async def test_new_users_and_redeemed_keys_are_counted_as_they_are_written(
    services: Services, seller: Seller, app: Client
) -> None:
    await seller.ok("adduser", user="alice", sub="default", expiry=10, **{"pass": "secret-pass"})
    key = await _key(seller)
    await app.ok("register", username="bob", key=key, hwid=HWID, **{"pass": "secret-pass"})
    _, growth = await overview.logins_per_day(services.db, seller.app_id, services.clock.now())
    assert today_of(growth) == {"New users": 2, "Keys redeemed": 1}


async def test_concurrent_first_uses_count_into_slots_that_add_up(
    services: Services, seller: Seller, app: Client
) -> None:
    """A counter is `store.SLOTS` rows (migration 0061): on PostgreSQL each new user adds to one
    picked at random, so concurrent first uses do not queue on one row's lock; the overview adds
    them up. SQLite writes one transaction at a time: slot 0 alone."""
    first_uses = 24
    for key in [await _key(seller) for _ in range(first_uses)]:
        client = app.fresh()
        await client.init()
        await client.ok("license", key=key, hwid=HWID)
    db, now = services.db, services.clock.now()
    _, growth = await overview.logins_per_day(db, seller.app_id, now)
    assert today_of(growth) == {"New users": first_uses, "Keys redeemed": first_uses}
    assert await store.counted_today(db, seller.app_id, now // DAY, "user") == first_uses
    slots = await db.fetch_all(
        "SELECT kind, slot, count FROM daily_counts WHERE app_id = ? AND kind IN ('user', 'key')",
        seller.app_id,
    )
    assert all(0 <= row["slot"] < store.SLOTS for row in slots)
    assert sum(row["count"] for row in slots) == 2 * first_uses
    used = {row["slot"] for row in slots}
    # 24 draws of 64 slots all alike: about 1 in 10^41.
    assert used == {0} if db.dialect == "sqlite" else len(used) > 1


async def test_keys_and_users_by_status(services: Services, seller: Seller, app: Client) -> None:
    keys = [await _key(seller) for _ in range(5)]
    await app.ok("license", key=keys[0], hwid=HWID)
    second = app.fresh()
    await second.init()
    await second.ok("license", key=keys[1], hwid=HWID)
    await seller.ok("ban", key=keys[1], reason="resold")  # a used key, banned
    await seller.ok("banuser", user=keys[1], reason="resold")  # and its user (named by the key)
    await seller.ok("ban", key=keys[2], reason="leaked")  # an unused key, banned
    await seller.ok("adduser", user="lapsed", sub="default", expiry=1, **{"pass": "secret-pass"})
    db = services.db
    assert by_label(await overview.keys_by_status(db, seller.app_id)) == {
        "Not used": 2,
        "Used": 1,
        "Banned": 2,
    }
    services.clock.advance(2 * DAY)  # type: ignore[attr-defined]
    users = by_label(await overview.users_by_status(db, seller.app_id, services.clock.now()))
    assert users == {"With time left": 1, "No time left": 1, "Banned": 1}


async def test_expiries_per_day_and_per_month(
    services: Services, seller: Seller, clock: MovableClock
) -> None:
    clock.set(1_798_761_600 + 12 * 3600)  # 2027-01-01 12:00 UTC
    for user, days in (("a", 1), ("b", 1), ("c", 20), ("d", 45), ("e", 400)):
        await seller.ok("adduser", user=user, sub="default", expiry=days, **{"pass": "secret-pass"})
    soon, year = await overview.expiries(services.db, seller.app_id, clock.now())
    per_day = soon.series[0].values
    assert (per_day[1], per_day[20], sum(per_day)) == (2, 1, 3)
    assert soon.labels[0] == "Jan 01"
    months = by_label(year)
    assert list(months)[:3] == ["Jan 2027", "Feb 2027", "Mar 2027"]
    assert (months["Jan 2027"], months["Feb 2027"]) == (3, 1)
    assert sum(months.values()) == 4  # 400 days is beyond the twelve months


async def test_online_now_and_tamper_reports(services: Services, seller: Seller, app: Client) -> None:
    key = await _key(seller)
    await app.ok("license", key=key, hwid=HWID)
    second = app.fresh()
    await second.init()
    await second.ok("license", key=key, hwid=HWID)
    await second.fresh().init()  # not logged in: not online
    await app.ok("tamper", reason="debugger attached")
    await app.ok("tamper", reason="patched")
    db, now = services.db, services.clock.now()
    assert await overview.online(db, seller.app_id, now) == overview.Online(
        users=1, sessions=2, machines=1, credits_spent=0
    )
    tamper = await overview.tamper_per_day(db, seller.app_id, now)
    assert (tamper.series[0].values[-1], tamper.total) == (2, 2)


async def test_online_now_is_counted_up_to_a_cap(services: Services, seller: Seller, app: Client) -> None:
    """Past the cap the figures say "more than": the sessions counted stop at the cap, and the
    users are those among the sessions counted."""
    key = await _key(seller)
    await app.ok("license", key=key, hwid=HWID)
    for _ in range(2):
        other = app.fresh()
        await other.init()
        await other.ok("license", key=key, hwid=HWID)
    db, now = services.db, services.clock.now()
    assert await overview.online(db, seller.app_id, now, cap=3) == overview.Online(
        users=1, sessions=3, machines=1
    )
    assert await overview.online(db, seller.app_id, now, cap=2) == overview.Online(
        users=1, sessions=2, more=True, machines=1
    )


async def test_counters_of_an_application_go_with_it(services: Services, seller: Seller) -> None:
    db: Database = services.db
    await seller.ok("adduser", user="alice", sub="default", expiry=10, **{"pass": "secret-pass"})
    assert await db.fetch_value("SELECT COUNT(*) FROM daily_counts") == 1
    await apps.delete(db, services.files, seller.app_id, seller.name)
    assert await db.fetch_value("SELECT COUNT(*) FROM daily_counts") == 0


def test_every_login_refusal_has_a_label_or_is_other() -> None:
    assert overview.outcome_label("success") == "Success"
    assert overview.outcome_label("hwid_too_short") == "HWID missing or too short"
    assert overview.outcome_label("no_active_subscription") == "Expired"
    assert overview.outcome_label("something_new") == overview.OTHER


# --- the status counts of large applications: snapshots refreshed in the background ------------

EVERY = 300  # seconds between refreshes, in these tests


async def _direct(services: Services, app_id: int) -> overview.StatusCounts:
    return await overview.count_statuses(services.db, app_id, services.clock.now())


def _figures(counts: overview.StatusCounts) -> tuple[object, ...]:
    return counts.keys, counts.users, counts.expiring, counts.size


async def test_a_small_application_is_counted_on_each_view_and_keeps_no_snapshot(
    services: Services, seller: Seller, app: Client
) -> None:
    db = services.db
    await _key(seller)
    await seller.ok("adduser", user="alice", sub="default", expiry=10, **{"pass": "secret-pass"})
    counts = await overview.statuses(db, seller.app_id, services.clock.now(), inline_below=50)
    assert not counts.snapshot
    assert (counts.keys, counts.users, counts.size) == ((1, 0, 0), (1, 0, 0), 2)
    assert await db.fetch_value("SELECT COUNT(*) FROM overview_snapshots") == 0
    await _key(seller)
    again = await overview.statuses(db, seller.app_id, services.clock.now(), inline_below=50)
    assert again.keys == (2, 0, 0)  # exact at once


async def test_a_large_application_shows_its_snapshot_until_the_background_counts_again(
    services: Services, seller: Seller, app: Client, clock: MovableClock
) -> None:
    db, app_id = services.db, seller.app_id
    keys = [await _key(seller) for _ in range(3)]
    await seller.ok("adduser", user="alice", sub="default", expiry=10, **{"pass": "secret-pass"})
    first_at = clock.now()
    first = await overview.statuses(db, app_id, first_at, inline_below=3)
    assert not first.snapshot  # the first view counts, and keeps the result
    assert _figures(first) == _figures(await _direct(services, app_id))
    # Changes: a key redeemed, one banned, a user banned, another user expiring in 40 days.
    await app.ok("license", key=keys[0], hwid=HWID)
    await seller.ok("ban", key=keys[1], reason="leaked")
    await seller.ok("banuser", user="alice", reason="chargeback")
    await seller.ok("adduser", user="bob", sub="default", expiry=40, **{"pass": "secret-pass"})
    clock.advance(60)
    shown = await overview.statuses(db, app_id, clock.now(), inline_below=3)
    assert shown.snapshot
    assert shown.at == first_at
    assert _figures(shown) == _figures(first)
    assert "Counted at" in shown.charts()[0].description
    # Not yet due: nothing is counted again.
    assert await overview.refresh_due(db, clock.now(), every=EVERY, inline_below=3) == 0
    clock.advance(EVERY)
    assert await overview.refresh_due(db, clock.now(), every=EVERY, inline_below=3) == 1
    fresh = await overview.statuses(db, app_id, clock.now(), inline_below=3)
    assert fresh.snapshot
    assert fresh.at == clock.now()
    direct = await _direct(services, app_id)
    assert _figures(fresh) == _figures(direct)
    assert (fresh.keys, fresh.users) == ((1, 1, 1), (2, 0, 1))
    # Another worker's refresh at the same moment finds it done.
    assert await overview.refresh_due(db, clock.now(), every=EVERY, inline_below=3) == 0


async def test_only_overviews_looked_at_lately_are_refreshed_and_one_worker_takes_each(
    services: Services, seller: Seller, clock: MovableClock
) -> None:
    db, app_id = services.db, seller.app_id
    for _ in range(3):
        await _key(seller)
    await overview.statuses(db, app_id, clock.now(), inline_below=3)
    clock.advance(overview.WATCHED + 1)
    assert await overview.refresh_due(db, clock.now(), every=EVERY, inline_below=3) == 0  # unwatched
    await _key(seller)
    stale = await overview.statuses(db, app_id, clock.now(), inline_below=3)  # noted as viewed
    assert stale.snapshot
    assert stale.keys == (3, 0, 0)
    now = clock.now()
    assert await overview.refresh_due(db, now, every=EVERY, inline_below=3) == 1
    assert (await overview.statuses(db, app_id, now, inline_below=3)).keys == (4, 0, 0)
    # A claim is taken once: a second worker that listed the same application skips it.
    clock.advance(EVERY)
    older = clock.now() - EVERY
    assert await store.claim(db, app_id, clock.now(), older)
    assert not await store.claim(db, app_id, clock.now(), older)


async def test_an_application_that_shrinks_is_counted_on_each_view_again(
    services: Services, seller: Seller, clock: MovableClock
) -> None:
    db, app_id = services.db, seller.app_id
    keys = [await _key(seller) for _ in range(3)]
    await overview.statuses(db, app_id, clock.now(), inline_below=3)
    await seller.ok("del", key=keys[0])
    clock.advance(EVERY)
    await overview.statuses(db, app_id, clock.now(), inline_below=3)  # watched
    assert await overview.refresh_due(db, clock.now(), every=EVERY, inline_below=3) == 1
    assert await db.fetch_value("SELECT COUNT(*) FROM overview_snapshots") == 0
    await seller.ok("del", key=keys[1])
    counts = await overview.statuses(db, app_id, clock.now(), inline_below=3)
    assert not counts.snapshot
    assert counts.keys == (1, 0, 0)


async def test_a_snapshot_goes_with_its_application(services: Services, seller: Seller) -> None:
    db = services.db
    await _key(seller)
    await overview.statuses(db, seller.app_id, services.clock.now(), inline_below=1)
    assert await db.fetch_value("SELECT COUNT(*) FROM overview_snapshots") == 1
    await apps.delete(db, services.files, seller.app_id, seller.name)
    assert await db.fetch_value("SELECT COUNT(*) FROM overview_snapshots") == 0
    # A refresh of an application deleted meanwhile writes nothing.
    await store.save_snapshot(db, seller.app_id, 1, 5, "{}")
    assert await db.fetch_value("SELECT COUNT(*) FROM overview_snapshots") == 0


async def test_a_flush_under_way_when_the_worker_stops_is_written_once(
    services: Services, seller: Seller
) -> None:
    """The periodic flush is cancelled at shutdown; cancelled after its COMMIT was sent (the
    database wrote the counts, its answer had not come back), it must not put them back for the
    last flush to write again."""
    db, tally = services.db, LoginTally()
    tally.count(seller.app_id, services.clock.now(), "success")
    committed, answered = asyncio.Event(), asyncio.Event()

    class AnswerOnTheWay:
        @contextlib.asynccontextmanager
        async def transaction(self) -> AsyncIterator[Any]:
            async with db.transaction() as tx:
                yield tx
            committed.set()  # written; its answer is still on the way
            await answered.wait()

    worker = SimpleNamespace(
        settings=services.settings.with_overrides(count_flush_seconds=0), logins=tally, db=AnswerOnTheWay()
    )
    periodic = asyncio.create_task(write_counts(worker))  # type: ignore[arg-type]
    await asyncio.wait_for(committed.wait(), 10)
    periodic.cancel()  # the worker stops
    last = asyncio.create_task(tally.flush(db))  # Services.close's last flush
    await asyncio.sleep(0)
    answered.set()
    await asyncio.gather(periodic, return_exceptions=True)
    await last
    rows = await db.fetch_all("SELECT SUM(count) AS n FROM daily_counts WHERE kind = 'login'")
    assert rows == [{"n": 1}]
    assert not tally.pending
