"""What a worker holds of a logged-in session (domain/recheck.py) never outlives a change that must
refuse a login: for every such change, made through the seller API after the cache is warm (a
License Login and two re-checks, and two Session Checks), the very next re-check and check answer
exactly what they answer with nothing held. Also: a change by hand-written SQL on another
connection, a second node over the same database, a rolled-back change, a change racing a load,
and the bounds (size, BACKSTOP, not-yet-validated sessions)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate import ids
from licensegate.app import build_app
from licensegate.clock import MovableClock
from licensegate.domain.recheck import Rechecks
from licensegate.services import Services
from licensegate.store import blacklists as blacklists_store
from licensegate.store import logins as logins_store
from licensegate.store import sessions as sessions_store
from licensegate.store.database import Database, Executor, open_database
from licensegate.store.logins import KeyUserRow
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


@pytest.fixture(params=["held", "not held"])
def holding(request: pytest.FixtureRequest, services: Services) -> bool:
    if request.param == "not held":
        services.rechecks = Rechecks(0)
    held: bool = request.param == "held"
    return held


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


@pytest.mark.parametrize("change", list(BY_HAND))
async def test_a_change_by_hand_on_another_connection_is_seen_at_once(
    change: str, seller: Seller, services: Services, clock: MovableClock
) -> None:
    """The triggers bump the versions whatever writes: here plain SQL over a connection of its own."""
    world = await world_of(seller, services, clock)
    user_id = await services.db.fetch_value("SELECT id FROM users WHERE username = ?", world.key)
    statements, recheck, check = BY_HAND[change]
    other = await open_database(services.settings.database_url)
    try:
        async with other.transaction() as tx:
            for statement in statements:
                await tx.execute(statement, _argument(statement, world, user_id))
    finally:
        await other.close()
    assert await outcome(world.program, "check") == check
    assert await outcome(world.program, "license", key=world.key, hwid=HWID) == recheck


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


async def test_a_change_racing_the_logins_read_leaves_no_stale_entry(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key and its user are read, then a ban commits before the entry is held: the entry
    carries the versions read before the ban, so the next re-check reads again and is refused."""
    world = await world_of(seller, services, clock)
    services.rechecks = Rechecks(10)  # nothing held: the next re-check reads everything
    real = logins_store.key_with_user
    other = await open_database(services.settings.database_url)

    async def read_then_ban(db: Executor, app_id: int, key: str) -> list[KeyUserRow]:
        rows = await real(db, app_id, key)
        await other.execute("UPDATE users SET banned_reason = 'meanwhile' WHERE username = ?", key)
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


async def test_a_change_racing_the_sessions_read_leaves_no_stale_entry(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = await world_of(seller, services, clock)
    services.rechecks = Rechecks(10)
    real = sessions_store.find_with_app
    other = await open_database(services.settings.database_url)

    async def read_then_pause(db: Executor, session_id: str) -> SessionAppRow | None:
        row = await real(db, session_id)
        await other.execute("UPDATE apps SET paused_at = 1 WHERE id = ?", world.seller.app_id)
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


async def test_a_change_through_one_node_refuses_on_the_other_at_once(db_url: str, tmp_path: Path) -> None:
    """Two Services over one database (two nodes, no Redis): a blacklist entry added through the
    first node refuses the second node's very next re-check of a session it holds."""
    clock = MovableClock(start=1_800_000_000)
    nodes = [await Services.open(make_settings(db_url, tmp_path / "data"), clock=clock) for _ in range(2)]
    https = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(node.settings, node), client=(CLIENT_IP, 4000)),
            base_url="http://testserver",
        )
        for node in nodes
    ]
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
