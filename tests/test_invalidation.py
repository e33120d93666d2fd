"""Cached values are forgotten in every worker when they change: through a shared counter on
SQLite, LISTEN/NOTIFY on PostgreSQL, Redis pub/sub when Redis is configured; a worker that loses
its subscription reads through to the database until it has subscribed again."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from licensegate import invalidation
from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.invalidation import (
    FileCounter,
    Invalidation,
    LoginNotify,
    PostgresNotify,
    RedisPubSub,
    SharedCounter,
    open_invalidation,
)
from licensegate.services import Services
from licensegate.store.database import Database, open_database, postgres_dsn
from tests.conftest import make_settings
from tests.helpers import Seller

pytestmark = pytest.mark.anyio
REDIS_URL = "redis://127.0.0.1:6379/0"
POLL = 5.0  # seconds a test waits at most for an announcement to arrive


async def eventually(condition: Callable[[], bool]) -> None:
    """A short bounded poll: announcements arrive over a connection, not instantly."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + POLL
    while not condition():
        assert loop.time() < deadline, "not announced in time"
        await asyncio.sleep(0.005)


class Heard:
    """What a registered cache was told to forget."""

    def __init__(self, bus: Invalidation) -> None:
        self.keys: list[int | None] = []
        bus.register("things", self.keys.append)


async def test_a_shared_counter_tells_every_worker_of_the_machine(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite.generation"
    first, second = FileCounter(path), FileCounter(path)
    await first.start()
    await second.start()
    try:
        heard_first, heard_second = Heard(first), Heard(second)
        assert first.trusted()
        assert second.trusted()
        await first.changed("things", 7)
        assert heard_first.keys == [7]  # the changing worker forgets that key at once
        assert heard_second.keys == []
        assert second.trusted()  # the next look at the counter: everything is forgotten
        assert heard_second.keys == [None]
        assert second.trusted()
        assert heard_second.keys == [None]  # only once per change
    finally:
        await first.close()
        await second.close()


async def test_a_counter_that_cannot_be_made_trusts_nothing(tmp_path: Path) -> None:
    counter = FileCounter(tmp_path / "missing-folder" / "db.generation")
    await counter.start()
    heard = Heard(counter)
    assert not counter.trusted()
    await counter.changed("things", 1)
    assert heard.keys == [1]
    await counter.close()


@pytest.fixture
async def postgres(postgres_test_url: str) -> AsyncIterator[Database]:
    db = await open_database(postgres_test_url, pool_size=2)
    try:
        yield db
    finally:
        await db.close()


@asynccontextmanager
async def started(*buses: Invalidation) -> AsyncIterator[None]:
    """The buses started and subscribed, closed afterwards."""
    for bus in buses:
        await bus.start()
    try:
        for bus in buses:
            assert bus.trusted()
        yield
    finally:
        for bus in buses:
            await bus.close()


async def test_postgresql_notify_reaches_another_listener(postgres: Database, postgres_test_url: str) -> None:
    dsn = postgres_dsn(postgres_test_url)
    first, second = PostgresNotify(dsn, postgres, 5.0), PostgresNotify(dsn, postgres, 5.0)
    async with started(first, second):
        heard = Heard(second)
        await first.changed("things", 42)
        await eventually(lambda: 42 in heard.keys)


async def test_a_lost_listen_connection_reads_through_until_it_listens_again(
    postgres: Database, postgres_test_url: str
) -> None:
    bus = PostgresNotify(postgres_dsn(postgres_test_url), postgres, 5.0)
    await bus.start()
    try:
        heard = Heard(bus)
        await postgres.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
        )
        await eventually(lambda: not bus.trusted())
        assert None in heard.keys  # everything was forgotten
        await eventually(bus.trusted)  # subscribed again (within a second or so)
        other = PostgresNotify(postgres_dsn(postgres_test_url), postgres, 5.0)
        await other.changed("things", 5)
        await eventually(lambda: 5 in heard.keys)
    finally:
        await bus.close()


async def test_redis_pubsub_reaches_another_subscriber() -> None:
    prefix = f"t{secrets.token_hex(4)}"
    first, second = RedisPubSub(REDIS_URL, prefix, 1.0), RedisPubSub(REDIS_URL, prefix, 1.0)
    async with started(first, second):
        heard = Heard(second)
        await first.changed("things", 9)
        await eventually(lambda: 9 in heard.keys)
        other_prefix = RedisPubSub(REDIS_URL, prefix + "x", 1.0)
        await other_prefix.changed("things", 10)  # another deployment sharing the Redis
        await first.changed("things", 11)
        await eventually(lambda: 11 in heard.keys)
        assert 10 not in heard.keys
        await other_prefix.close()


async def test_an_unreachable_redis_trusts_nothing_and_still_serves(tmp_path: Path) -> None:
    bus = open_invalidation(
        "postgresql://unused/db",
        await open_database(f"sqlite:///{tmp_path / 'x.db'}"),
        redis_url="redis://127.0.0.1:1/0",
        redis_prefix="t",
        redis_timeout=0.2,
        pg_timeout=1.0,
    )
    await bus.start()
    try:
        heard = Heard(bus)
        assert not bus.trusted()
        await bus.changed("things", 3)  # logged, not raised
        assert 3 in heard.keys
    finally:
        await bus.close()


