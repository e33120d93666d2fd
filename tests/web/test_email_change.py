"""Changing the account's e-mail address end to end, through a real local SMTP server: the
password (and the second step) asked first, the link sent to the new address, a page that
confirms with a button (opening the link changes nothing), the link single-use and valid one
hour, the old address told."""

from __future__ import annotations

import re
from email.message import Message
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.domain import accounts
from licensegate.mailer import Mailer
from licensegate.services import Services
from tests.conftest import make_settings
from tests.smtp import Inbox, mail_settings
from tests.web.pages import PASSWORD, Dashboard, browser, text_of
from tests.web.test_second_factor import enrol

pytestmark = pytest.mark.anyio
LINK = re.compile(r"http://testserver/dashboard/account/email/confirm\?token=[\w-]+")


@pytest.fixture
def settings(db_url: str, tmp_path: Path, smtp: tuple[Inbox, int]) -> Settings:
    return make_settings(db_url, tmp_path / "data", **mail_settings(smtp[1], "http://testserver"))


@pytest.fixture
def inbox(smtp: tuple[Inbox, int]) -> Inbox:
    return smtp[0]


async def owner(services: Services, email: str | None = "old@example.org") -> None:
    await accounts.create_owner(
        services.db,
        services.passwords,
        username="alice",
        password=PASSWORD,
        email=email,
        now=services.clock.now(),
    )


def body(mail: Message) -> str:
    payload = mail.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


async def ask(dash: Dashboard, new_email: str, password: str = PASSWORD, **more: str) -> str:
    await dash.get("/dashboard/account")
    page = await dash.post(
        "/dashboard/account/email", {"new_email": new_email, "email_password": password, **more}
    )
    return page.text


async def link_in(services: Services, inbox: Inbox, to: str) -> str:
    await services.mailer.drain()
    mails = [m for m in inbox.messages if m["To"] == to]
    assert mails, [m["To"] for m in inbox.messages]
    found = LINK.search(body(mails[-1]))
    assert found is not None, body(mails[-1])
    parts = urlsplit(found.group(0))
    return f"{parts.path}?{parts.query}"


async def email_of(services: Services) -> str | None:
    value: str | None = await services.db.fetch_value("SELECT email FROM accounts WHERE username = 'alice'")
    return value


async def test_the_address_changes_once_the_link_is_opened_and_the_old_one_is_told(
    services: Services, dash: Dashboard, inbox: Inbox
) -> None:
    await owner(services)
    await dash.sign_in("alice")
    asked = await ask(dash, " new@example.org ")
    assert "A link is on its way to new@example.org" in text_of(asked)
    assert "A confirmation link was sent to new@example.org" in text_of(asked)
    assert await email_of(services) == "old@example.org"  # not before the link is opened
    link = await link_in(services, inbox, "new@example.org")
    mail = inbox.messages[-1]
    assert mail["From"] == "noreply@licensegate.test"
    assert "alice" in body(mail)
    token = link.split("token=", 1)[1]
    stored = await services.db.fetch_value("SELECT token_hash FROM email_changes")
    assert token not in stored  # only a digest at rest
    assert len(stored) == 64
    # Opening the link shows a button; it changes nothing by itself (mail scanners open links).
    async with browser(services) as other:
        shown = await other.get(link)
        assert shown.status_code == 200
        assert "Make new@example.org the e-mail address of the licensegate account alice ?" in text_of(
            shown.text
        )
        assert await email_of(services) == "old@example.org"
        done = await other.post("/dashboard/account/email/confirm", {"token": token})
        assert done.status_code == 200
        assert "new@example.org is now the address of the account alice" in text_of(done.text)
        assert await email_of(services) == "new@example.org"
        await services.mailer.drain()
        notice = [m for m in inbox.messages if m["To"] == "old@example.org"]
        assert len(notice) == 1
        assert "ne*@example.org" in body(notice[0])
        assert "new@example.org" not in body(notice[0])
        # Single use: the same link again is refused, and changes nothing.
        again = await other.get(link)
        assert again.status_code == 400
        assert "expired or was used" in text_of(again.text)
        await other.get("/dashboard/signin")
        replay = await other.post("/dashboard/account/email/confirm", {"token": token})
        assert replay.status_code == 400
    page = await dash.get("/dashboard/account")
    assert "Your address: new@example.org" in text_of(page.text)


