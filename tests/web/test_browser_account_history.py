"""In Chromium, against a real server that sends e-mail to a local SMTP server: the account
page's e-mail change (a wrong password refused beside its field, the link from the e-mail
confirmed on its page, a used link refused, the old address told), a security key added and
renamed, and the sign-in history; then a reseller's Balance page and its history after keys made
in the dashboard and through the seller API, and the owner reading that history on the Seller
team page. Every page audited for accessibility."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from email.message import Message

import pytest
from playwright.sync_api import Browser, expect

from tests import databases
from tests.conftest import serve_live
from tests.live import LiveServer, execute_sql, seller_call
from tests.smtp import Inbox, smtp_server
from tests.web.browser import Tab, open_tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_seller_pages import open_shop

pytestmark = [pytest.mark.browser, pytest.mark.server]
RESELLER_PASSWORD = "reseller password 42"


@pytest.fixture(scope="module")
def mailbox() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as server:
        yield server


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def dashboard_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, mailbox: tuple[Inbox, int]
) -> Iterator[LiveServer]:
    """The dashboard's live server (public URL on localhost, for security keys), with e-mail."""
    yield from serve_live(
        request,
        tmp_path_factory,
        public_host="localhost",
        LICENSEGATE_SMTP_HOST="127.0.0.1",
        LICENSEGATE_SMTP_PORT=str(mailbox[1]),
        LICENSEGATE_SMTP_SECURITY="none",
        LICENSEGATE_SMTP_FROM="noreply@licensegate.test",
    )


def mail_to(inbox: Inbox, to: str, within: float = 20.0) -> Message:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = [m for m in inbox.messages if m["To"] == to]
        if found:
            return found[-1]
        time.sleep(0.1)
    raise AssertionError(f"no e-mail to {to}: {[m['To'] for m in inbox.messages]}")


def text(mail: Message) -> str:
    payload = mail.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def test_email_change_security_key_names_and_sign_in_history(
    tab: Tab, dashboard_server: LiveServer, mailbox: tuple[Inbox, int]
) -> None:
    inbox = mailbox[0]
    dashboard_server.create_account("mailer", PASSWORD)
    # (on a thread: Playwright's loop runs on this one, and execute_sql runs its own for PostgreSQL)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(
            execute_sql,
            dashboard_server.database_url,
            "UPDATE accounts SET email = ? WHERE username = ?",
            "old@example.com",
            "mailer",
        ).result()
    page = tab.page
    sign_in(tab, "mailer", "not the password")
    expect(page.get_by_role("alert")).to_contain_text("Wrong username or password.")
    sign_in(tab, "mailer")
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    tab.goto("/dashboard/account")

    # The e-mail address: a wrong password is refused beside its field; nothing is sent.
    expect(page.get_by_text("Your address: old@example.com")).to_be_visible()
    page.get_by_label("New e-mail address").fill("new@example.com")
    page.locator("#f-email_password").fill("wrong wrong wrong")
    page.get_by_role("button", name="Send the confirmation link").click()
    expect(page.locator("#f-email_password-error")).to_contain_text("The password is wrong.")
    expect(page.get_by_label("New e-mail address")).to_have_value("new@example.com")
    tab.audit("account-email-refused")
    page.locator("#f-email_password").fill(PASSWORD)
    page.get_by_role("button", name="Send the confirmation link").click()
    expect(page.get_by_role("status").first).to_contain_text("A link is on its way to new@example.com")
    expect(page.get_by_text("A confirmation link was sent to new@example.com")).to_be_visible()
    tab.audit("account-email")
    mail = mail_to(inbox, "new@example.com")
    found = re.search(r"http://localhost:\d+/dashboard/account/email/confirm\?token=[\w-]+", text(mail))
    assert found, text(mail)
    link = found.group(0)
    page.goto(link)
    expect(page.get_by_role("heading", name="Confirm your e-mail address")).to_be_visible()
    tab.audit("account-email-confirm")
    page.get_by_role("button", name="Confirm the address").click()
    expect(page.get_by_role("heading", name="E-mail address confirmed")).to_be_visible()
    notice = mail_to(inbox, "old@example.com")
    assert "ne*@example.com" in text(notice)
    page.goto(link)
    expect(page.get_by_role("heading", name="Link expired")).to_be_visible()
    tab.goto("/dashboard/account")
    expect(page.get_by_text("Your address: new@example.com")).to_be_visible()

    # A security key (a virtual authenticator), added with a name and renamed in its row.
    tab.add_security_key()
    page.get_by_label("Name for this key").fill("Desk key")
    page.get_by_role("button", name="Add key").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    page.get_by_role("link", name="I have saved them").click()
    rename = page.get_by_label("New name for Desk key")
    rename.fill("")
    rename.fill("Blue YubiKey")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("status").first).to_contain_text("The security key is now called Blue YubiKey.")
    expect(page.get_by_role("cell", name="Blue YubiKey", exact=True)).to_be_visible()

    # The sign-in history: the wrong password and the sign-in, newest first.
    history = page.get_by_role("table", name="Sign-in attempts")
    expect(history.get_by_role("row")).to_have_count(3)
    expect(history.get_by_role("row").nth(1)).to_contain_text("Signed in")
    expect(history.get_by_role("row").nth(2)).to_contain_text("Wrong password")
    expect(history).to_contain_text(re.compile(r"Chrome \d+ on Linux"))
    expect(history).not_to_contain_text("Mozilla/5.0")
    tab.audit("account-signin-history")
    tab.check_console()


