"""What a worker holds of a logged-in session (domain/recheck.py) never outlives a change that must
refuse a login: for every such change, made through the seller API after the cache is warm (a
License Login and two re-checks, and two Session Checks), the very next re-check and check answer
exactly what they answer with nothing held, on PostgreSQL whether the worker trusts what it holds
on the database's announcements (notify mode, the default there) or reads the versions at every
call (query mode). Also: a change by hand-written SQL on another connection (at once in query
mode, once announced in notify mode), a second node over the same database, a lost subscription,
a rolled-back change, a change racing a load, and the bounds (size, BACKSTOP, not-yet-validated
sessions)."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate import ids, invalidation
from licensegate.app import build_app
from licensegate.clock import MovableClock
from licensegate.domain.recheck import KEEP_SPREAD, Rechecks
from licensegate.invalidation import LOGIN_CHANNEL, LoginNotify
from licensegate.keyring import KEY_FILE_NAME
from licensegate.services import Services
from licensegate.store import blacklists as blacklists_store
from licensegate.store import logins as logins_store
from licensegate.store import loginversions
from licensegate.store import sessions as sessions_store
from licensegate.store.database import Database, Executor, open_database
from licensegate.store.logins import KeyUserRow
from licensegate.store.postgres import PinnedPostgres
from licensegate.store.sessions import SessionAppRow
from tests.api.test_client_license import HWID, OTHER_HWID, new_key
from tests.conftest import make_settings
from tests.helpers import Client, Seller, client_of, create_seller

pytestmark = pytest.mark.anyio

CLIENT_IP = "203.0.113.7"  # the address the test transport's requests come from


@dataclass
class World:
    seller: Seller
    services: Services
    clock: MovableClock
    program: Client
    key: str
    holding: bool = True


Change = Callable[[World], Awaitable[None]]


async def _seller(world: World, type_: str, **params: object) -> None:
    await world.seller.ok(type_, **params)


async def _reset_and_move(world: World) -> None:
    """The HWID is reset and another device takes the user's only place."""
    await world.seller.ok("resetuser", user=world.key)
    other = world.program.fresh()
    await other.init()
    await other.ok("license", key=world.key, hwid=OTHER_HWID)


async def _logout(world: World) -> None:
    await world.program.ok("logout")


async def _expire(world: World) -> None:
    world.clock.advance(2 * 3600)  # the key's grant is for one hour; the session lives six


GONE = (403, "session_not_found")  # the change ended the session
PASSES = (200, None)
CHANGES: dict[str, tuple[Change, tuple[int, str | None], tuple[int, str | None]]] = {
    # name: (the change, the re-check's answer, check's answer) as (status, error)
    "ban user": (lambda w: _seller(w, "banuser", user=w.key), GONE, GONE),
    "ban key": (lambda w: _seller(w, "ban", key=w.key, reason="chargeback"), GONE, GONE),
    "pause user": (lambda w: _seller(w, "pauseuser", username=w.key), GONE, GONE),
    "pause subscription": (lambda w: _seller(w, "pausesub", subscription="default"), GONE, GONE),
    "pause application": (lambda w: _seller(w, "pauseapp"), GONE, GONE),
    "disable application": (
        lambda w: _seller(w, "updatesettings", enabled=0),
        (403, "app_disabled"),
        (403, "app_disabled"),
    ),
    "delete user": (lambda w: _seller(w, "deluser", user=w.key), GONE, GONE),
    "delete key": (lambda w: _seller(w, "del", key=w.key), (403, "key_not_found"), PASSES),
    "reset HWID, another device": (_reset_and_move, GONE, GONE),
    "subtract the grant's time": (
        lambda w: _seller(w, "subtract", user=w.key, sub="default", seconds=7200),
        GONE,
        GONE,
    ),
    "delete the user's subscription": (lambda w: _seller(w, "delsub", user=w.key, sub="default"), GONE, GONE),
    "the grant expires": (_expire, (403, "no_active_subscription"), PASSES),
    "blacklist the HWID": (lambda w: _seller(w, "black", hwid=HWID), (403, "blacklisted"), PASSES),
    "blacklist the address": (lambda w: _seller(w, "black", ip=CLIENT_IP), (403, "blacklisted"), PASSES),
    "blacklist the address's range": (
        lambda w: _seller(w, "black", ip="203.0.113.0/24"),
        (403, "blacklisted"),
        PASSES,
    ),
    "end the session": (lambda w: _seller(w, "kill", sessid=w.program.sessionid), GONE, GONE),
    "end every session": (lambda w: _seller(w, "killall"), GONE, GONE),
    "logout": (_logout, GONE, GONE),
    "delete the application's subscription": (lambda w: _seller(w, "delappsub", name="default"), GONE, GONE),
    "minimum HWID length": (
        lambda w: _seller(w, "updatesettings", minhwid=len(HWID) + 1),
        (400, "hwid_too_short"),
        PASSES,
    ),
}