async def test_a_wrong_password_or_a_bad_address_is_refused_next_to_its_field(
    services: Services, dash: Dashboard, inbox: Inbox
) -> None:
    await owner(services)
    await dash.sign_in("alice")
    wrong = await dash.post(
        "/dashboard/account/email", {"new_email": "new@example.org", "email_password": "not it at all"}
    )
    assert wrong.status_code == 400
    assert re.search(r'id="f-email_password-error">The password is wrong.<', wrong.text)
    assert 'value="new@example.org"' in wrong.text  # what was typed stays
    bad = await dash.post("/dashboard/account/email", {"new_email": "no-at-sign", "email_password": PASSWORD})
    assert bad.status_code == 400
    assert "f-new_email-error" in bad.text
    same = await dash.post(
        "/dashboard/account/email", {"new_email": "OLD@example.org", "email_password": PASSWORD}
    )
    assert same.status_code == 400
    assert "That is your address already." in text_of(same.text)
    long = await dash.post(
        "/dashboard/account/email", {"new_email": "a" * 250 + "@example.org", "email_password": PASSWORD}
    )
    assert long.status_code == 400
    await services.mailer.drain()
    assert inbox.messages == []
    assert await services.db.fetch_value("SELECT COUNT(*) FROM email_changes") == 0


async def test_an_expired_link_is_refused(
    services: Services, dash: Dashboard, inbox: Inbox, clock: MovableClock
) -> None:
    await owner(services)
    await dash.sign_in("alice")
    await ask(dash, "new@example.org")
    link = await link_in(services, inbox, "new@example.org")
    clock.advance(3601)
    shown = await dash.get(link)
    assert shown.status_code == 400
    await dash.get("/dashboard/account")
    late = await dash.post("/dashboard/account/email/confirm", {"token": link.split("token=", 1)[1]})
    assert late.status_code == 400
    assert await email_of(services) == "old@example.org"
    assert await services.db.fetch_value("SELECT COUNT(*) FROM email_changes") == 0  # spent anyway


async def test_a_new_request_replaces_the_link_and_a_password_change_or_cancel_ends_it(
    services: Services, dash: Dashboard, inbox: Inbox
) -> None:
    await owner(services, email=None)
    await dash.sign_in("alice")
    await ask(dash, "first@example.org")
    first = await link_in(services, inbox, "first@example.org")
    await ask(dash, "second@example.org")
    second = await link_in(services, inbox, "second@example.org")
    assert (await dash.get(first)).status_code == 400  # replaced
    assert (await dash.get(second)).status_code == 200
    await dash.get("/dashboard/account")
    cancelled = await dash.post("/dashboard/account/email/cancel")
    assert "The change of address is cancelled" in text_of(cancelled.text)
    assert (await dash.get(second)).status_code == 400
    await ask(dash, "third@example.org")
    third = await link_in(services, inbox, "third@example.org")
    await dash.get("/dashboard/account")
    await dash.post(
        "/dashboard/account/password",
        {"current": PASSWORD, "new": "another long password", "confirm": "another long password"},
    )
    assert (await dash.get(third)).status_code == 400
    # An account that had no address: nobody to tell.
    await ask(dash, "fourth@example.org", password="another long password")
    fourth = await link_in(services, inbox, "fourth@example.org")
    await dash.get(fourth)
    await dash.post("/dashboard/account/email/confirm", {"token": fourth.split("token=", 1)[1]})
    assert await email_of(services) == "fourth@example.org"
    await services.mailer.drain()
    assert len(inbox.messages) == 4


async def test_the_second_step_is_asked_when_the_account_has_one(
    services: Services, dash: Dashboard, inbox: Inbox, clock: MovableClock
) -> None:
    await owner(services)
    await dash.sign_in("alice")
    await enrol(dash, clock)
    page = await dash.get("/dashboard/account")
    assert 'name="email_code"' in page.text
    missing = await dash.post(
        "/dashboard/account/email",
        {"new_email": "new@example.org", "email_password": PASSWORD, "email_code": "000000"},
    )
    assert missing.status_code == 400
    assert "f-email_code-error" in missing.text
    await services.mailer.drain()
    assert inbox.messages == []


async def test_without_smtp_the_address_cannot_be_changed(services: Services, dash: Dashboard) -> None:
    services.mailer = Mailer(services.settings.with_overrides(smtp_host=None))
    await owner(services)
    await dash.sign_in("alice")
    page = await dash.get("/dashboard/account")
    assert "E-mail is not set up on this server" in text_of(page.text)
    refused = await dash.post(
        "/dashboard/account/email", {"new_email": "new@example.org", "email_password": PASSWORD}
    )
    assert refused.status_code == 400
    assert "cannot be confirmed" in text_of(refused.text)
