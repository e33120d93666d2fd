"""Events never show a License Login's user whole (issue 22: no full license key in a payload): a
user a key's first use made is named by that key, so every event that names it (ban, unban,
delete, pause, unpause, password and HWID reset, extend, expiry, tamper, a session killed) shows
the name masked, for every endpoint, while a username/password user's name appears whole. Also:
unbanning a key reports `user.unbanned` only when its user's ban was lifted. On SQLite and
PostgreSQL."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from licensegate.clock import MovableClock
from licensegate.domain import eventdelivery, events, expiryevents
from licensegate.eventworker import courier_of
from licensegate.services import Services
from tests.api.test_events import receiver as receiver  # the fixture
from tests.api.test_events import recorded
from tests.api.test_events import settings as settings  # the fixture: outbound to 127.0.0.1
from tests.helpers import Client, Seller, client_of
from tests.httpservers import LocalServer

pytestmark = pytest.mark.anyio

PASSWORD = "alice-password-1"


async def key_user(seller: Seller, expiry: int = 10) -> tuple[str, Client]:
    """A user made by a License Login (named by its key), logged in."""
    key: str = (
        await seller.ok("add", expiry=expiry, mask="****-****-****-****", level=1, amount=1, format="json")
    )["keys"][0]
    client = client_of(seller)
    await client.init()
    await client.ok("license", key=key, hwid="H1")
    return key, client


async def alice(seller: Seller) -> Client:
    """A username/password user, logged in."""
    await seller.ok("adduser", user="alice", sub="default", expiry=30, **{"pass": PASSWORD})
    client = client_of(seller)
    await client.init()
    await client.ok("login", username="alice", **{"pass": PASSWORD}, hwid="H2")
    return client


async def endpoint(seller: Seller, receiver: LocalServer, **more: Any) -> str:
    body = await seller.ok("addeventwebhook", url=receiver.url("/hook"), events="all", **more)
    endpoint_id: str = body["id"]
    return endpoint_id


def text(payloads: Any) -> str:
    return orjson.dumps(payloads).decode()


async def test_the_sellers_changes_mask_a_key_users_name(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    key, _ = await key_user(seller)
    await alice(seller)
    await endpoint(seller, receiver)
    for user in (key, "alice"):
        await seller.ok("banuser", user=user, reason="chargeback")
        await seller.ok("unbanuser", user=user)
        await seller.ok("pauseuser", username=user)
        await seller.ok("unpauseuser", username=user)
        await seller.ok("resetpw", user=user, passwd="a-new-password-1")
        await seller.ok("resetuser", user=user)
        await seller.ok("extend", user=user, sub="default", expiry=5)
        await seller.ok("deluser", user=user)
    got = await recorded(services, seller.app_id)
    wanted = [
        "user.banned",
        "user.unbanned",
        "user.paused",
        "user.unpaused",
        "user.password_reset",
        "user.hwid_reset",
        "subscription.extended",
        "user.deleted",
    ]
    named = [(name, data) for name, data in got if name in wanted]
    assert [name for name, _ in named] == wanted * 2
    of_key, of_alice = named[: len(wanted)], named[len(wanted) :]
    assert key not in text(got)
    assert {data["user"]["username"] for _, data in of_key} == {events.masked_key(key)}
    assert {data["user"]["username"] for _, data in of_alice} == {"alice"}


async def test_a_bulk_delete_lists_a_key_user_masked(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    key, _ = await key_user(seller)
    await alice(seller)
    await endpoint(seller, receiver)
    await seller.ok("delallusers")
    [data] = [d for n, d in await recorded(services, seller.app_id) if n == "user.deleted"]
    assert key not in text(data)
    assert sorted(user["username"] for user in data["users"]) == sorted(["alice", events.masked_key(key)])


async def test_expiry_events_mask_a_key_user(
    services: Services, seller: Seller, receiver: LocalServer, clock: MovableClock
) -> None:
    key, _ = await key_user(seller, expiry=2)
    await seller.ok("adduser", user="alice", sub="default", expiry=2, **{"pass": PASSWORD})
    await endpoint(seller, receiver)
    assert await expiryevents.scan(services.db, clock.now(), days=3) == 2
    clock.advance(2 * 86400 + 1)
    assert await expiryevents.scan(services.db, clock.now(), days=3) == 2
    got = [(n, d) for n, d in await recorded(services, seller.app_id) if n.startswith("subscription.exp")]
    assert sorted(n for n, _ in got) == ["subscription.expired"] * 2 + ["subscription.expiring_soon"] * 2
    assert key not in text(got)
    assert sorted(d["user"]["username"] for _, d in got) == sorted(
        ["alice", "alice", *[events.masked_key(key)] * 2]
    )


async def test_tamper_reported_and_its_ban_mask_a_key_user(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    await seller.ok("updatesettings", tamperaction="ban")
    key, client = await key_user(seller)
    other = await alice(seller)
    await endpoint(seller, receiver)
    assert (await client.ok("tamper", reason="debugger attached"))["banned"] is True
    assert (await other.ok("tamper", reason="debugger attached"))["banned"] is True
    got = [
        (n, d) for n, d in await recorded(services, seller.app_id) if n in ("tamper.reported", "user.banned")
    ]
    assert [n for n, _ in got] == ["tamper.reported", "user.banned"] * 2
    assert key not in text(got)
    assert [d["user"]["username"] for _, d in got] == [events.masked_key(key)] * 2 + ["alice"] * 2


async def test_a_killed_sessions_credential_is_masked_when_it_is_a_key(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    key, client = await key_user(seller)
    other = await alice(seller)
    await endpoint(seller, receiver)
    await seller.ok("kill", sessid=client.sessionid)
    await seller.ok("kill", sessid=other.sessionid)
    got = [d for n, d in await recorded(services, seller.app_id) if n == "session.ended"]
    assert key not in text(got)
    assert [d["credential"] for d in got] == [events.masked_key(key), "alice"]


async def test_unbanning_a_key_reports_its_user_only_when_the_user_was_banned(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    key, _ = await key_user(seller)
    await endpoint(seller, receiver)
    await seller.ok("ban", key=key, reason="leaked")  # the key only: its user stays unbanned
    await seller.ok("unban", key=key)
    await seller.ok("ban", key=key, reason="leaked", userToo=1)
    await seller.ok("unban", key=key)
    got = [n for n, _ in await recorded(services, seller.app_id) if n.endswith("banned")]
    assert got == ["key.banned", "key.unbanned", "key.banned", "user.banned", "key.unbanned", "user.unbanned"]


async def test_an_endpoint_that_includes_keys_gets_the_key_not_the_users_name(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    """Names are masked when the event is written; an endpoint set to include keys gets the full
    key only where the event is about the key (`key.key`), the user by id."""
    key, _ = await key_user(seller)
    await endpoint(seller, receiver, includekeys=1)
    await seller.ok("ban", key=key, reason="leaked", userToo=1)
    assert await eventdelivery.deliver_due(courier_of(services)) == 3
    bodies = {orjson.loads(seen.body)["type"]: orjson.loads(seen.body)["data"] for seen in receiver.requests}
    assert bodies["key.banned"]["key"]["key"] == key
    assert key not in text(bodies["user.banned"])
    assert key not in text(bodies["session.ended"])
    assert bodies["user.banned"]["user"]["username"] == events.masked_key(key)
