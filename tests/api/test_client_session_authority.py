"""The owner's authority takes effect at once (issue 10 item 1): a password change, losing a
subscription, a user pause, a subscription pause and an application pause end the affected
logged-in sessions, so the client's next call is refused. The others' sessions go on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from licensegate import app as app_module
from licensegate import ids
from licensegate.clock import MovableClock
from licensegate.domain import logins, users
from licensegate.services import Services
from licensegate.store import sessions as session_store
from licensegate.store import turns
from tests.helpers import Client, Seller, client_of, user_id_of

pytestmark = pytest.mark.anyio


async def logged_in(seller: Seller, username: str) -> Client:
    client = client_of(seller)
    await client.init()
    await client.ok("login", username=username, **{"pass": "pw"})
    await client.ok("check")
    return client


async def two_users(seller: Seller, sub: str = "default") -> tuple[Client, Client]:
    """`target` holds `sub`; `bystander` holds `default` only."""
    await seller.ok("adduser", user="target", sub=sub, expiry=30, **{"pass": "pw"})
    await seller.ok("adduser", user="bystander", sub="default", expiry=30, **{"pass": "pw"})
    return await logged_in(seller, "target"), await logged_in(seller, "bystander")


async def test_a_seller_password_change_ends_the_users_sessions(seller: Seller) -> None:
    target, bystander = await two_users(seller)
    await seller.ok("resetpw", user="target", passwd="new")
    await target.fails("check", 403, "session_not_found")
    await target.fails("var", 403, "session_not_found", varid="anything")
    await bystander.ok("check")
    await logged_in_with(seller, "target", "new")


async def logged_in_with(seller: Seller, username: str, password: str) -> None:
    client = client_of(seller)
    await client.init()
    await client.ok("login", username=username, **{"pass": password})


async def ended(seller: Seller, target: Client, bystander: Client, login_refusal: str) -> None:
    """The target's session ended, the bystander's did not, and a new login is refused."""
    await target.fails("check", 403, "session_not_found")
    await bystander.ok("check")
    again = client_of(seller)
    await again.init()
    await again.fails("login", 403, login_refusal, username="target", **{"pass": "pw"})


async def test_clearing_the_password_ends_the_users_sessions(seller: Seller) -> None:
    target, _ = await two_users(seller)
    await seller.ok("changepw", user="target")
    await target.fails("check", 403, "session_not_found")


@pytest.mark.parametrize(
    ("sub", "action", "params", "login_refusal"),
    [
        ("default", "delsub", {"user": "target", "sub": "default"}, "no_active_subscription"),
        ("gold", "delappsub", {"name": "gold"}, "no_active_subscription"),
        ("default", "pauseuser", {"username": "target"}, "subscription_paused"),
        ("gold", "pausesub", {"subscription": "gold"}, "subscription_paused"),
    ],
)
async def test_losing_or_pausing_a_subscription_ends_the_users_sessions(
    seller: Seller, sub: str, action: str, params: dict[str, str], login_refusal: str
) -> None:
    """Removing the grant, deleting the subscription, pausing the user or the subscription."""
    await seller.ok("addsub", name="gold", level="2")
    target, bystander = await two_users(seller, sub)
    await seller.ok(action, **params)
    await ended(seller, target, bystander, login_refusal)


async def test_an_application_pause_ends_every_session_and_refuses_their_calls(seller: Seller) -> None:
    target, bystander = await two_users(seller)
    await seller.ok("pauseapp")
    await target.fails("check", 403, "session_not_found")
    await bystander.fails("chatsend", 403, "session_not_found", message="hi", channel="general")
    await client_of(seller).fails("init", 403, "app_paused")
    await seller.ok("unpauseapp")
    await logged_in(seller, "target")


async def test_a_session_left_over_from_before_a_pause_is_refused_while_paused(
    seller: Seller, services: Services
) -> None:
    """A session written after the pause's deletion (a login racing the pause) is still refused:
    the pause flag comes with the session's own row on every call."""
    target, _ = await two_users(seller)
    await seller.ok("pauseapp")
    survivor = client_of(seller)
    survivor.sessionid = target.sessionid
    # Raw: the row a login racing the pause would leave, which no sequence of calls can order.
    await services.db.execute(
        "INSERT INTO sessions (id, app_id, created_at, expires_at, validated) VALUES (?, ?, 0, ?, 1)",
        ids.digest(target.sessionid),
        seller.app_id,
        2**40,
    )
    await survivor.fails("check", 403, "app_paused")


async def test_taking_away_a_users_last_time_ends_their_sessions(seller: Seller) -> None:
    """`subtract` leaving the user no time on any subscription ends their session at once; taking
    only some of it leaves the session alone."""
    target, bystander = await two_users(seller)
    await seller.ok("subtract", user="target", sub="default", seconds=86400)
    await target.ok("check")
    await seller.ok("subtract", user="all", sub="default", seconds=29 * 86400)
    await target.fails("check", 403, "session_not_found")
    await bystander.ok("check")  # one day left of their 30