def test_reseller_balance_page_and_history(tab: Tab, chromium: Browser, dashboard_server: LiveServer) -> None:
    owner = tab.page
    sellerkey = open_shop(tab, dashboard_server, "balowner", "Balance Shop")
    made = seller_call(
        dashboard_server,
        sellerkey,
        "addAccount",
        role="reseller",
        user="rosa",
        keylevels="1",
        **{"pass": RESELLER_PASSWORD},
    ).json()
    assert made["success"] is True, made
    resellerkey = made["sellerkey"]
    # The owner adds to the balance on the Seller team page.
    owner.get_by_role("navigation", name="Application").get_by_role("link", name="Seller team").click()
    owner.get_by_role("link", name="rosa").click()
    owner.get_by_label("Month (optional)").fill("5")
    owner.get_by_label("Lifetime (optional)").fill("1")
    owner.get_by_role("button", name="Change the balance").click()
    expect(owner.locator("#balance-month")).to_have_text("5")

    reseller = open_tab(chromium, dashboard_server.public_url, shots=tab.shots)
    try:
        page = reseller.page
        sign_in(reseller, "rosa", RESELLER_PASSWORD)
        page.get_by_role("link", name="Balance Shop").click() if page.get_by_role(
            "link", name="Balance Shop"
        ).count() else None
        nav = page.get_by_role("navigation", name="Application")
        nav.get_by_role("link", name="Balance").click()
        expect(page.get_by_role("heading", name="Your balance")).to_be_visible()
        expect(page.locator("#balance-month")).to_have_text("5")
        expect(page.get_by_role("table", name="Every change of the balance, newest first")).to_contain_text(
            "changed by the owner"
        )
        page.get_by_role("link", name="Create license keys").click()
        expect(page.get_by_role("heading", name="Create license keys")).to_be_visible()
        page.get_by_label("How many keys").fill("2")
        page.get_by_label("Length").fill("1")
        page.get_by_label("Unit").select_option("months")
        page.get_by_role("button", name="Create keys").click()
        expect(page.get_by_role("heading", name="2 new keys")).to_be_visible()
        by_api = seller_call(dashboard_server, resellerkey, "add", expiry="30", amount="1", level="1").json()
        assert by_api["success"] is True, by_api
        page.get_by_role("navigation", name="Application").get_by_role("link", name="Balance").click()
        expect(page.locator("#balance-month")).to_have_text("2")
        history = page.get_by_role("table", name="Every change of the balance, newest first")
        rows = history.get_by_role("row")
        expect(rows).to_have_count(5)
        expect(rows.nth(1)).to_contain_text("rosa (seller API")
        expect(rows.nth(1)).to_contain_text("1 key generated (level 1)")
        expect(rows.nth(2)).to_contain_text("rosa (dashboard)")
        expect(rows.nth(2)).to_contain_text("2 keys generated (level 1)")
        reseller.audit("reseller-balance")
        reseller.check_console()
    finally:
        reseller.context.close()

    owner.reload()
    history = owner.get_by_role("table", name="Every change of the balance, newest first")
    expect(history.get_by_role("row")).to_have_count(5)
    expect(history).to_contain_text("2 keys generated (level 1)")
    tab.audit("reseller-balance-owner")
    tab.check_console()
