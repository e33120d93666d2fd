"""Heartbeats (issue 23, part C): the application's interval and grace, beats (login, check,
heartbeat), silent sessions ended off the request path (freeing their seat), and a ban reaching a
beating client, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import heartbeats
from licensegate.services import Services
from licensegate.store import sessions as session_store
from tests.api.test_seats import HWID, log_in, program, setup
from tests.helpers import CLIENT_PATH, Seller

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
    refused = await client.fails("heartbeat", 403, "session_not_found")
    assert refused["ended"] == "banned"
    assert refused["reason"] == "shared account"
    assert "shared account" in refused["message"]


async def test_a_key_ban_reaches_a_beating_client_with_the_keybanned_message(seller: Seller) -> None:
    key = await setup(seller)
    client = await log_in(seller, key)
    await seller.ok("ban", key=key, reason="refunded")
    refused = await client.fails("heartbeat", 403, "session_not_found")
    assert (refused["ended"], refused["reason"]) == ("banned", "refunded")
    assert refused["message"] == "Your license is banned: refunded"


async def test_a_pause_reaches_a_beating_client(seller: Seller) -> None:
    key = await setup(seller)
    client = await log_in(seller, key)
    await seller.ok("pauseuser", username=key)
    refused = await client.fails("heartbeat", 403, "session_not_found")
    assert refused["ended"] == "paused"
    assert "paused" in refused["message"]
    await seller.ok("unpauseuser", username=key)
    other = await log_in(seller, key)
    await seller.ok("pausesub", subscription="default")
    assert (await other.fails("heartbeat", 403, "session_not_found"))["ended"] == "paused"


async def test_why_a_session_ended_is_told_only_to_its_own_application(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await setup(seller)
    client = await log_in(seller, key)
    await seller.ok("banuser", user=key, reason="shared account")
    query = {"type": "check", "ownerid": "0" * len(client.ownerid), "sessionid": client.sessionid}
    other = (await client.http.post(CLIENT_PATH, params=query)).json()
    assert other["error"] == "session_not_found"
    assert "ended" not in other
    assert "shared account" not in other["message"]
    expires: int = await services.db.fetch_value("SELECT expires_at FROM ended_sessions")
    clock.advance(expires - clock.now() - 1)  # kept until the session would have expired
    assert await session_store.purge_ended(services.db, clock.now()) == 0
    clock.advance(1)
    assert await session_store.purge_ended(services.db, clock.now()) == 1
    assert "ended" not in await client.fails("check", 403, "session_not_found")


async def test_the_heartbeat_answers_what_changed_since_the_last_beat(seller: Seller) -> None:
    key = await setup(seller)
    await seller.ok("setheartbeat", interval=60)
    await seller.ok("addentitlement", code="export")
    await seller.ok("addentitlement", code="beta")
    await seller.ok("attachentitlement", code="export", sub="default")
    await seller.ok("setcredits", user=key, balance=10)
    client = await log_in(seller, key)
    first = await client.ok("heartbeat")  # compared with the login's answer
    assert (first["changed"], first["entitlements_added"], first["entitlements_removed"]) == ([], [], [])
    assert first["credits"]["balance"] == 10
    await seller.ok("attachentitlement", code="beta", user=key)
    await seller.ok("detachentitlement", code="export", sub="default")
    changed = await client.ok("heartbeat")
    assert changed["changed"] == ["entitlements"]
    assert changed["entitlements_added"] == ["beta"]
    assert changed["entitlements_removed"] == ["export"]
    assert [item["code"] for item in changed["entitlements"]] == ["beta"]
    assert (await client.ok("heartbeat"))["changed"] == []  # told once
    await client.ok("spend", cost=3)
    spent = await client.ok("heartbeat")
    assert spent["changed"] == ["credits"]
    assert spent["credits"]["balance"] == 7


async def test_without_beats_wanted_the_heartbeat_compares_with_the_previous_one(
    seller: Seller, services: Services
) -> None:
    key = await setup(seller)
    await seller.ok("addentitlement", code="export")
    client = await log_in(seller, key)
    first = await client.ok("heartbeat")
    assert (first["interval"], first["changed"]) == (0, [])  # nothing to compare with yet
    assert await last_beat(services) is None  # no beats wanted: no time written
    await seller.ok("attachentitlement", code="export", user=key)
    body = await client.ok("heartbeat")
    assert (body["changed"], body["entitlements_added"]) == (["entitlements"], ["export"])
