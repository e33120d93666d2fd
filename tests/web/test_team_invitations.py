"""Inviting a reseller or manager instead of typing its password: the link shown once and sent
through a real local SMTP server, stored as a digest only; opening it changes nothing; the
password chosen there signs in; the link works once, for three days, and a newer link or a
password set by the owner cancels it; bad passwords are refused next to their field."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.domain import invitations
from licensegate.services import Services
from tests.conftest import make_settings
from tests.smtp import Inbox, mail_settings
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, text_of
from tests.web.test_email_change import body

pytestmark = pytest.mark.anyio
LINK = re.compile(r"http://testserver/dashboard/invitation\?token=[\w-]+")
CHOSEN = "chosen by rita 42"


@pytest.fixture
def settings(db_url: str, tmp_path: Path, smtp: tuple[Inbox, int]) -> Settings:
    return make_settings(db_url, tmp_path / "data", **mail_settings(smtp[1], "http://testserver"))


def tp(shop: Shop, rest: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/team" + (f"/{rest}" if rest else "")


def link_on(page: str) -> str:
    found = LINK.search(page)
    assert found is not None, text_of(page)
    parts = urlsplit(found.group(0))
    return f"{parts.path}?{parts.query}"


def token_of(link: str) -> str:
    return link.split("token=", 1)[1]


async def invite_rita(dash: Dashboard, shop: Shop, email: str = "rita@example.com") -> str:
    made = await dash.post(
        tp(shop), {"role": "reseller", "username": "rita", "email": email, "access": "invite"}
    )
    assert made.status_code == 200, text_of(made.text)
    return link_on(made.text)


async def test_an_invited_reseller_chooses_its_password_through_the_link(
    services: Services, dash: Dashboard, smtp: tuple[Inbox, int]
) -> None:
    inbox = smtp[0]
    shop = await make_shop(services)
    await dash.sign_in("alice")
    made = await dash.post(
        tp(shop), {"role": "reseller", "username": "rita", "email": "rita@example.com", "access": "invite"}
    )
    shown = text_of(made.text)
    assert "The reseller rita is created. It cannot sign in until it chooses its password" in shown
    assert "It is also on its way by e-mail to rita@example.com" in shown
    link = link_on(made.text)
    stored = await services.db.fetch_value("SELECT token_hash FROM team_invitations")
    assert token_of(link) not in stored
    assert len(stored) == 64  # only a digest at rest
    await services.mailer.drain()
    mail = [m for m in inbox.messages if m["To"] == "rita@example.com"]
    assert len(mail) == 1
    assert link_on(body(mail[0])) == link
    assert "Shop" in mail[0]["Subject"]
    # The team list and the member page say a link waits; the link itself is not shown again.
    listed = text_of((await dash.get(tp(shop))).text)
    assert "rita rita@example.com" in listed
    assert "Invited: its link works until" in listed
    member = await dash.get(tp(shop, "rita"))
    assert "An invitation link is waiting to be used" in text_of(member.text)
    assert token_of(link) not in member.text
    audit = await services.db.fetch_value("SELECT COUNT(*) FROM audit_log WHERE action = 'inviteAccount'")
    assert audit == 1

    async with browser(services) as rita:
        # Nobody signs in as rita before the link is used (no password was ever shown).
        opened = await rita.get(link)
        assert opened.status_code == 200
        page = text_of(opened.text)
        assert "You are invited as the reseller rita of the application Shop" in page
        assert await invitations.check(services.db, token_of(link), services.clock.now()) is not None
        refused = await rita.post(
            "/dashboard/invitation", {"token": token_of(link), "password": CHOSEN, "confirm": "other"}
        )
        assert refused.status_code == 400
        assert 'id="f-confirm-error"' in refused.text
        assert "The two passwords differ." in text_of(refused.text)
        short = await rita.post(
            "/dashboard/invitation", {"token": token_of(link), "password": "short", "confirm": "short"}
        )
        assert short.status_code == 400
        assert 'id="f-password-error"' in short.text
        done = await rita.post(
            "/dashboard/invitation", {"token": token_of(link), "password": CHOSEN, "confirm": CHOSEN}
        )
        assert done.status_code == 200
        assert "Your password is set, rita: sign in with it." in text_of(done.text)
        assert "Invited: its link works until" not in text_of((await dash.get(tp(shop))).text)
        signed = await rita.sign_in("rita", CHOSEN)
        assert signed.url.path.startswith("/dashboard")
        assert (await rita.http.get(f"/dashboard/apps/{shop.app_id}/licenses")).status_code == 200
    # Used: the link is gone, and a second use is refused.
    async with browser(services) as again:
        reused = await again.get(link)
        assert reused.status_code == 400
        assert "expired, was used already or was replaced" in text_of(reused.text)
        await again.get("/dashboard/signin")
        replay = await again.post(
            "/dashboard/invitation", {"token": token_of(link), "password": "x" * 12, "confirm": "x" * 12}
        )
        assert replay.status_code == 400
    assert await services.db.fetch_value("SELECT COUNT(*) FROM team_invitations") == 0
    trail = await services.db.fetch_all(
        "SELECT actor, action, target FROM audit_log WHERE target = 'account:rita' ORDER BY id"
    )
    assert [tuple(row.values()) for row in trail][-2:] == [
        ("alice (dashboard)", "inviteAccount", "account:rita"),
        ("rita (invitation)", "acceptInvitation", "account:rita"),
    ]


async def test_the_link_expires_and_a_newer_one_or_a_password_cancels_it(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    first = await invite_rita(dash, shop, email="")
    await dash.get(tp(shop, "rita"))
    again = await dash.post(tp(shop, "rita/invite"), {})
    assert "The account has no e-mail address, so it was not sent" in text_of(again.text)
    second = link_on(again.text)
    async with browser(services) as other:
        assert (await other.get(first)).status_code == 400  # replaced
        assert (await other.get(second)).status_code == 200
        clock.advance(invitations.LIFETIME + 1)
        assert (await other.get(second)).status_code == 400  # expired
    clock.advance(-invitations.LIFETIME)
    await dash.get(tp(shop, "rita"))
    third = link_on((await dash.post(tp(shop, "rita/invite"), {})).text)
    await dash.get(tp(shop, "rita"))
    await dash.post(tp(shop, "rita/edit"), {"password": "typed by alice 42", "keylevels": ""})
    async with browser(services) as other:
        assert (await other.get(third)).status_code == 400  # the owner set a password instead


async def test_a_typed_password_is_still_required_without_an_invitation(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    refused = await dash.post(tp(shop), {"role": "reseller", "username": "rita", "access": "password"})
    assert refused.status_code == 400
    assert 'id="f-password-error"' in refused.text
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts WHERE username = 'rita'") == 0


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_only_the_owner_invites(services: Services, who: str) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(services, shop, who, who, permissions="all" if who == "manager" else None)
    async with browser(services) as dash:
        await dash.sign_in(who)
        await dash.get("/dashboard/account")
        answer = await dash.post(tp(shop, "rita/invite"), {}, follow=False)
        assert answer.status_code == 403
        assert "invitation" not in answer.text
    assert await services.db.fetch_value("SELECT COUNT(*) FROM team_invitations") == 0