async def test_a_session_outlives_its_users_last_subscription_by_one_sweep_at_most(
    seller: Seller, services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grant running out on its own: the worker's periodic sweep ends the session."""
    await seller.ok("updatesettings", session=604_800)
    await seller.ok("adduser", user="brief", sub="default", expiry=1, **{"pass": "pw"})
    await seller.ok("adduser", user="lasting", sub="default", expiry=3, **{"pass": "pw"})
    brief, lasting = await logged_in(seller, "brief"), await logged_in(seller, "lasting")
    clock.advance(2 * 86400 - 3600)  # within both sessions' life (the app's is set long below)
    monkeypatch.setattr(app_module, "PURGE_INTERVAL", 0.01)
    sweeper = asyncio.create_task(app_module.purge_expired_sessions(services))
    try:
        for _ in range(500):
            if not await services.db.fetch_value(
                "SELECT COUNT(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.username = 'brief'"
            ):
                break
            await asyncio.sleep(0.01)
    finally:
        sweeper.cancel()
    await brief.fails("check", 403, "session_not_found")
    await lasting.ok("check")


async def test_the_sweep_steps_through_every_session_and_ends_only_those_without_time(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    """The sweep looks at a few sessions a step (`end_without_time_after`), so no statement reads
    them all: with a step of 2 it walks seven sessions in four steps and ends exactly the
    sessions of the users whose time ran out, wherever they fall."""
    await seller.ok("updatesettings", session=604_800)
    for index in range(5):  # users 0, 2 and 4 have one day, 1 and 3 have three
        days = 1 if index % 2 == 0 else 3
        await seller.ok("adduser", user=f"u{index}", sub="default", expiry=days, **{"pass": "pw"})
    clients = [await logged_in(seller, f"u{index}") for index in range(5)]
    await client_of(seller).init()  # open, not logged in: never ended by the sweep
    await logged_in(seller, "u1")  # a second session of a user with time left
    clock.advance(2 * 86400)
    steps = 0
    after: str | None = ""
    while after is not None:
        after = await session_store.end_without_time_after(services.db, clock.now(), after, step=2)
        steps += 1
    assert steps == 5  # four steps of at most 2 sessions, and the one that finds none left
    assert await services.db.fetch_value("SELECT COUNT(*) FROM sessions") == 4
    for index, client in enumerate(clients):
        if index % 2 == 0:
            await client.fails("check", 403, "session_not_found")
        else:
            await client.ok("check")


async def test_a_sweep_step_ends_the_users_whose_grant_ran_out_in_its_window(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    """`end_run_out` reads the grants of a subscription that ran out in (since, now], a few a
    step, and ends the sessions of their users who have no time left: not those of a user with
    another grant, nor those whose grant runs out after the window or ran out before it."""
    await seller.ok("updatesettings", session=604_800)
    await seller.ok("addsub", name="gold", level="2")
    for name in ("out1", "out2", "out3", "other", "before"):
        await seller.ok("adduser", user=name, sub="default", expiry=2, **{"pass": "pw"})
    await seller.ok("adduser", user="lasting", sub="default", expiry=9, **{"pass": "pw"})
    await seller.ok("extend", user="other", sub="gold", expiry=9)
    names = ("out1", "out2", "out3", "other", "lasting", "before")
    clients = {name: await logged_in(seller, name) for name in names}
    await services.db.execute(  # ran out a week before the window
        "UPDATE user_subscriptions SET expires_at = ? WHERE user_id = ?",
        clock.now() - 7 * 86400,
        await user_id_of(services, seller.app_id, "before"),
    )
    since, now = clock.now() - 3600, clock.now() + 3 * 86400
    sub_id = await services.db.fetch_value(
        "SELECT id FROM subscriptions WHERE app_id = ? AND name = 'default'", seller.app_id
    )
    steps = 0
    cursor: session_store.Cursor | None = (since, 0)
    while cursor is not None:
        cursor = await session_store.end_run_out(services.db, sub_id, since, now, cursor, step=2)
        steps += 1
    assert steps == 3  # four grants of `default` ran out in the window, two a step, then none
    clock.set(now)
    for name in ("out1", "out2", "out3"):
        await clients[name].fails("check", 403, "session_not_found")
    for name in ("other", "lasting", "before"):  # `before` is the daily walk's to find
        await clients[name].ok("check")


async def test_the_walk_of_every_session_is_a_daily_backstop(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    """A sweep looks at the grants that ran out since it last looked, and notes how far it
    looked; time taken away without ending the sessions (SQL by hand) is found by the walk of
    every session, which takes its own turn once a day."""
    await seller.ok("updatesettings", session=604_800)
    await seller.ok("adduser", user="brief", sub="default", expiry=1, **{"pass": "pw"})
    await seller.ok("adduser", user="handled", sub="default", expiry=20, **{"pass": "pw"})
    brief, handled = await logged_in(seller, "brief"), await logged_in(seller, "handled")
    db = services.db
    clock.advance(86400 - 7200)
    await turns.take(db, app_module.WALK_TURN, clock.now(), app_module.WALK_INTERVAL)
    await turns.done(db, app_module.WALK_TURN, clock.now())  # walked just now
    await app_module._sweep(services)
    assert await turns.reached(db, app_module.SWEEP_TURN) == clock.now()
    await db.execute(
        "UPDATE user_subscriptions SET expires_at = ? WHERE user_id = ?",
        clock.now() - 86400,
        await user_id_of(services, seller.app_id, "handled"),
    )
    clock.advance(3 * 3600)  # brief's grant ran out since the last look; no walk is due
    await app_module._sweep(services)
    await brief.fails("check", 403, "session_not_found")
    await handled.ok("check")
    clock.advance(86400)
    await app_module._sweep(services)  # a day after the last walk: this sweep walks
    await handled.fails("check", 403, "session_not_found")


async def test_deleting_a_key_ends_the_sessions_of_its_user_left_without_time_at_the_next_sweep(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    """The key's grants go with it; its user, with no other time, is noted for the next sweep,
    which ends their session without walking every session."""
    key = (await seller.ok("add", expiry=30, level=1))["key"]
    holder = client_of(seller)
    await holder.init()
    await holder.ok("license", key=key, hwid="S-1-5-21-1111111111-2222222222-3333333333-1001")
    await seller.ok("adduser", user="bystander", sub="default", expiry=30, **{"pass": "pw"})
    bystander = await logged_in(seller, "bystander")
    await turns.take(services.db, app_module.WALK_TURN, clock.now(), app_module.WALK_INTERVAL)
    await turns.done(services.db, app_module.WALK_TURN, clock.now())  # walked just now
    await seller.ok("del", key=key)
    await holder.ok("check")  # (a re-check is refused at once: the key is gone)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM time_checks") == 1
    await app_module._sweep(services)
    await holder.fails("check", 403, "session_not_found")
    await bystander.ok("check")
    assert await services.db.fetch_value("SELECT COUNT(*) FROM time_checks") == 0


async def test_expired_sessions_are_purged_through_each_applications_index(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    """Expired sessions go, logged in or not; live ones stay."""
    await seller.ok("adduser", user="ann", sub="default", expiry=30, **{"pass": "pw"})
    await logged_in(seller, "ann")
    await client_of(seller).init()
    expires = await services.db.fetch_value("SELECT MAX(expires_at) FROM sessions")
    assert await session_store.purge_expired(services.db, expires - 1) == 0
    assert await session_store.purge_expired(services.db, expires, batch=1) == 1
    assert await session_store.purge_expired(services.db, expires) == 1
    assert await services.db.fetch_value("SELECT COUNT(*) FROM sessions") == 0


async def test_a_ban_committed_while_a_login_is_under_way_wins(
    seller: Seller, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The login has read the user (not banned yet) when the ban's transaction runs. On
    PostgreSQL the ban is still uncommitted when the login marks its session logged in, and
    commits just after (the session's update waits for it); on SQLite, which runs one writer at a
    time and whose reads in this process wait for an open transaction, the ban commits before the
    login goes on. Either way the login is refused as banned and no session of the user is left
    logged in (issue 10 item 1)."""
    await seller.ok("adduser", user="target", sub="default", expiry=30, **{"pass": "pw"})
    user_id = await user_id_of(services, seller.app_id, "target")
    banned, commit, validating = asyncio.Event(), asyncio.Event(), asyncio.Event()
    bans: list[asyncio.Task[None]] = []

    async def ban_in_a_transaction() -> None:
        async with services.db.transaction() as tx:
            await users.ban(tx, seller.app_id, user_id, "chargeback", services.clock.now(), blacklist_as=None)
            banned.set()
            await commit.wait()

    real_blacklist_check, real_validate = logins.check_blacklist, session_store.validate

    async def ban_under_way(*args: Any, **kwargs: Any) -> None:
        bans.append(asyncio.create_task(ban_in_a_transaction()))  # the user was read: not banned
        await banned.wait()
        if services.db.dialect == "sqlite":
            commit.set()
            await bans[0]
        await real_blacklist_check(*args, **kwargs)

    async def validating_noted(*args: Any, **kwargs: Any) -> int:
        validating.set()
        return await real_validate(*args, **kwargs)

    monkeypatch.setattr(logins, "check_blacklist", ban_under_way)
    monkeypatch.setattr(session_store, "validate", validating_noted)
    client = client_of(seller)
    await client.init()
    login = asyncio.create_task(client.call("login", username="target", **{"pass": "pw"}))
    await validating.wait()
    await asyncio.sleep(0.05)  # let the session's update reach the ban's row lock (ordering only)
    commit.set()
    answer = await login
    await bans[0]
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"] == "user_banned"
    # A raw count: no operation lists a user's logged-in sessions apart from the dashboard's page.
    left = await services.db.fetch_value(
        "SELECT COUNT(*) FROM sessions WHERE user_id = ? AND validated = 1", user_id
    )
    assert left == 0