async def warm(world: World) -> None:
    """A License Login, then re-checks and checks until the session and the login are held."""
    for _ in range(3):
        await world.program.ok("license", key=world.key, hwid=HWID)
    for _ in range(2):
        await world.program.ok("check")
    held = world.services.rechecks.peek(ids.digest(world.program.sessionid))
    if world.holding:
        assert held is not None
        assert held.login is not None
    else:
        assert held is None


async def outcome(program: Client, type_: str, **params: object) -> tuple[int, str | None]:
    response = await program.call(type_, **params)
    return response.status_code, response.json().get("error")


@pytest.fixture(
    params=[
        "held",
        "held, query mode",
        pytest.param("held, nothing announced", marks=pytest.mark.postgres_only),
        "not held",
    ]
)
def holding(request: pytest.FixtureRequest, services: Services, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Held as the worker holds by default (PostgreSQL: notify mode), held reading the versions
    at every call, held in notify mode with every announcement lost (only this machine's counter
    of its committed changes tells the worker), or not held."""
    if request.param == "not held":
        services.rechecks = Rechecks(0)
    elif request.param == "held, query mode":
        services.rechecks = query_mode(services)
    elif request.param == "held, nothing announced":
        assert services.login_notify is not None  # PostgreSQL only (postgres_only)
        monkeypatch.setattr(services.login_notify, "heard", lambda _payload: None)
    held: bool = request.param != "not held"
    return held


def query_mode(services: Services) -> Rechecks[Any]:
    """What `LICENSEGATE_RECHECK_CONFIRM=query` makes: the versions read at every call."""
    return Rechecks(services.settings.recheck_sessions)


@pytest.fixture
def notify(services: Services) -> LoginNotify:
    """The worker's login announcements (PostgreSQL's notify mode, the default there)."""
    assert services.login_notify is not None  # PostgreSQL only (tests/conftest.py)
    assert services.login_notify.trusted()
    return services.login_notify


async def announced(services: Services, notify: LoginNotify, deadline: float = 30.0) -> None:
    """Wait until `notify` has heard every announcement committed so far: PostgreSQL delivers
    them in commit order, so those committed before a marker arrive before it."""
    marker = f"marker-{secrets.token_hex(8)}"
    await services.db.execute("SELECT pg_notify(?, ?)", LOGIN_CHANNEL, f"s{marker}")
    give_up = time.monotonic() + deadline
    while notify.session_changed_at(marker) == 0:
        assert time.monotonic() < give_up, "the marker was not heard"
        await asyncio.sleep(0.01)


async def world_of(seller: Seller, services: Services, clock: MovableClock, holding: bool = True) -> World:
    """A program logged in with a one-hour key, its session and login held (when held at all)."""
    program = client_of(seller)
    await program.init()
    world = World(seller, services, clock, program, await new_key(seller, days=1 / 24), holding)
    await warm(world)
    return world


@pytest.mark.parametrize("change", list(CHANGES))
async def test_no_held_session_survives_a_change_that_refuses_a_login(
    change: str, holding: bool, seller: Seller, services: Services, clock: MovableClock
) -> None:
    """Held or not (`holding`), the same answers: what the change decides, at once."""
    world = await world_of(seller, services, clock, holding)
    make, recheck, check = CHANGES[change]
    await make(world)
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == recheck
    assert await outcome(world.program, "check") == check
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == recheck


# --- changes made by hand, on another connection --------------------------------------------------

BY_HAND: dict[str, tuple[list[str], tuple[int, str | None], tuple[int, str | None]]] = {
    # name: (statements, the re-check's answer, check's answer); `?` is the user's id, or the
    # application's for the statements that name `app_id`, or the key for those on license_keys
    "ban": (["UPDATE users SET banned_reason = 'by hand' WHERE id = ?"], (403, "user_banned"), PASSES),
    "another device": (
        [
            "DELETE FROM user_hwids WHERE user_id = ?",
            f"INSERT INTO user_hwids (user_id, hwid, created_at) VALUES (?, '{OTHER_HWID}', 0)",
        ],
        (403, "hwid_mismatch"),
        PASSES,
    ),
    "grant ended": (
        ["UPDATE user_subscriptions SET expires_at = 1 WHERE user_id = ?"],
        (403, "no_active_subscription"),
        PASSES,
    ),
    "subscription paused": (
        ["UPDATE subscriptions SET paused_at = 1 WHERE app_id = ?"],
        (403, "subscription_paused"),
        PASSES,
    ),
    "application paused": (
        ["UPDATE apps SET paused_at = 1 WHERE id = ?"],
        (403, "app_paused"),
        (403, "app_paused"),
    ),
    "application disabled": (
        ["UPDATE apps SET enabled = 0 WHERE id = ?"],
        (403, "app_disabled"),
        (403, "app_disabled"),
    ),
    "blacklisted": (
        [f"INSERT INTO blacklist (app_id, kind, value, created_at) VALUES (?, 'hwid', '{HWID}', 0)"],
        (403, "blacklisted"),
        PASSES,
    ),
    "key banned": (
        ["UPDATE license_keys SET banned_reason = 'by hand' WHERE key = ?"],
        (403, "key_banned"),
        PASSES,
    ),
    "key deleted": (["DELETE FROM license_keys WHERE key = ?"], (403, "key_not_found"), PASSES),
    "session logged out": (
        ["UPDATE sessions SET validated = 0 WHERE user_id = ?"],
        PASSES,  # a License Login logs it in again
        (403, "session_not_validated"),
    ),
    "session expired": (
        ["UPDATE sessions SET expires_at = 1 WHERE user_id = ?"],
        (403, "session_expired"),
        (403, "session_expired"),
    ),
    "session deleted": (["DELETE FROM sessions WHERE user_id = ?"], GONE, GONE),
    "user deleted": (["DELETE FROM users WHERE id = ?"], GONE, GONE),
}


def _argument(statement: str, world: World, user_id: int) -> object:
    if "license_keys" in statement:
        return world.key
    if "app_id = ?" in statement or "apps SET" in statement or "blacklist" in statement:
        return world.seller.app_id
    return user_id


async def _by_hand(change: str, world: World, services: Services) -> None:
    user_id = await services.db.fetch_value("SELECT id FROM users WHERE username = ?", world.key)
    statements, _recheck, _check = BY_HAND[change]
    other = await open_database(services.settings.database_url)
    try:
        async with other.transaction() as tx:
            for statement in statements:
                await tx.execute(statement, _argument(statement, world, user_id))
    finally:
        await other.close()


@pytest.mark.parametrize("change", list(BY_HAND))
async def test_a_change_by_hand_on_another_connection_is_seen_at_once(
    change: str, seller: Seller, services: Services, clock: MovableClock
) -> None:
    """The triggers bump the versions whatever writes: here plain SQL over a connection of its
    own, which reading the versions at every call sees at once."""
    services.rechecks = query_mode(services)
    world = await world_of(seller, services, clock)
    await _by_hand(change, world, services)
    _statements, recheck, check = BY_HAND[change]
    assert await outcome(world.program, "check") == check
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == recheck


@pytest.mark.parametrize("change", list(BY_HAND))
async def test_a_change_by_hand_is_seen_once_announced(
    change: str, seller: Seller, services: Services, clock: MovableClock, notify: LoginNotify
) -> None:
    """Notify mode: SQL by hand on another connection passes by no adapter of this machine; the
    database announces it, and once that is heard (here: a marker committed after it) the very
    next call answers as with nothing held."""
    world = await world_of(seller, services, clock)
    await _by_hand(change, world, services)
    await announced(services, notify)
    _statements, recheck, check = BY_HAND[change]
    assert await outcome(world.program, "check") == check
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == recheck


async def test_a_ban_by_hand_is_refused_within_the_bound(
    seller: Seller, services: Services, clock: MovableClock, notify: LoginNotify
) -> None:
    """Notify mode, without waiting for anything but the answers: a ban by hand is refused by a
    call made soon after (polled with a generous deadline; docs/design.md measures the bound)."""
    world = await world_of(seller, services, clock)
    await _by_hand("ban", world, services)
    deadline = time.monotonic() + 30
    while await outcome(world.program, "license", key=world.key, hwid=HWID) != (403, "user_banned"):
        assert time.monotonic() < deadline, "the ban was not seen within 30 s"
        await asyncio.sleep(0.005)
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == (403, "user_banned")


async def cut(services: Services, notify: LoginNotify, monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Cut the worker's listening connection (terminate its server process) and wait until the
    worker has noticed; it subscribes again only once the returned event is set."""
    monkeypatch.setattr(invalidation, "RETRY", 0.01)
    resubscribe = asyncio.Event()
    listen = notify._listen

    async def held_back() -> None:
        await resubscribe.wait()
        await listen()

    monkeypatch.setattr(notify, "_listen", held_back)
    await services.db.fetch_value("SELECT pg_terminate_backend(?)", notify.backend_pid)
    deadline = time.monotonic() + 30
    while notify.trusted():
        assert time.monotonic() < deadline, "the cut connection was not noticed"
        await asyncio.sleep(0.01)
    return resubscribe


