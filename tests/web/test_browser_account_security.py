"""In Chromium, against a real server: the account page's security actions not covered elsewhere.
The password changed (a wrong current one refused first, the other session signed out); one
other session ended from the list of sessions; an authenticator app turned on, new recovery
codes made with a recovery code, the app turned off; a security key added then removed. Every
page audited for accessibility."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer
from tests.web.browser import Tab, next_code, open_tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]
NEW = "a brand new passphrase 42"
CODE = re.compile(r"[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}")


def recovery_codes(tab: Tab) -> list[str]:
    page = tab.page
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    codes = CODE.findall(page.locator("#recovery-codes").inner_text())
    assert len(codes) == 10
    page.get_by_role("link", name="I have saved them").click()
    return codes


def test_password_and_sessions(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("guard", PASSWORD)
    page = tab.page
    sign_in(tab, "guard")
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    other = open_tab(page.context.browser, dashboard_server.public_url)  # type: ignore[arg-type]
    try:
        sign_in(other, "guard")
        expect(other.page.get_by_role("heading", name="Applications")).to_be_visible()

        # One other session ended from the list.
        tab.goto("/dashboard/account")
        sessions = page.get_by_role("region", name="Where you are signed in")
        expect(sessions.locator("tbody tr")).to_have_count(2)
        sessions.get_by_role("button", name=re.compile(r"^Sign out session \d+$")).click()
        expect(page.get_by_role("status")).to_contain_text("That session is signed out.")
        expect(sessions.locator("tbody tr")).to_have_count(1)
        other.goto("/dashboard/account")
        expect(other.page.get_by_role("heading", name="Sign in")).to_be_visible()

        # The password: a wrong current one refused, then changed (the other session signed out).
        sign_in(other, "guard")
        expect(other.page.get_by_role("heading", name="Applications")).to_be_visible()
        tab.goto("/dashboard/account")
        page.get_by_label("Current password").fill("not my password")
        page.get_by_label("New password", exact=True).fill(NEW)
        page.get_by_label("New password again").fill(NEW)
        page.get_by_role("button", name="Change password").click()
        expect(page.locator("#flash")).to_contain_text("password")
        expect(page.get_by_label("Current password")).to_be_visible()
        page.get_by_label("Current password").fill(PASSWORD)
        page.get_by_label("New password", exact=True).fill(NEW)
        page.get_by_label("New password again").fill(NEW)
        page.get_by_role("button", name="Change password").click()
        expect(page.get_by_role("status")).to_contain_text(
            "Your password is changed; 1 other session signed out."
        )
        other.goto("/dashboard/account")
        expect(other.page.get_by_role("heading", name="Sign in")).to_be_visible()
        other.check_console()
    finally:
        other.context.close()
    tab.check_console()


def test_authenticator_recovery_codes_and_security_key(tab: Tab, dashboard_server: LiveServer) -> None:
    """(An account of its own: every password or code check counts against the sign-in limit.)"""
    dashboard_server.create_account("keeper", PASSWORD)
    page = tab.page
    tab.add_security_key()
    sign_in(tab, "keeper")
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    tab.goto("/dashboard/account")

    # An authenticator app on; new recovery codes made with a recovery code; the app off again.
    page.get_by_role("button", name="Set up an authenticator app").click()
    secret = page.locator("#totp-secret").inner_text().replace(" ", "")
    page.get_by_label("Six-digit code from the app").fill(next_code(secret, time.time()))
    page.get_by_role("button", name="Turn on").click()
    first = recovery_codes(tab)
    expect(page.get_by_text("Status: on (authenticator app)")).to_be_visible()
    page.locator("#new-codes-password").fill(PASSWORD)
    page.locator("#new-codes-code").fill(first[0])
    page.get_by_role("button", name="Make new codes").click()
    second = recovery_codes(tab)
    assert not set(first) & set(second)
    tab.audit("account-two-step-on")
    page.locator("#totp-off-password").fill(PASSWORD)
    page.locator("#totp-off-code").fill(second[0])
    page.get_by_role("button", name="Turn off").click()
    expect(page.get_by_role("status")).to_contain_text(
        "The authenticator app is off. Two-step sign-in is off."
    )

    # A security key added, then removed with a recovery code.
    page.get_by_label("Name for this key").fill("Desk key")
    page.get_by_role("button", name="Add key").click()
    codes = recovery_codes(tab)
    expect(page.get_by_role("cell", name="Desk key", exact=True)).to_be_visible()
    page.get_by_label("Key", exact=True).select_option(label="Desk key")
    page.locator("#key-remove-password").fill(PASSWORD)
    page.locator("#key-remove-code").fill(codes[0])
    page.get_by_role("button", name="Remove key").click()
    expect(page.get_by_role("status")).to_contain_text(
        "The security key is removed. Two-step sign-in is off."
    )
    expect(page.get_by_role("cell", name="Desk key", exact=True)).to_have_count(0)
    tab.audit("account-security-key-removed")
    tab.check_console()
