"""Client API — Tamper Detection (`tamper`): every report lands in the tamper log (read back with
the seller API's `fetchtamperlogs`); with `tamper_action` = `ban`, a logged-in session's user is
banned, the HWID sent blacklisted and the user's sessions ended."""

from __future__ import annotations

from typing import Any

import pytest

from licensegate.services import Services
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
OTHER_HWID = "tampered-machine-0000"
CLIENT_IP = "203.0.113.7"
FIELDS = {"success", "code", "message", "banned", "nonce", "ownerid"}


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def log_in(app: Client, seller: Seller, name: str = "kim") -> None:
    key = (await seller.ok("add", expiry=30))["key"]
    await app.ok("register", username=name, key=key, hwid=HWID, **{"pass": "pw"})


async def tamper_logs(seller: Seller) -> list[dict[str, Any]]:
    logs: list[dict[str, Any]] = (await seller.ok("fetchtamperlogs"))["logs"]
    return logs


async def blacklist(services: Services) -> set[tuple[str, str]]:
    rows = await services.db.fetch_all("SELECT kind, value FROM blacklist")
    return {(row["kind"], row["value"]) for row in rows}


async def test_tamper_is_recorded_for_a_session_that_is_not_logged_in(app: Client, seller: Seller) -> None:
    body = await app.ok("tamper", reason="debugger attached", hwid=OTHER_HWID, details="  x64dbg\n pid 42 ")
    assert set(body) == FIELDS
    assert (body["message"], body["banned"]) == ("Tamper event recorded", False)
    [entry] = await tamper_logs(seller)
    assert entry == {
        "id": entry["id"],
        "reason": "debugger attached",
        "details": "  x64dbg\n pid 42 ",
        "credential": None,
        "hwid": OTHER_HWID,
        "ip": CLIENT_IP,
        "created": 1_800_000_000,
    }


async def test_tamper_with_the_log_action_records_the_user_and_bans_no_one(
    app: Client, seller: Seller, services: Services
) -> None:
    await log_in(app, seller)
    assert (await app.ok("tamper", reason="patched binary"))["banned"] is False
    [entry] = await tamper_logs(seller)
    assert (entry["credential"], entry["hwid"], entry["details"]) == ("kim", None, None)
    user_id = await services.db.fetch_value("SELECT user_id FROM tamper_logs")
    assert user_id == await services.db.fetch_value("SELECT id FROM users WHERE username = 'kim'")
    await app.ok("check")
    assert await blacklist(services) == set()


async def test_tamper_with_the_ban_action_bans_blacklists_and_ends_sessions(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", tamperaction="ban")
    await log_in(app, seller)
    second = app.fresh()
    await second.init()
    await second.ok("login", username="kim", hwid=HWID, **{"pass": "pw"})
    body = await app.ok("tamper", reason="debugger attached", hwid=OTHER_HWID)
    assert (body["message"], body["banned"]) == ("Tamper event recorded", True)
    await app.fails("check", 403, "session_not_found")
    await second.fails("check", 403, "session_not_found")
    assert await blacklist(services) == {("hwid", HWID), ("hwid", OTHER_HWID), ("ip", CLIENT_IP)}
    reason = await services.db.fetch_value("SELECT banned_reason FROM users WHERE username = 'kim'")
    assert reason == "Tamper detected: debugger attached"
    assert [e["credential"] for e in await tamper_logs(seller)] == ["kim"]
    await app.init()
    await app.fails("login", 403, "user_banned", username="kim", hwid=HWID, **{"pass": "pw"})


async def test_tamper_with_the_ban_action_only_records_a_session_not_logged_in(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", tamperaction="ban")
    assert (await app.ok("tamper", reason="hook found", hwid=OTHER_HWID))["banned"] is False
    assert await blacklist(services) == set()
    assert len(await tamper_logs(seller)) == 1
    await app.ok("log", message="still alive")  # the session goes on


async def test_tamper_ban_without_a_hwid_blacklists_the_users_own(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", tamperaction="ban")
    await log_in(app, seller)
    assert (await app.ok("tamper", reason="r" * 256))["banned"] is True
    assert await blacklist(services) == {("hwid", HWID), ("ip", CLIENT_IP)}
    reason = await services.db.fetch_value("SELECT banned_reason FROM users")
    assert reason == ("Tamper detected: " + "r" * 256)[:256]


async def test_tamper_validates_its_parameters(app: Client, seller: Seller) -> None:
    await app.fails("tamper", 400, "missing_parameter")
    await app.fails("tamper", 400, "missing_parameter", reason="   ")
    await app.fails("tamper", 400, "parameter_too_long", reason="r" * 257)
    await app.fails("tamper", 400, "parameter_too_long", reason="r", hwid="h" * 257)
    await app.fails("tamper", 400, "parameter_too_long", reason="r", details="d" * 2001)
    await app.ok("tamper", reason="r" * 256, hwid="h" * 256, details="d" * 2000)
    assert len(await tamper_logs(seller)) == 1


async def test_tamper_needs_a_session(app: Client) -> None:
    await app.fresh().fails("tamper", 401, "missing_session", reason="x")
