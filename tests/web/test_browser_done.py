"""Issue 11's "Done means", end to end in Chromium against a real `licensegate serve`: the setup
link it prints -> the owner account -> two-step sign-in with an authenticator app -> an
application -> license keys -> a program's License Login with one of them over HTTP
(`licensegate_client.client`) -> the user banned in the dashboard -> the program's next calls refused.
Then the roles: a manager limited to licenses cannot reach users, a reseller sees only its own
keys; and a post without the CSRF token is refused. Every page on the way passes the audit."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from playwright.sync_api import Browser, Page, expect

from licensegate_client import client as lg
from tests.live import LiveServer, seller_call
from tests.web.browser import Tab, current_code, next_code, open_tab, setup_link
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]
HWID = "S-1-5-21-done-means"
T = TypeVar("T")


def in_thread(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to the end on a thread of its own (Playwright's sync API keeps an event
    loop running on this one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result(timeout=60)


class Program:
    """A program built with licensegate_client.client, as a seller ships it (API 1.3, verifying answers)."""

    def __init__(self, base: str, ownerid: str, name: str, public_key: str) -> None:
        self.base, self.ownerid, self.name, self.public_key = base, ownerid, name, public_key
        self.sessionid: str | None = None

    def _client(self) -> lg.Client:
        return lg.Client(self.base, ownerid=self.ownerid, name=self.name, public_key=self.public_key)

    def start(self, key: str) -> lg.Answer:
        async def run() -> lg.Answer:
            async with self._client() as program:
                assert (await program.init()).success
                answer = await program.license(key, hwid=HWID)
                self.sessionid = program.sessionid
                return answer

        return in_thread(run())

    def check(self) -> lg.Answer:
        async def run() -> lg.Answer:
            async with self._client() as program:
                program.sessionid = self.sessionid
                return await program.check()

        return in_thread(run())


def two_step_sign_in(tab: Tab, username: str, secret: str) -> None:
    sign_in(tab, username)
    page = tab.page
    expect(page.get_by_role("heading", name="Second step")).to_be_visible()
    page.get_by_label("Code from your authenticator app, or a recovery code").fill(
        next_code(secret, time.time())
    )
    page.get_by_role("button", name="Confirm").click()


def nav(page: Page) -> Any:
    return page.get_by_role("navigation", name="Application")


def generate_keys(tab: Tab, amount: int) -> list[str]:
    """License keys of 30 days made on the Licenses page of the application open in `tab`."""
    page = tab.page
    nav(page).get_by_role("link", name="Licenses").click()
    page.get_by_role("link", name="Create keys").click()
    tab.audit("licenses-create")
    page.get_by_label("How many keys").fill(str(amount))
    page.get_by_label("Length").fill("30")
    page.get_by_label("Unit").select_option("days")
    page.get_by_role("button", name="Create keys").click()
    expect(page.get_by_role("heading", name=f"{amount} new keys")).to_be_visible()
    tab.audit("licenses-created")
    keys = page.get_by_label("The keys, one a line").input_value().split()
    assert len(keys) == amount
    return keys


def ban_user(tab: Tab, username: str) -> None:
    """Ban on the Users page, leaving the shared address out of the blacklist."""
    page = tab.page
    nav(page).get_by_role("link", name="Users").click()
    expect(page.get_by_role("heading", name="Users", exact=True)).to_be_visible()
    tab.audit("users")
    page.locator("summary").filter(has_text=re.compile(rf"^Actions for {re.escape(username)}$")).click()
    page.get_by_role("link", name=f"Ban {username}…").click()
    expect(page.get_by_role("heading", name=f"Ban {username}")).to_be_visible()
    tab.audit("user-ban")
    page.get_by_label("Reason").fill("chargeback")
    ip_too = page.get_by_label(re.compile("^Blacklist the IP"))
    if ip_too.count():
        ip_too.uncheck()
    page.get_by_role("button", name=f"Ban {username}").click()
    expect(page.get_by_role("status")).to_contain_text(username)


def test_done_means(tab: Tab, chromium: Browser, dashboard_server: LiveServer) -> None:
    page = tab.page
    # First run: the setup link serve printed, then the owner account.
    page.goto(setup_link(dashboard_server.log))
    expect(page.get_by_role("heading", name="Create the owner account")).to_be_visible()
    page.get_by_label("Username").fill("donemeans")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password again").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()

    # An authenticator app, then signing in again with a code from it.
    tab.goto("/dashboard/account")
    page.get_by_role("button", name="Set up an authenticator app").click()
    secret = page.locator("#totp-secret").inner_text().replace(" ", "")
    # The current step's code turns it on; the sign-in below uses a later step's (a code works once).
    page.get_by_label("Six-digit code from the app").fill(current_code(secret, time.time()))
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    page.get_by_role("link", name="I have saved them").click()
    page.get_by_role("button", name="Sign out").first.click()
    expect(page.get_by_role("status")).to_contain_text("You are signed out.")
    two_step_sign_in(tab, "donemeans", secret)
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()

    # An application; what a program needs to reach it is on its integration page.
    page.get_by_label("Application name").fill("Done App")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Done App is ready")).to_be_visible()
    sellerkey = page.locator("#sellerkey").inner_text().strip()
    page.get_by_role("link", name="Go to Done App").click()
    app_path = re.sub(r"^https?://[^/]+", "", page.url)
    page.get_by_role("link", name="Connect your program").click()
    ownerid = page.locator("#ownerid").inner_text().strip()
    public_key = page.locator("#public-key").inner_text().strip()

    keys = generate_keys(tab, 3)
    nav(page).get_by_role("link", name="Licenses").click()
    table = page.get_by_role("table", name=re.compile("License keys"))
    for key in keys:
        expect(table).to_contain_text(key)
    tab.check_console()

    # A program logs in with one of the keys, over HTTP.
    program = Program(dashboard_server.url, ownerid, "Done App", public_key)
    login = program.start(keys[0])
    assert login.success, login.message
    assert program.check().success

    # Banned in the dashboard: the program's next calls are refused.
    ban_user(tab, keys[0])
    after = program.check()
    assert not after.success
    again = program.start(keys[0])
    assert not again.success
    assert after.error == "session_not_found"  # the ban ended the program's session
    assert again.error == "user_banned"
    assert "chargeback" in again.message

    # A manager limited to licenses cannot reach users.
    made = seller_call(
        dashboard_server,
        sellerkey,
        "addAccount",
        role="Manager",
        user="lic-manager",
        perms="licenses",
        **{"pass": PASSWORD},
    )
    assert made.json()["success"] is True, made.text
    manager = open_tab(chromium, dashboard_server.public_url, shots=tab.shots)
    try:
        sign_in(manager, "lic-manager")
        expect(manager.page.get_by_role("navigation", name="Application")).to_be_visible()
        links = nav(manager.page).get_by_role("link")
        expect(nav(manager.page).get_by_role("link", name="Licenses")).to_be_visible()
        assert "Users" not in links.all_inner_texts()
        assert "User variables" not in links.all_inner_texts()
        refused = manager.page.goto(manager.base + app_path + "users")
        assert refused is not None
        assert refused.status == 403
        expect(manager.page.get_by_role("heading", name="Not allowed")).to_be_visible()
        manager.audit("forbidden")
        posted = manager.page.request.post(
            manager.base + app_path + "subscriptions",
            form={
                "name": "sneaky",
                "level": "1",
                "csrf": manager.page.locator('meta[name="csrf-token"]').get_attribute("content") or "",
            },
        )
        assert posted.status == 403
    finally:
        manager.context.close()

    # A reseller sees only the keys it made.
    made = seller_call(
        dashboard_server, sellerkey, "addAccount", role="Reseller", user="rese11er", **{"pass": PASSWORD}
    )
    assert made.json()["success"] is True, made.text
    funded = seller_call(dashboard_server, sellerkey, "setbalance", username="rese11er", month="5")
    assert funded.json()["success"] is True, funded.text
    reseller = open_tab(chromium, dashboard_server.public_url, shots=tab.shots)
    try:
        sign_in(reseller, "rese11er")
        own = generate_keys(reseller, 2)
        nav(reseller.page).get_by_role("link", name="Licenses").click()
        shown = reseller.page.get_by_role("table", name=re.compile("License keys"))
        expect(shown).to_contain_text("(2 in all)")
        for key in own:
            expect(shown).to_contain_text(key)
        for key in keys:
            expect(shown).not_to_contain_text(key)
        reseller.audit("licenses-reseller")
    finally:
        reseller.context.close()

    # A post without the CSRF token is refused, and changes nothing.
    tab.goto(app_path + "integration")
    page.locator('form[action$="/rename"] input[name="csrf"]').evaluate("field => field.remove()")
    page.get_by_label("New name").fill("Hijacked")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="Form refused")).to_be_visible()
    tab.goto(app_path)
    expect(page.get_by_role("heading", name="Done App")).to_be_visible()
    tab.check_console()
