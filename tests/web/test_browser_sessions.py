"""In Chromium, against a real server: the Sessions page after programs started and logged in
(the license key masked), filtered by user, one session ended, a user's sessions ended (an
unknown name refused next to the field), every session ended through the dialog; audited for
accessibility."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]


def _programs_start(server: LiveServer, ownerid: str, name: str, sellerkey: str) -> str:
    """ann logs in twice by name, a key logs in once, one program only starts; returns the key."""
    key: str = seller_call(server, sellerkey, "add", expiry="30", amount="1").json()["key"]
    made = seller_call(
        server, sellerkey, "adduser", user="ann", sub="default", expiry="30", **{"pass": "pw-ann-1"}
    )
    assert made.json()["success"] is True, made.text
    api = f"{server.url}/api/1.0/"
    base = {"ownerid": ownerid, "name": name}
    with httpx.Client(timeout=30) as http:
        for login in (
            {"type": "login", "username": "ann", "pass": "pw-ann-1", "hwid": "HW-ANN-PC"},
            {"type": "login", "username": "ann", "pass": "pw-ann-1", "hwid": "HW-ANN-PC"},
            {"type": "license", "key": key, "hwid": "HW-KEY-PC"},
            None,
        ):
            session = http.post(api, params={**base, "type": "init"}).json()["sessionid"]
            if login is not None:
                answer = http.post(api, params={**base, **login, "sessionid": session}).json()
                assert answer["success"] is True, answer
    return key


def test_sessions_page(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("sessseller", PASSWORD)
    page = tab.page
    sign_in(tab, "sessseller")
    ownerid, sellerkey = _create_app(tab, "Session Shop")
    key = _programs_start(dashboard_server, ownerid, "Session Shop", sellerkey)
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Sessions").click()
    expect(page.get_by_role("heading", name="Sessions", exact=True)).to_be_visible()
    table = page.get_by_role("table", name="Sessions")
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table).to_contain_text(key[-4:])
    expect(table).not_to_contain_text(key)
    expect(page.locator("#h-online")).to_be_visible()
    tab.audit("sessions")

    page.get_by_label("User", exact=True).fill("ann")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"user=ann"))
    expect(table.locator("tbody tr")).to_have_count(2)
    table.get_by_role("button").first.click()
    expect(page.get_by_role("status")).to_contain_text("The session has ended.")

    page.get_by_label("Username", exact=True).fill("nobody")
    page.get_by_role("button", name="End their sessions").click()
    expect(page.locator("#f-user-error")).to_contain_text("nobody")
    page.get_by_label("Username", exact=True).fill("ann")
    page.get_by_role("button", name="End their sessions").click()
    expect(page.get_by_role("status")).to_contain_text("1 session of ann ended.")

    page.get_by_role("button", name="End every session").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("End every session of the application?")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("Every session ended (2 sessions).")
    expect(page.get_by_role("table", name="Sessions")).to_contain_text("No open sessions.")
    page.emulate_media(color_scheme="dark")
    page.reload()
    tab.audit("sessions-dark")
    tab.check_console()
