"""Heartbeats (issue 23, part C): the application's interval and grace, beats (login, check,
heartbeat), silent sessions ended off the request path (freeing their seat), and a ban reaching a
beating client, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import heartbeats
from licensegate.services import Services
from tests.api.test_seats import HWID, log_in, program, setup
from tests.helpers import Seller

pytestmark = pytest.mark.anyio


async def last_beat(services: Services) -> int | None:
    """The last beat of the one logged-in session of the test."""
    value: int | None = await services.db.fetch_value("SELECT last_beat_at FROM sessions WHERE validated = 1")
    return value


async def test_beats_and_the_heartbeat_answer(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await setup(seller)
    await seller.fails("setheartbeat", 400, "missing_parameter")
    client = await log_in(seller, key)
    assert await last_beat(services) is None  # no beats wanted: nothing written
    assert (await seller.ok("setheartbeat", interval=60, grace=30))["heartbeat"] == {
        "interval": 60,
        "grace": 30,
    }
    await client.ok("license", key=key, hwid=HWID)  # a login beats
    assert await last_beat(services) == clock.now()
    clock.advance(40)
    await client.ok("check")  # check beats
    assert await last_beat(services) == clock.now()
    clock.advance(40)
    body = await client.ok("heartbeat")
    assert body["interval"] == 60
    assert body["entitlements"] == []
    assert await last_beat(services) == clock.now()
    fresh = await program(seller)
    await fresh.fails("heartbeat", 403, "session_not_validated")


async def test_a_silent_session_ends_after_the_grace_and_frees_its_seat(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await setup(seller)
    await seller.ok("setseats", sub="default", sessions=1)
    await seller.ok("setheartbeat", interval=60, grace=30)
    beating = await log_in(seller, key)
    await (await program(seller)).fails("license", 403, "seat_limit", key=key, hwid=HWID)
    clock.advance(90)  # interval + grace: not yet
    assert await heartbeats.end_silent(services.db, clock.now()) == 0
    await beating.ok("heartbeat")
    clock.advance(91)
    assert await heartbeats.end_silent(services.db, clock.now()) == 1  # the killed client's session
    assert await heartbeats.end_silent(services.db, clock.now()) == 0  # once, whoever sweeps
    assert (await beating.call("heartbeat")).json()["success"] is False
    await log_in(seller, key)  # the seat is free


async def test_sessions_of_applications_without_heartbeats_are_left_alone(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await setup(seller)
    client = await log_in(seller, key)
    clock.advance(3600)
    assert await heartbeats.end_silent(services.db, clock.now()) == 0
    await client.ok("check")


async def test_a_ban_reaches_a_beating_client_at_its_next_beat(seller: Seller) -> None:
    key = await setup(seller)
    await seller.ok("setheartbeat", interval=60)
    client = await log_in(seller, key)
    await client.ok("heartbeat")
    await seller.ok("banuser", user=key, reason="shared account")
    refused = (await client.call("heartbeat")).json()
    assert refused["success"] is False
