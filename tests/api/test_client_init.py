"""Client API — init, and what every client call shares: credentials, envelope, rate limit."""

from __future__ import annotations

import httpx
import pytest

from licensegate import ids
from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.helpers import CLIENT_PATH, Client, Seller, client_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def app(seller: Seller) -> Client:
    return client_of(seller)


async def test_init_opens_a_session(app: Client, services: Services, clock: MovableClock) -> None:
    body = await app.ok("init", ver="1.0")
    assert body["message"] == "Initialized"
    assert len(body["sessionid"]) == 32
    assert body["newSession"] is True
    assert set(body["appinfo"]) == {"numUsers", "numOnlineUsers", "numKeys", "version", "customerPanelLink"}
    assert all(isinstance(v, str) for v in body["appinfo"].values())
    assert body["appinfo"]["version"] == "1.0"
    row = await services.db.fetch_one(
        "SELECT validated, expires_at, ip FROM sessions WHERE id = ?", ids.digest(body["sessionid"])
    )
    assert row == {"validated": 0, "expires_at": clock.now() + 21600, "ip": "203.0.113.7"}
    # Only the id's digest is stored: a copy of the database holds no usable session id.
    assert await services.db.fetch_value("SELECT COUNT(*) FROM sessions WHERE id = ?", body["sessionid"]) == 0


async def test_every_init_gets_a_fresh_random_session(app: Client) -> None:
    first = (await app.ok("init"))["sessionid"]
    second = (await app.ok("init"))["sessionid"]
    assert first != second


async def test_missing_and_unknown_application_is_401(app: Client, client: httpx.AsyncClient) -> None:
    response = await client.post(CLIENT_PATH, params={"type": "init", "name": app.name})
    assert (response.status_code, response.json()["error"]) == (401, "missing_ownerid")
    assert response.json()["ownerid"] == ""
    await Client(client, app.ownerid, "").fails("init", 401, "missing_name")
    await Client(client, app.ownerid, "nope").fails("init", 401, "unknown_application")
    await Client(client, "ZZZZZZZZZZ", app.name).fails("init", 401, "unknown_application")


async def test_unknown_type_is_400_in_the_client_envelope(app: Client) -> None:
    await app.fails("nothing", 400, "unknown_type")
    body = await app.fails("", 400, "missing_type")
    assert body["code"] == 40


async def test_only_post_is_accepted(app: Client, client: httpx.AsyncClient) -> None:
    response = await client.get(
        CLIENT_PATH, params={"type": "init", "ownerid": app.ownerid, "name": app.name}
    )
    assert response.status_code == 405


async def test_version_mismatch_sends_the_download_link(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", ver="2.0", download="https://example.invalid/get")
    body = await app.fails("init", 403, "version_mismatch", ver="1.0")
    assert body["message"] == "invalidver"  # KeyAuth clients compare with this literal
    assert body["download"] == "https://example.invalid/get"
    await app.ok("init", ver="2.0")
    await app.ok("init")  # no version sent: no check


async def test_disabled_and_paused_applications_are_refused(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", enabled=0)
    body = await app.fails("init", 403, "app_disabled")
    assert body["message"] == "This application is disabled"
    await seller.ok("updatesettings", enabled=1)
    await seller.ok("pauseapp")
    await app.fails("init", 403, "app_paused")


async def test_custom_messages_replace_the_defaults(app: Client, seller: Seller, services: Services) -> None:
    await seller.ok("setmessage", name="appdisabled", text="Closed for repairs")
    await seller.ok("updatesettings", enabled=0)
    assert (await app.fails("init", 403, "app_disabled"))["message"] == "Closed for repairs"


async def test_program_hash_check_and_tamper_log(app: Client, seller: Seller, services: Services) -> None:
    db = services.db
    await seller.ok("updatesettings", hashcheck=1)
    await seller.ok("addhash", hash="abc123")
    await app.ok("init", hash="abc123")
    await app.fails("init", 403, "hash_mismatch", hash="evil")
    await app.fails("init", 403, "hash_mismatch")
    logged = await db.fetch_all("SELECT reason, details, ip FROM tamper_logs WHERE app_id = ?", seller.app_id)
    assert [row["reason"] for row in logged] == ["program hash mismatch"] * 2
    assert "evil" in logged[0]["details"]
    assert logged[0]["ip"] == "203.0.113.7"


async def test_application_rate_limit_is_429_with_retry_after(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", clientratelimit=3)
    for _ in range(3):
        await app.ok("init")
    response = await app.call("init")
    assert (response.status_code, response.json()["error"]) == (429, "rate_limited")
    assert int(response.headers["Retry-After"]) > 0
    assert response.json()["code"] == 42


async def test_oversized_parameters_are_400(app: Client) -> None:
    await app.fails("init", 400, "parameter_too_long", ver="9" * 33)
