"""Seats (issue 23, part B): machine and session limits per subscription, key or user, the
overage rules (refuse, end the oldest, allow N% over), and exact counts under 100 concurrent
logins, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio
HWID = "machine-0000000000000001"


async def program(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def setup(seller: Seller) -> str:
    await seller.ok("updatesettings", hwidcheck=0, authratelimit=10000, clientratelimit=10000)
    key: str = (await seller.ok("add", expiry=30, level="1"))["key"]
    first = await program(seller)
    await first.ok("license", key=key, hwid=HWID)  # the first use makes the user
    await first.ok("logout")
    return key


async def log_in(seller: Seller, key: str, hwid: str = HWID) -> Client:
    client = await program(seller)
    await client.ok("license", key=key, hwid=hwid)
    return client


async def test_seller_operations_and_their_refusals(seller: Seller) -> None:
    key = await setup(seller)
    await seller.fails("setseats", 400, "seat_target", sessions=2)
    await seller.fails("setseats", 400, "seat_target", sub="default", key=key, sessions=2)
    await seller.fails("setseats", 400, "seat_rule_empty", sub="default")
    await seller.fails("setseats", 404, "subscription_not_found", sub="nope", sessions=2)
    await seller.fails("getseats", 404, "seat_rule_not_found", sub="default")
    await seller.fails("setseats", 400, "invalid_parameter", sub="default", sessions=2, overage="maybe")
    body = await seller.ok("setseats", sub="default", sessions=2, machines=1, overage="end_oldest")
    assert body["seats"] == {
        "machines": 1,
        "sessions": 2,
        "countby": "user",
        "overage": "end_oldest",
        "percent": 0,
    }
    assert (await seller.ok("getseats", sub="default"))["seats"]["sessions"] == 2
    await seller.ok("setseats", user=key, sessions=5)
    shown = await seller.ok("getseats", user=key)
    assert shown["seats"]["sessions"] == 5
    assert shown["in_use"] == {"sessions": 0, "machines": 0}
    await seller.ok("delseats", user=key)
    await seller.fails("delseats", 404, "seat_rule_not_found", user=key)


async def test_refuse_over_the_session_limit_with_the_custom_message(seller: Seller) -> None:
    key = await setup(seller)
    await seller.ok("setseats", sub="default", sessions=2)
    one = await log_in(seller, key)
    await log_in(seller, key)
    third = await program(seller)
    refused = await third.fails("license", 403, "seat_limit", key=key, hwid=HWID)
    assert "already in use" in refused["message"]
    await one.ok("license", key=key, hwid=HWID)  # a session logging in again takes no new seat
    await one.ok("logout")
    await third.ok("license", key=key, hwid=HWID)  # the seat it freed


async def test_end_the_oldest_session(seller: Seller, clock: MovableClock) -> None:
    key = await setup(seller)
    await seller.ok("setseats", sub="default", sessions=2, overage="end_oldest")
    oldest = await log_in(seller, key)
    clock.advance(1)  # sessions are ordered by the second they opened
    middle = await log_in(seller, key)
    clock.advance(1)
    newest = await log_in(seller, key)
    assert (await oldest.call("check")).json()["success"] is False
    await middle.ok("check")
    await newest.ok("check")


async def test_machine_limits_and_overrides(seller: Seller) -> None:
    key = await setup(seller)
    await seller.ok("setseats", sub="default", machines=2)
    await log_in(seller, key, "machine-a-0000000000")
    await log_in(seller, key, "machine-a-0000000000")  # the same machine again: no new seat
    await log_in(seller, key, "machine-b-0000000000")
    await (await program(seller)).fails("license", 403, "seat_limit", key=key, hwid="machine-c-0000000000")
    await seller.ok("setseats", key=key, machines=3)  # the key's rule wins over the subscription's
    await log_in(seller, key, "machine-c-0000000000")
    await seller.ok("setseats", user=key, machines=1, overage="end_oldest")  # the user's wins over both
    newest = await log_in(seller, key, "machine-d-0000000000")
    await newest.ok("check")
    assert (await seller.ok("getseats", user=key))["in_use"] == {"sessions": 1, "machines": 1}


async def test_allow_a_percentage_over(seller: Seller) -> None:
    key = await setup(seller)
    await seller.ok("setseats", sub="default", sessions=2, overage="allow", percent=50)
    for _ in range(3):
        await log_in(seller, key)
    await (await program(seller)).fails("license", 403, "seat_limit", key=key, hwid=HWID)


async def race(seller: Seller, key: str) -> list[int]:
    clients = [client_of(seller) for _ in range(100)]
    await asyncio.gather(*(c.init() for c in clients))
    responses = await asyncio.gather(*(c.call("license", key=key, hwid=HWID) for c in clients))
    return [r.status_code for r in responses]


async def test_one_hundred_concurrent_logins_refused_beyond_the_limit(
    seller: Seller, services: Services
) -> None:
    key = await setup(seller)
    await seller.ok("setseats", sub="default", sessions=5)
    statuses = await race(seller, key)
    assert statuses.count(200) == 5
    assert statuses.count(403) == 95
    assert await services.db.fetch_value("SELECT COUNT(*) FROM sessions WHERE validated = 1") == 5


async def test_one_hundred_concurrent_logins_ending_the_oldest(seller: Seller, services: Services) -> None:
    key = await setup(seller)
    await seller.ok("setseats", sub="default", sessions=5, overage="end_oldest")
    statuses = await race(seller, key)
    assert statuses == [200] * 100
    assert await services.db.fetch_value("SELECT COUNT(*) FROM sessions WHERE validated = 1") == 5