async def test_a_custom_message_changed_through_one_worker_is_used_by_another_at_once(
    db_url: str, tmp_path: Path, seller: Seller, services: Services
) -> None:
    """Two workers' services over one database: the second has the old text cached, and uses the
    new one on its next call after the first changed it."""
    settings: Settings = make_settings(db_url, tmp_path / "data")
    other = await Services.open(settings, clock=MovableClock())
    try:
        assert other.invalidation.trusted()
        assert await other.messages.get(other.db, seller.app_id) == {}  # cached now
        await seller.ok("setmessage", name="keynotfound", text="No such key, friend")
        wanted = {"keynotfound": "No such key, friend"}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + POLL
        while await other.messages.get(other.db, seller.app_id) != wanted:
            assert loop.time() < deadline, "the other worker kept the old text"
            await asyncio.sleep(0.005)
    finally:
        await other.close()


# --- notify mode's trust in held sessions (domain/recheck.py) --------------------------------------


def _subscribed_login_notify(tmp_path: Path) -> LoginNotify:
    """A LoginNotify that believes it is subscribed (no connection: the announcements are fed
    to `heard` by hand)."""
    writes = SharedCounter(tmp_path / "login-writes.counter")
    assert writes.open()
    notify = LoginNotify("postgresql://unused", 1.0, writes)
    notify._confirmed()
    return notify


def test_an_entry_is_trusted_until_something_it_depends_on_is_heard_of(tmp_path: Path) -> None:
    notify = _subscribed_login_notify(tmp_path)
    try:
        heard, writes = notify.stamp()
        assert notify.unchanged(heard, writes, 1, 10, "s1")
        notify.heard("u11")  # another user
        notify.heard("a2")  # another application
        notify.heard("sother")
        assert notify.unchanged(heard, writes, 1, 10, "s1")
        for payload, (app_id, user_id, session_id) in [
            ("a1", (1, 99, "x")),
            ("u10", (99, 10, "x")),
            ("ss1", (99, 99, "s1")),
        ]:
            notify.heard(payload)
            assert not notify.unchanged(heard, writes, app_id, user_id, session_id), payload
            again, _ = notify.stamp()  # read again after hearing it: trusted from there
            assert notify.unchanged(again, writes, app_id, user_id, session_id)
        later, _ = notify.stamp()
        for payload in ("*", "a", "unknown", "uNaN"):  # anything not understood: everything
            notify.heard(payload)
            assert not notify.unchanged(later, writes, 5, 50, "s5"), payload
            later, _ = notify.stamp()
    finally:
        notify.writes.close()


def test_a_write_committed_on_this_machine_trusts_nothing_read_before_it(tmp_path: Path) -> None:
    notify = _subscribed_login_notify(tmp_path)
    other_worker = SharedCounter(notify.writes.path)
    assert other_worker.open()
    try:
        heard, writes = notify.stamp()
        other_worker.increment()
        assert not notify.unchanged(heard, writes, 1, 10, "s1")
        assert notify.unchanged(*notify.stamp(), 1, 10, "s1")
    finally:
        other_worker.close()
        notify.writes.close()


def test_nothing_is_trusted_unsubscribed_nor_after_subscribing_again(tmp_path: Path) -> None:
    notify = _subscribed_login_notify(tmp_path)
    try:
        heard, writes = notify.stamp()
        notify._subscribed.clear()  # what a lost connection does
        assert not notify.unchanged(heard, writes, 1, 10, "s1")
        during = notify.stamp()
        notify._confirmed()  # subscribed again: whatever changed meanwhile was not heard
        assert not notify.unchanged(heard, writes, 1, 10, "s1")
        assert not notify.unchanged(*during, 1, 10, "s1")
        assert notify.unchanged(*notify.stamp(), 1, 10, "s1")
    finally:
        notify.writes.close()


def test_no_counter_no_trust(tmp_path: Path) -> None:
    notify = LoginNotify("postgresql://unused", 1.0, SharedCounter(tmp_path / "missing" / "counter"))
    notify._confirmed()
    assert not notify.writes.open()
    assert not notify.unchanged(*notify.stamp(), 1, 10, "s1")


def test_what_is_remembered_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(invalidation, "MAX_HEARD", 10)
    notify = _subscribed_login_notify(tmp_path)
    try:
        heard, writes = notify.stamp()
        for user_id in range(100, 111):  # one more than remembered: everything has changed
            notify.heard(f"u{user_id}")
        assert not notify.unchanged(heard, writes, 1, 10, "s1")
        assert len(notify._apps) + len(notify._users) + len(notify._sessions) <= 10
    finally:
        notify.writes.close()


async def test_a_change_is_heard_by_a_login_listener(
    postgres: Database, postgres_test_url: str, tmp_path: Path
) -> None:
    writes = SharedCounter(tmp_path / "login-writes.counter")
    notify = LoginNotify(postgres_dsn(postgres_test_url), 5.0, writes)
    await notify.start()
    try:
        assert notify.trusted()
        heard, counted = notify.stamp()
        await postgres.execute("SELECT pg_notify('licensegate_login', 'u7')")
        await eventually(lambda: not notify.unchanged(heard, counted, 1, 7, "s1"))
        assert notify.unchanged(heard, counted, 1, 8, "s1")
    finally:
        await notify.close()