async def resubscribed(notify: LoginNotify, resubscribe: asyncio.Event) -> None:
    resubscribe.set()
    deadline = time.monotonic() + 30
    while not notify.trusted():
        assert time.monotonic() < deadline, "not subscribed again"
        await asyncio.sleep(0.01)


async def test_nothing_is_trusted_while_the_subscription_is_lost(
    seller: Seller,
    services: Services,
    clock: MovableClock,
    notify: LoginNotify,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The listening connection is cut (its server process terminated): until it has subscribed
    again nothing is trusted, and a change made meanwhile, whose announcement nobody heard, is
    refused after the subscription is back (everything held is read again then)."""
    world = await world_of(seller, services, clock)
    resubscribe = await cut(services, notify, monkeypatch)
    await world.program.ok("license", key=world.key, hwid=HWID)  # read through: still admitted
    await _by_hand("ban", world, services)  # announced to nobody
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == (403, "user_banned")
    await world.program.ok("check")
    await resubscribed(notify, resubscribe)
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == (403, "user_banned")


async def test_a_change_unheard_while_unsubscribed_is_read_after_resubscribing(
    seller: Seller,
    services: Services,
    clock: MovableClock,
    notify: LoginNotify,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No call at all while the subscription is lost: the entry, confirmed before, is read again
    after the subscription is back, and refused."""
    world = await world_of(seller, services, clock)
    await announced(services, notify)  # nothing of the warm-up is left to hear
    await world.program.ok("check")  # confirmed again, after all of it
    resubscribe = await cut(services, notify, monkeypatch)
    await _by_hand("blacklisted", world, services)
    await resubscribed(notify, resubscribe)
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == (403, "blacklisted")


def _count_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the PostgreSQL adapter runs from now on."""
    ran: list[str] = []
    for name in ("fetch_one", "fetch_all", "fetch_value", "execute"):
        real = getattr(PinnedPostgres, name)

        async def counted(self: PinnedPostgres, sql: str, *args: object, _real: Any = real) -> Any:
            ran.append(sql)
            return await _real(self, sql, *args)

        monkeypatch.setattr(PinnedPostgres, name, counted)
    return ran


async def test_a_held_session_costs_no_statement_in_notify_mode(
    seller: Seller,
    services: Services,
    clock: MovableClock,
    notify: LoginNotify,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once the warm-up's own announcements are heard and one call has re-confirmed the entry,
    re-checks and checks run no statement at all; in query mode each runs exactly one."""
    world = await world_of(seller, services, clock)
    await announced(services, notify)
    await world.program.ok("check")  # re-confirms what the warm-up's writes made it doubt
    ran = _count_statements(monkeypatch)
    for _ in range(5):
        await world.program.ok("license", key=world.key, hwid=HWID)
        await world.program.ok("check")
    assert ran == []
    services.rechecks = query_mode(services)
    await warm(world)
    ran.clear()
    for _ in range(5):
        await world.program.ok("license", key=world.key, hwid=HWID)
        await world.program.ok("check")
    assert ran == [loginversions._OF_SESSION] * 10


async def _ban_then_roll_back(db: Database, key: str) -> None:
    async with db.transaction() as tx:
        await tx.execute("UPDATE users SET banned_reason = 'never' WHERE username = ?", key)
        raise RuntimeError("changed my mind")


async def test_a_rolled_back_change_refuses_nothing(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    world = await world_of(seller, services, clock)
    other = await open_database(services.settings.database_url)
    try:
        with pytest.raises(RuntimeError, match="changed my mind"):
            await _ban_then_roll_back(other, world.key)
    finally:
        await other.close()
    for _ in range(2):
        await world.program.ok("license", key=world.key, hwid=HWID)
        await world.program.ok("check")
    await seller.ok("black", hwid=HWID)  # and a real change still refuses at once
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == (403, "blacklisted")


# --- races: a change committed while an entry is being read ------------------------------------


def racing(confirm: str, services: Services) -> tuple[Rechecks[Any], Callable[[], Awaitable[None]]]:
    """An empty cache of the mode, and what to await once a racing change has committed: in
    notify mode, that it has been heard (before the entry is held, whose stamp came before the
    read: so it counts as heard after it)."""
    if confirm == "query":
        return Rechecks(10), _nothing_to_hear
    notify = services.login_notify
    assert notify is not None  # PostgreSQL only (postgres_only)
    return Rechecks(10, notify=notify), lambda: announced(services, notify)


async def _nothing_to_hear() -> None:
    return None


@pytest.mark.parametrize("confirm", ["query", pytest.param("notify", marks=pytest.mark.postgres_only)])
async def test_a_change_racing_the_logins_read_leaves_no_stale_entry(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch, confirm: str
) -> None:
    """The key and its user are read, then a ban commits before the entry is held: the entry
    carries the versions read before the ban, so the next re-check reads again and is refused."""
    world = await world_of(seller, services, clock)
    services.rechecks, heard = racing(confirm, services)  # nothing held: the next re-check reads everything
    real = logins_store.key_with_user
    other = await open_database(services.settings.database_url)

    async def read_then_ban(db: Executor, app_id: int, key: str) -> list[KeyUserRow]:
        rows = await real(db, app_id, key)
        await other.execute("UPDATE users SET banned_reason = 'meanwhile' WHERE username = ?", key)
        await heard()
        return rows

    try:
        monkeypatch.setattr(logins_store, "key_with_user", read_then_ban)
        await world.program.ok("license", key=world.key, hwid=HWID)  # read before the ban: admitted
        monkeypatch.setattr(logins_store, "key_with_user", real)
        held = services.rechecks.peek(ids.digest(world.program.sessionid))
        assert held is not None
        assert held.login is not None  # held, with the versions read before the ban
        assert await outcome(world.program, "license", key=world.key, hwid=HWID) == (403, "user_banned")
    finally:
        await other.close()


@pytest.mark.parametrize("confirm", ["query", pytest.param("notify", marks=pytest.mark.postgres_only)])
async def test_a_change_racing_the_sessions_read_leaves_no_stale_entry(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch, confirm: str
) -> None:
    world = await world_of(seller, services, clock)
    services.rechecks, heard = racing(confirm, services)
    real = sessions_store.find_with_app
    other = await open_database(services.settings.database_url)

    async def read_then_pause(db: Executor, session_id: str) -> SessionAppRow | None:
        row = await real(db, session_id)
        await other.execute("UPDATE apps SET paused_at = 1 WHERE id = ?", world.seller.app_id)
        await heard()
        return row

    try:
        monkeypatch.setattr(sessions_store, "find_with_app", read_then_pause)
        await world.program.ok("check")  # read before the pause: answered, and held
        monkeypatch.setattr(sessions_store, "find_with_app", real)
        assert services.rechecks.peek(ids.digest(world.program.sessionid)) is not None
        assert await outcome(world.program, "check") == (403, "app_paused")
    finally:
        await other.close()


# --- two nodes over one database ----------------------------------------------------------------


def http_of(node: Services) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=build_app(node.settings, node), client=(CLIENT_IP, 4000)),
        base_url="http://testserver",
    )


