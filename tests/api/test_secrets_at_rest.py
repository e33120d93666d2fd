"""Secrets at rest (issue 10 item 19, the rest): a copy of the database holds no usable client
session id (only its SHA-256), no user's two-factor secret, no webhook URL and no log forwarding
URL in clear (sealed under the deployment key); values stored in clear before are sealed, and
sessions re-keyed by their digest, by `seal_clear` (which `licensegate migrate` and `serve` run)
while they go on working before and after."""

from __future__ import annotations

import pytest

from licensegate import ids
from licensegate.clock import MovableClock
from licensegate.domain import totp
from licensegate.domain.sealed import seal_clear
from licensegate.secretbox import is_sealed
from licensegate.services import Services
from tests.api.test_seller_webhooks import dns, settings  # noqa: F401 (fixtures: no network)
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HOOK = "https://hooks.example.com/notify?token=hook-s3cret"
LOG_HOOK = "https://hooks.example.com/api/webhooks/1/log-s3cret"


async def logged_in(seller: Seller) -> Client:
    await seller.ok("adduser", user="kim", sub="default", expiry=30, **{"pass": "pw"})
    client = client_of(seller)
    await client.init()
    await client.ok("login", username="kim", **{"pass": "pw"})
    return client


async def enrol(client: Client, clock: MovableClock) -> str:
    secret: str = (await client.ok("2faenable"))["2fa"]["secret_code"]
    await client.ok("2faenable", code=totp.code_at(secret, totp.step_of(clock.now())))
    return secret


async def everything_stored(services: Services) -> str:
    """Every text value of the tables that held these secrets, as one string."""
    parts: list[str] = []
    for table in ("sessions", "users", "webhooks", "apps"):
        for row in await services.db.fetch_all(f"SELECT * FROM {table}"):
            parts.extend(str(value) for value in row.values())
    return "\n".join(parts)


async def test_no_session_id_two_factor_secret_or_webhook_url_is_stored_in_clear(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    client = await logged_in(seller)
    secret = await enrol(client, clock)
    await seller.ok("addwebhook", baseurl=HOOK, webid="hook")
    await seller.ok("updatesettings", webhook=LOG_HOOK)
    stored = await everything_stored(services)
    for clear in (client.sessionid, secret, "hook-s3cret", "log-s3cret"):
        assert clear not in stored
    assert await services.db.fetch_value("SELECT id FROM sessions") == ids.digest(client.sessionid)
    # They still work: the session, a code of the secret, the webhook's listing and settings.
    await client.ok("check")
    clock.advance(30)
    code = totp.code_at(secret, totp.step_of(clock.now()))
    await client.ok("login", username="kim", code=code, **{"pass": "pw"})
    listed = (await seller.ok("fetchallwebhooks"))["webhooks"]
    assert listed[0]["short_baselink"] == "https://hooks.example.com/notify"
    assert (await seller.ok("getsettings"))["settings"]["log_webhook"] == "set"
    sealed_url = await services.db.fetch_value("SELECT log_webhook_url FROM apps")
    await seller.ok("updatesettings", webhook=LOG_HOOK)  # the same URL: compared in clear, not rewritten
    assert await services.db.fetch_value("SELECT log_webhook_url FROM apps") == sealed_url
    await seller.ok("kill", sessid=client.sessionid)  # the client's id names its session
    await client.fails("check", 403, "session_not_found")


async def test_values_stored_in_clear_before_are_sealed_and_keep_working(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    client = await logged_in(seller)
    secret = totp.new_secret()
    db = services.db
    # As an earlier version stored them.
    await db.execute("UPDATE users SET otp_enabled = 1, otp_secret = ? WHERE username = 'kim'", secret)
    await db.execute(
        "INSERT INTO webhooks (app_id, webid, base_url, user_agent, authed, created_at) "
        "VALUES (?, 'old', ?, 'licensegate', 1, 0)",
        seller.app_id,
        HOOK,
    )
    await db.execute("UPDATE apps SET log_webhook_url = ?", LOG_HOOK)
    await db.execute("UPDATE sessions SET id = ?", client.sessionid)
    login = {"username": "kim", "pass": "pw"}

    # Read in clear meanwhile (a session stored in clear must init again).
    assert (await seller.ok("fetchallwebhooks"))["webhooks"][0]["webid"] == "old"
    await client.fails("check", 403, "session_not_found")
    await db.execute("UPDATE sessions SET id = ?", client.sessionid)

    assert await seal_clear(db, services.secrets) == 4
    stored = await everything_stored(services)
    for clear in (client.sessionid, secret, "hook-s3cret", "log-s3cret"):
        assert clear not in stored
    assert is_sealed(await db.fetch_value("SELECT otp_secret FROM users"))
    await client.ok("check")  # the session, re-keyed by its digest
    await client.ok("login", code=totp.code_at(secret, totp.step_of(clock.now())), **login)
    assert (await seller.ok("fetchallwebhooks"))["webhooks"][0]["short_baselink"] == (
        "https://hooks.example.com/notify"
    )
    assert await seal_clear(db, services.secrets) == 0  # nothing left to do
