"""Client API — Forgot Password: the e-mail (through a real local SMTP server), the single-use link
and the page that sets a new password."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.services import Services
from tests.conftest import make_settings
from tests.helpers import Client, Seller, client_of
from tests.smtp import Inbox, mail_settings

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.fixture
def settings(db_url: str, tmp_path: Path, smtp: tuple[Inbox, int]) -> Settings:
    return make_settings(db_url, tmp_path / "data", **mail_settings(smtp[1], "https://licenses.example.test"))


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    key = (await seller.ok("add", expiry=30))["key"]
    await client.ok(
        "register", username="lee", key=key, hwid=HWID, email="Lee@Example.org", **{"pass": "old"}
    )
    return client


async def reset_link(app: Client, services: Services, inbox: Inbox) -> str:
    body = await app.ok("forgot", username="lee", email="lee@example.org")
    assert (
        body["message"] == "If the username and e-mail address match an account, a reset link has been sent."
    )
    await services.mailer.drain()
    assert len(inbox.messages) == 1
    mail = inbox.messages[0]
    assert mail["To"] == "Lee@Example.org"
    assert mail["From"] == "noreply@licensegate.test"
    text = mail.get_payload(decode=True).decode()  # type: ignore[union-attr]
    match = re.search(r"https://licenses\.example\.test/reset-password\?token=[\w-]+", text)
    assert match, text
    parts = urlsplit(match.group(0))
    return f"{parts.path}?{parts.query}"


async def test_reset_by_email_link_sets_a_new_password(
    app: Client, services: Services, smtp: tuple[Inbox, int], client: httpx.AsyncClient
) -> None:
    link = await reset_link(app, services, smtp[0])
    page = await client.get(link)
    assert page.status_code == 200
    assert "lee" in page.text
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["Referrer-Policy"] == "no-referrer"
    token = link.split("token=")[1]
    done = await client.post(
        "/reset-password", data={"token": token, "password": "new-pw", "confirm": "new-pw"}
    )
    assert done.status_code == 200
    assert "Password changed" in done.text
    await app.fails("check", 403, "session_not_found")  # the user's sessions ended
    await app.init()
    await app.fails("login", 403, "invalid_credentials", username="lee", hwid=HWID, **{"pass": "old"})
    await app.ok("login", username="lee", hwid=HWID, **{"pass": "new-pw"})
    again = await client.post("/reset-password", data={"token": token, "password": "x", "confirm": "x"})
    assert again.status_code == 400  # single use
    assert "expired or was already used" in again.text


async def test_the_link_expires_after_an_hour(
    app: Client, services: Services, smtp: tuple[Inbox, int], client: httpx.AsyncClient, clock: MovableClock
) -> None:
    link = await reset_link(app, services, smtp[0])
    clock.advance(3601)
    assert (await client.get(link)).status_code == 400


async def test_mismatched_passwords_keep_the_link_usable(
    app: Client, services: Services, smtp: tuple[Inbox, int], client: httpx.AsyncClient
) -> None:
    token = (await reset_link(app, services, smtp[0])).split("token=")[1]
    differ = await client.post("/reset-password", data={"token": token, "password": "a", "confirm": "b"})
    assert differ.status_code == 400
    assert "differ" in differ.text
    ok = await client.post("/reset-password", data={"token": token, "password": "a", "confirm": "a"})
    assert ok.status_code == 200


async def test_no_mail_when_username_and_address_do_not_match_but_the_same_answer(
    app: Client, services: Services, smtp: tuple[Inbox, int]
) -> None:
    same = "If the username and e-mail address match an account, a reset link has been sent."
    assert (await app.ok("forgot", username="lee", email="other@example.org"))["message"] == same
    assert (await app.ok("forgot", username="nobody", email="lee@example.org"))["message"] == same
    await services.mailer.drain()
    assert smtp[0].messages == []


async def test_a_bad_token_shows_the_expired_page(client: httpx.AsyncClient, app: Client) -> None:
    assert (await client.get("/reset-password?token=nonsense")).status_code == 400
    assert (await client.get("/reset-password")).status_code == 400
    response = await client.post(
        "/reset-password", data={"token": "nonsense", "password": "a", "confirm": "a"}
    )
    assert response.status_code == 400


async def test_forgot_needs_a_session_and_both_fields(app: Client) -> None:
    await app.fails("forgot", 400, "missing_parameter", username="lee")
    await app.fresh().fails("forgot", 401, "missing_session", username="lee", email="x@y.z")


class TestWithoutSmtp:
    @pytest.fixture
    def settings(self, db_url: str, tmp_path: Path) -> Settings:
        return make_settings(db_url, tmp_path / "data")

    async def test_forgot_is_refused_when_no_smtp_server_is_configured(self, app: Client) -> None:
        await app.fails("forgot", 403, "email_not_configured", username="lee", email="lee@example.org")