@pytest.mark.parametrize("confirm", ["query", "notify"])
async def test_a_change_through_one_node_refuses_on_the_other_at_once(
    db_url: str, tmp_path: Path, confirm: str
) -> None:
    """Two Services over one database (no Redis): a blacklist entry added through the first
    refuses the second's very next re-check of a session it holds. Reading the versions at every
    call (query mode) they may be two machines; in notify mode they share a data folder, as two
    workers of one machine do (the counter of its committed login changes)."""
    clock = MovableClock(start=1_800_000_000)
    settings = make_settings(db_url, tmp_path / "data", recheck_confirm=confirm)
    nodes = [await Services.open(settings, clock=clock) for _ in range(2)]
    https = [http_of(node) for node in nodes]
    try:
        seller = await create_seller(nodes[0], https[0])
        first = Client(https[0], seller.ownerid, seller.name)
        await first.init()
        key = await new_key(seller)
        await first.ok("license", key=key, hwid=HWID)
        second = Client(https[1], seller.ownerid, seller.name, first.sessionid)  # the same session
        for _ in range(3):
            await second.ok("license", key=key, hwid=HWID)
        held = nodes[1].rechecks.peek(ids.digest(first.sessionid))
        assert held is not None
        assert held.login is not None
        await seller.ok("black", hwid=HWID)
        for _ in range(3):
            await second.fails("license", 403, "blacklisted", key=key, hwid=HWID)
        await seller.ok("deluser", user=key)
        await second.fails("check", 403, "session_not_found")
    finally:
        for http in https:
            await http.aclose()
        for node in nodes:
            await node.close()


