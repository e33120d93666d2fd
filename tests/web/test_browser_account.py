"""In Chromium, against a real server: first run, two-step sign-in with an authenticator app and
with a security key (a virtual authenticator), confirmations with and without script, and CSRF.
Every page on the way passes the accessibility audit."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, expect

from tests.live import LiveServer
from tests.web.browser import Tab, next_code, open_tab, setup_link

pytestmark = [pytest.mark.browser, pytest.mark.server]
PASSWORD = "a long enough passphrase"


def sign_in(tab: Tab, username: str, password: str = PASSWORD) -> None:
    tab.goto("/dashboard/signin")
    tab.page.get_by_label("Username").fill(username)
    tab.page.get_by_label("Password").fill(password)
    tab.page.get_by_role("button", name="Sign in").click()


def test_first_run_then_sign_in_with_an_authenticator_app(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    page.goto(setup_link(dashboard_server.log))
    expect(page.get_by_role("heading", name="Create the owner account")).to_be_visible()
    tab.audit("setup")
    page.get_by_label("Username").fill("founder")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password again").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Welcome, founder.")
    tab.audit("applications-empty")

    page.get_by_role("link", name="founder").click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    tab.audit("account")
    page.get_by_role("button", name="Set up an authenticator app").click()
    expect(page.get_by_role("img", name="QR code for your authenticator app")).to_be_visible()
    tab.audit("account-totp")
    secret = page.locator("#totp-secret").inner_text().replace(" ", "")
    page.get_by_label("Six-digit code from the app").fill(next_code(secret, time.time()))
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    codes = re.findall(
        r"[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}", page.locator("#recovery-codes").inner_text()
    )
    assert len(codes) == 10
    tab.audit("account-recovery-codes")
    page.get_by_role("link", name="I have saved them").click()
    expect(page.get_by_text("Status: on (authenticator app)")).to_be_visible()

    page.get_by_role("button", name="Sign out").first.click()
    expect(page.get_by_role("status")).to_contain_text("You are signed out.")
    tab.audit("signin")
    sign_in(tab, "founder", "not the password")
    expect(page.get_by_role("alert")).to_contain_text("Wrong username or password.")
    expect(page.get_by_label("Username")).to_have_value("founder")
    sign_in(tab, "founder")
    expect(page.get_by_role("heading", name="Second step")).to_be_visible()
    tab.audit("signin-second-step")
    page.get_by_label("Code from your authenticator app, or a recovery code").fill("000000")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("alert")).to_contain_text("That code is not right")
    page.get_by_label("Code from your authenticator app, or a recovery code").fill(codes[0])
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("9 are left")
    tab.check_console()


def test_sign_in_with_a_security_key(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("keyholder", PASSWORD)
    page = tab.page
    tab.add_security_key()
    sign_in(tab, "keyholder")
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    tab.goto("/dashboard/account")
    page.get_by_label("Name for this key").fill("Test key")
    page.get_by_role("button", name="Add key").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    page.get_by_role("link", name="I have saved them").click()
    expect(page.get_by_text("Status: on (1 security key)")).to_be_visible()
    expect(page.get_by_role("cell", name="Test key", exact=True)).to_be_visible()

    page.get_by_role("button", name="Sign out").first.click()
    sign_in(tab, "keyholder")
    expect(page.get_by_role("heading", name="Second step")).to_be_visible()
    page.get_by_role("button", name="Use a security key or passkey").click()
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    tab.goto("/dashboard/account")
    expect(page.get_by_role("row", name=re.compile("Test key"))).not_to_contain_text("—")  # last used now
    tab.check_console()


def test_confirmations_ask_in_a_dialog(tab: Tab, chromium: Browser, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("twice", PASSWORD)
    other = open_tab(chromium, dashboard_server.public_url)
    try:
        sign_in(other, "twice")
        sign_in(tab, "twice")
        page = tab.page
        tab.goto("/dashboard/account")
        page.get_by_role("button", name="Sign out everywhere else").click()
        dialog = page.get_by_role("dialog", name="Please confirm")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("Sign out every other session of your account?")
        tab.audit("dialog-confirm")
        dialog.get_by_role("button", name="Cancel").click()
        expect(dialog).to_be_hidden()
        other.goto("/dashboard/account")
        expect(other.page.get_by_role("heading", name="Your account")).to_be_visible()
        page.get_by_role("button", name="Sign out everywhere else").click()
        dialog.get_by_role("button", name="Confirm").click()
        expect(page.get_by_role("status")).to_contain_text("1 other session signed out.")
        other.goto("/dashboard/account")
        expect(other.page.get_by_role("heading", name="Sign in")).to_be_visible()
    finally:
        other.context.close()


def test_everything_works_without_javascript(chromium: Browser, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("noscript", PASSWORD)
    tab = open_tab(chromium, dashboard_server.public_url, javascript=False)
    try:
        page = tab.page
        sign_in(tab, "noscript")
        expect(page.get_by_role("heading", name="Applications")).to_be_visible()
        tab.goto("/dashboard/account")
        expect(page.get_by_text("Adding a key needs JavaScript")).to_be_visible()
        page.get_by_role("button", name="Sign out everywhere else").click() if page.get_by_role(
            "button", name="Sign out everywhere else"
        ).count() else None
        # With one session there is nothing to sign out elsewhere; make a second one.
        with_script = open_tab(chromium, dashboard_server.public_url)
        try:
            sign_in(with_script, "noscript")
        finally:
            with_script.context.close()
        tab.goto("/dashboard/account")
        page.get_by_role("button", name="Sign out everywhere else").click()
        expect(page.get_by_role("heading", name="Sign out everywhere else")).to_be_visible()
        page.get_by_role("button", name="Sign out the others").click()
        expect(page.get_by_role("status")).to_contain_text("1 other session signed out.")
    finally:
        tab.context.close()


def test_a_post_without_the_csrf_token_is_refused(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("csrf", PASSWORD)
    sign_in(tab, "csrf")
    expect(tab.page.get_by_role("heading", name="Applications")).to_be_visible()
    refused = tab.page.request.post(tab.base + "/dashboard/signout", form={"confirmed": "1"})
    assert refused.status == 403
    assert "This form expired or was sent from another site" in refused.text()
    tab.goto("/dashboard/account")
    expect(tab.page.get_by_role("heading", name="Your account")).to_be_visible()
