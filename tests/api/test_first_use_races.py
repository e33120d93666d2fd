"""A key's first use (issue 24 and issue 23's seats): a request that loses the race for an unused
key is decided as a login of the user the winner made (its HWIDs, its seats), so the first use
counts against a seat limit of 1; sessions opened in the same second end oldest first; a first
use writes its events even when the worker's cache has not heard of the endpoint yet. On SQLite
and PostgreSQL."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.services import Services
from licensegate.store.database import Executor
from tests.conftest import make_settings
from tests.helpers import Client, Seller, client_of
from tests.httpservers import serving

pytestmark = pytest.mark.anyio
RACERS = 20


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", outbound_allow=("127.0.0.1",))


async def unlocked_app_with_a_key(seller: Seller) -> str:
    """An application that does not lock users to their HWIDs (so only seats limit devices)."""
    await seller.ok("updatesettings", hwidcheck=0, authratelimit=10000, clientratelimit=10000)
    key: str = (await seller.ok("add", expiry=30, level="1"))["key"]
    return key


async def race_first_use(seller: Seller, key: str) -> list[Any]:
    """RACERS devices log in with the same unused key at once."""
    clients = [client_of(seller) for _ in range(RACERS)]
    await asyncio.gather(*(c.init() for c in clients))
    return await asyncio.gather(
        *(c.call("license", key=key, hwid=f"machine-{i:04d}-0000000000") for i, c in enumerate(clients))
    )


async def validated(services: Services) -> int:
    count: int = await services.db.fetch_value("SELECT COUNT(*) FROM sessions WHERE validated = 1")
    return count


async def test_the_first_use_takes_the_only_seat_from_devices_racing_it(
    seller: Seller, services: Services
) -> None:
    key = await unlocked_app_with_a_key(seller)
    await seller.ok("setseats", sub="default", sessions=1)
    responses = await race_first_use(seller, key)
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 1, {r.text for r in responses}
    assert {r.json()["error"] for r in responses if r.status_code != 200} == {"seat_limit"}
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1
    assert await validated(services) == 1
    assert (await seller.ok("getseats", sub="default"))["seats"]["sessions"] == 1


async def test_racing_devices_end_the_first_use_when_the_rule_ends_the_oldest(
    seller: Seller, services: Services
) -> None:
    key = await unlocked_app_with_a_key(seller)
    await seller.ok("setseats", sub="default", sessions=1, overage="end_oldest")
    responses = await race_first_use(seller, key)
    assert [r.status_code for r in responses] == [200] * RACERS, {r.text for r in responses}
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1
    assert await validated(services) == 1


async def test_without_a_seat_rule_racing_devices_share_an_unlocked_key(
    seller: Seller, services: Services
) -> None:
    key = await unlocked_app_with_a_key(seller)
    responses = await race_first_use(seller, key)
    assert [r.status_code for r in responses] == [200] * RACERS, {r.text for r in responses}
    assert {r.json()["info"]["username"] for r in responses} == {key}
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1
    assert await services.db.fetch_value("SELECT COUNT(*) FROM user_subscriptions") == 1
    assert await validated(services) == RACERS


async def test_sessions_opened_in_one_second_end_in_the_order_they_opened(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await unlocked_app_with_a_key(seller)
    first = client_of(seller)
    await first.init()
    await first.ok("license", key=key, hwid="machine-0000000000001")  # the first use
    await seller.ok("setseats", sub="default", sessions=9, overage="end_oldest")
    opened: list[Client] = []
    for _ in range(10):  # all in the clock's same second
        client = client_of(seller)
        await client.init()
        opened.append(client)
    for client in opened:
        await client.ok("license", key=key, hwid="machine-0000000000001")
    # The first use's session opened first (in the same second): the ninth login ended it.
    assert (await first.call("check")).json()["success"] is False
    assert (await opened[0].call("check")).json()["success"] is False  # ended by the tenth
    for client in opened[1:]:
        await client.ok("check")
    assert await validated(services) == 9


class NeverHeard:
    """A worker's cache of the events endpoints want that has not heard of any endpoint."""

    async def get(self, db: Executor, app_id: int) -> frozenset[str]:
        return frozenset()


async def test_a_first_use_writes_its_events_though_the_cache_has_not_heard_of_the_endpoint(
    seller: Seller, services: Services
) -> None:
    with serving() as receiver:
        receiver.reply("/hook", b"ok")
        await seller.ok("addeventwebhook", url=receiver.url("/hook"), events="all")
        services.first_use_wants = NeverHeard()  # type: ignore[assignment]
        keys = (await seller.ok("add", expiry=10, level=1, amount=2, format="json"))["keys"]
        client = client_of(seller)
        await client.init()
        await client.ok("license", key=keys[0], hwid="H1")
        rows = await services.db.fetch_all(
            "SELECT name FROM events WHERE app_id = ? ORDER BY id", seller.app_id
        )
        assert [row["name"] for row in rows][-3:] == [
            "key.redeemed",
            "subscription.granted",
            "user.registered",
        ]
        assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1


async def test_a_first_use_writes_no_event_nobody_wants(seller: Seller, services: Services) -> None:
    keys = (await seller.ok("add", expiry=10, level=1, amount=2, format="json"))["keys"]
    for key, device in zip(keys, ({"hwid": "H1"}, {}), strict=True):  # the second sends no HWID
        client = client_of(seller)
        await client.init()
        answer = await client.ok("license", key=key, **device)
        assert answer["info"]["subscriptions"][0]["key"] == key
    assert await services.db.fetch_value("SELECT COUNT(*) FROM events") == 0
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 2
    assert await services.db.fetch_value("SELECT COUNT(*) FROM user_hwids") == 1


async def test_a_registration_writes_its_events_though_the_cache_has_not_heard_of_the_endpoint(
    seller: Seller, services: Services
) -> None:
    with serving() as receiver:
        receiver.reply("/hook", b"ok")
        await seller.ok("addeventwebhook", url=receiver.url("/hook"), events="user.registered")
        services.first_use_wants = NeverHeard()  # type: ignore[assignment]
        key = (await seller.ok("add", expiry=10, level=1))["key"]
        client = client_of(seller)
        await client.init()
        await client.ok("register", username="carol", key=key, hwid="H1", **{"pass": "carol-password-1"})
        rows = await services.db.fetch_all(
            "SELECT name FROM events WHERE app_id = ? ORDER BY id", seller.app_id
        )
        assert [row["name"] for row in rows] == ["user.registered"]