@pytest.mark.postgres_only
async def test_a_change_through_one_node_refuses_on_another_machine_within_the_bound(
    db_url: str, tmp_path: Path
) -> None:
    """Notify mode, two machines (data folders of their own, one deployment key): a ban through
    the first is refused by the second once announced (polled with a generous deadline)."""
    clock = MovableClock(start=1_800_000_000)
    first_node = await Services.open(make_settings(db_url, tmp_path / "one"), clock=clock)
    (tmp_path / "two").mkdir(mode=0o700)
    shutil.copy2(tmp_path / "one" / KEY_FILE_NAME, tmp_path / "two" / KEY_FILE_NAME)
    second_node = await Services.open(make_settings(db_url, tmp_path / "two"), clock=clock)
    nodes = [first_node, second_node]
    https = [http_of(node) for node in nodes]
    try:
        assert second_node.login_notify is not None  # PostgreSQL only (postgres_only)
        seller = await create_seller(first_node, https[0])
        first = Client(https[0], seller.ownerid, seller.name)
        await first.init()
        key = await new_key(seller)
        await first.ok("license", key=key, hwid=HWID)
        second = Client(https[1], seller.ownerid, seller.name, first.sessionid)
        for _ in range(3):
            await second.ok("license", key=key, hwid=HWID)
        assert second_node.rechecks.peek(ids.digest(first.sessionid)) is not None
        await seller.ok("banuser", user=key)
        deadline = time.monotonic() + 30
        while (await second.call("license", key=key, hwid=HWID)).status_code == 200:
            assert time.monotonic() < deadline, "the ban was not seen on the other machine within 30 s"
            await asyncio.sleep(0.005)
        await second.fails("license", 403, "session_not_found", key=key, hwid=HWID)
        await second.fails("check", 403, "session_not_found")
    finally:
        for http in https:
            await http.aclose()
        for node in nodes:
            await node.close()


