"""Races on the login path: one key redeemed by many at once, one user's first device bound by many
at once. In-process here (on SQLite and PostgreSQL); tests/api/test_live_client.py repeats them
against a real server with two worker processes."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.services import Services
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio
RACERS = 50


async def racers(seller: Seller, services: Services) -> list[Client]:
    await seller.ok("updatesettings", authratelimit=10000, clientratelimit=10000)
    clients = [client_of(seller) for _ in range(RACERS)]
    await asyncio.gather(*(c.init() for c in clients))
    return clients


async def test_fifty_first_uses_of_one_key_create_exactly_one_user(
    seller: Seller, services: Services
) -> None:
    clients = await racers(seller, services)
    key = (await seller.ok("add", expiry=30))["key"]
    responses = await asyncio.gather(
        *(c.call("license", key=key, hwid=f"machine-{i:04d}-0000000000") for i, c in enumerate(clients))
    )
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 1
    assert set(statuses) == {200, 403}
    refusals = {r.json()["error"] for r in responses if r.status_code == 403}
    assert refusals <= {"key_used", "hwid_mismatch"}
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1
    assert await services.db.fetch_value("SELECT COUNT(*) FROM user_hwids") == 1
    assert await services.db.fetch_value("SELECT COUNT(*) FROM user_subscriptions") == 1


async def test_fifty_first_uses_of_one_key_from_its_own_device_all_succeed(
    seller: Seller, services: Services
) -> None:
    """A program retried (or double-clicked) while its first License Login is in flight: every
    attempt from the device that redeems the key logs in as the one user the key made."""
    clients = await racers(seller, services)
    key = (await seller.ok("add", expiry=30))["key"]
    responses = await asyncio.gather(
        *(c.call("license", key=key, hwid="the-one-machine-0000000001") for c in clients)
    )
    assert [r.status_code for r in responses] == [200] * RACERS, {r.text for r in responses}
    assert {r.json()["info"]["username"] for r in responses} == {key}
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1
    assert await services.db.fetch_value("SELECT COUNT(*) FROM user_hwids") == 1
    assert await services.db.fetch_value("SELECT COUNT(*) FROM sessions WHERE validated = 1") == RACERS


async def test_fifty_first_logins_bind_exactly_one_hwid(seller: Seller, services: Services) -> None:
    clients = await racers(seller, services)
    key = (await seller.ok("add", expiry=30))["key"]
    await clients[0].ok("license", key=key)  # redeemed without a HWID: none bound yet
    responses = await asyncio.gather(
        *(c.call("license", key=key, hwid=f"machine-{i:04d}-0000000000") for i, c in enumerate(clients))
    )
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 1
    assert {r.json()["error"] for r in responses if r.status_code != 200} == {"hwid_mismatch"}
    assert await services.db.fetch_value("SELECT COUNT(*) FROM user_hwids") == 1


async def test_fifty_registrations_with_one_key_make_one_user(seller: Seller, services: Services) -> None:
    clients = await racers(seller, services)
    key = (await seller.ok("add", expiry=30))["key"]
    responses = await asyncio.gather(
        *(c.call("register", username=f"user{i}", key=key, **{"pass": "pw"}) for i, c in enumerate(clients))
    )
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 1
    assert {r.json()["error"] for r in responses if r.status_code != 200} == {"key_used"}
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1