# --- what is held, and for how long --------------------------------------------------------------


async def test_a_held_recheck_reads_only_the_versions(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = await world_of(seller, services, clock)
    read: list[str] = []
    for module, name in [
        (sessions_store, "find_with_app"),
        (logins_store, "key_with_user"),
        (blacklists_store, "matching_kinds"),
        (logins_store, "record_login"),
        (sessions_store, "validate"),
    ]:
        real = getattr(module, name)

        async def counted(*args: object, _real: Any = real, _name: str = name) -> Any:
            read.append(_name)
            return await _real(*args)

        monkeypatch.setattr(module, name, counted)
    for _ in range(3):
        await world.program.ok("license", key=world.key, hwid=HWID)
        await world.program.ok("check")
    assert read == []


async def test_a_session_not_logged_in_is_not_held(seller: Seller, services: Services) -> None:
    program = client_of(seller)
    await program.init()
    await program.fails("check", 403, "session_not_validated")
    await program.fails("check", 403, "session_not_validated")
    assert services.rechecks.peek(ids.digest(program.sessionid)) is None
    assert len(services.rechecks) == 0


async def test_the_last_login_is_recorded_once_a_minute(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    world = await world_of(seller, services, clock)
    first = await services.db.fetch_value("SELECT last_login_at FROM users WHERE username = ?", world.key)
    assert first == clock.now()
    clock.advance(59)
    await world.program.ok("license", key=world.key, hwid=HWID)
    assert (
        await services.db.fetch_value("SELECT last_login_at FROM users WHERE username = ?", world.key)
        == first
    )
    clock.advance(1)
    await world.program.ok("license", key=world.key, hwid=HWID)
    assert (
        await services.db.fetch_value("SELECT last_login_at FROM users WHERE username = ?", world.key)
        == first + 60
    )


async def test_a_minute_later_only_the_time_of_the_last_login_moves(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-check a real program makes (every few minutes, same address, same session) writes
    nothing but the time: through `refresh_last_login`, which moves no login version, so the
    held session stays held; a login from another address is recorded whole, as before."""
    world = await world_of(seller, services, clock)
    refreshed: list[int] = []
    refresh = logins_store.refresh_last_login

    async def counted(db: Database, user_id: int, now: int) -> None:
        refreshed.append(user_id)
        await refresh(db, user_id, now)

    monkeypatch.setattr(logins_store, "refresh_last_login", counted)
    user = await services.db.fetch_one(
        "SELECT id, last_ip, login_version FROM users WHERE username = ?", world.key
    )
    assert user is not None
    session = await services.db.fetch_value(
        "SELECT login_version FROM sessions WHERE id = ?", ids.digest(world.program.sessionid)
    )
    clock.advance(61)
    await world.program.ok("license", key=world.key, hwid=HWID)
    assert refreshed == [user["id"]]
    after = await services.db.fetch_one(
        "SELECT last_login_at, last_ip, login_version FROM users WHERE id = ?", user["id"]
    )
    assert after == {
        "last_login_at": clock.now(),
        "last_ip": user["last_ip"],
        "login_version": user["login_version"],
    }
    assert (
        await services.db.fetch_value(
            "SELECT login_version FROM sessions WHERE id = ?", ids.digest(world.program.sessionid)
        )
        == session
    )
    assert services.rechecks.peek(ids.digest(world.program.sessionid)) is not None
    await world.program.ok("license", key=world.key, hwid=HWID)  # within the minute: nothing written
    assert refreshed == [user["id"]]

    transport = httpx.ASGITransport(app=build_app(services.settings, services), client=("198.51.100.7", 4000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        elsewhere = Client(http, seller.ownerid, seller.name)
        await elsewhere.init()
        clock.advance(61)
        await elsewhere.ok("license", key=world.key, hwid=HWID)
    assert refreshed == [user["id"]]
    assert await services.db.fetch_one(
        "SELECT last_login_at, last_ip FROM users WHERE id = ?", user["id"]
    ) == {"last_login_at": clock.now(), "last_ip": "198.51.100.7"}


async def test_the_oldest_entry_goes_when_the_cache_is_full(seller: Seller, services: Services) -> None:
    services.rechecks = Rechecks(2)
    programs = []
    for _ in range(3):
        program = client_of(seller)
        await program.init()
        await program.ok("license", key=await new_key(seller), hwid=HWID)
        await program.ok("check")
        programs.append(program)
    held = [services.rechecks.peek(ids.digest(program.sessionid)) is not None for program in programs]
    assert held == [False, True, True]


async def test_no_entry_is_trusted_longer_than_it_may_be_kept(seller: Seller, services: Services) -> None:
    services.rechecks = Rechecks(10, keep=0.0)  # BACKSTOP in production
    program = client_of(seller)
    await program.init()
    await program.ok("license", key=await new_key(seller), hwid=HWID)
    await program.ok("check")
    held = services.rechecks.peek(ids.digest(program.sessionid))
    assert held is not None
    assert await services.rechecks.confirmed(services.db, held.session.id) is None
    assert services.rechecks.peek(held.session.id) is None


async def test_sessions_held_together_are_kept_for_different_times(
    seller: Seller, services: Services
) -> None:
    """Each entry is kept for half to all of `keep`, drawn apart, so that sessions first seen in
    the same second are not all read again in the same second later."""
    services.rechecks = Rechecks(10, keep=60.0)
    first = time.monotonic()
    programs = [client_of(seller) for _ in range(6)]
    for program in programs:
        await program.init()
        await program.ok("license", key=await new_key(seller), hwid=HWID)
        await program.ok("check")
    started = time.monotonic()
    untils = []
    for program in programs:
        held = services.rechecks.peek(ids.digest(program.sessionid))
        assert held is not None
        untils.append(held.until)
    assert all(first + 60 * (1 - KEEP_SPREAD) <= until <= started + 60 for until in untils)
    assert len(set(untils)) == len(untils)


@pytest.mark.parametrize("holding", [True, False], ids=["held", "not held"])
async def test_turning_the_hwid_lock_on_refuses_a_held_login_from_another_device(
    holding: bool, seller: Seller, services: Services
) -> None:
    if not holding:
        services.rechecks = Rechecks(0)
    await seller.ok("updatesettings", hwidcheck=0)
    key = await new_key(seller)
    first = client_of(seller)
    await first.init()
    await first.ok("license", key=key, hwid=HWID)  # the user's one HWID
    program = client_of(seller)
    await program.init()
    for _ in range(3):  # another device: admitted while the lock is off
        await program.ok("license", key=key, hwid=OTHER_HWID)
    held = services.rechecks.peek(ids.digest(program.sessionid))
    assert (held is not None and held.login is not None) is holding
    await seller.ok("updatesettings", hwidcheck=1)
    assert await outcome(program, "license", key=key, hwid=OTHER_HWID) == (403, "hwid_mismatch")
    await seller.ok("updatesettings", maxhwids=2)  # room for the second device: it is bound
    await program.ok("license", key=key, hwid=OTHER_HWID)
    await seller.ok("updatesettings", maxhwids=1)  # both stay bound; a third device is refused
    await program.ok("license", key=key, hwid=OTHER_HWID)
    await program.fails("license", 403, "hwid_mismatch", key=key, hwid="a-third-device-0000000000")


async def test_sessions_of_one_application_share_its_held_settings(
    seller: Seller, services: Services
) -> None:
    programs = []
    for _ in range(2):
        program = client_of(seller)
        await program.init()
        await program.ok("license", key=await new_key(seller), hwid=HWID)
        await program.ok("check")
        programs.append(services.rechecks.peek(ids.digest(program.sessionid)))
    first, second = programs
    assert first is not None
    assert second is not None
    assert first.app is second.app
