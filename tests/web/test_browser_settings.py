"""In Chromium, against a real server: the Settings page's tabs (links, so they work without
JavaScript too), a save per tab, a refused value shown next to its field, and a client message
previewed, saved and then answered by the client API; each tab audited for accessibility."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]


def client_call(server: LiveServer, ownerid: str, name: str, **params: str) -> dict[str, object]:
    answer = httpx.post(
        f"{server.url}/api/1.0/", params={"ownerid": ownerid, "name": name, **params}, timeout=30
    )
    body: dict[str, object] = answer.json()
    return body


def test_settings_tabs_save_validate_and_messages_reach_the_client(
    tab: Tab, dashboard_server: LiveServer
) -> None:
    dashboard_server.create_account("setseller", PASSWORD)
    page = tab.page
    sign_in(tab, "setseller")
    ownerid, sellerkey = _create_app(tab, "Set Shop")
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Settings").click()
    expect(page.get_by_role("heading", name="General")).to_be_visible()
    tabs = page.get_by_role("navigation", name="Settings tabs")
    expect(tabs.get_by_role("link", name="General")).to_have_attribute("aria-current", "page")
    tab.audit("settings")

    # A refused URL: the message sits next to the field, what was typed is kept, nothing saved.
    page.get_by_label("Current version").fill("2.0")
    page.get_by_role("textbox", name="Download link").fill("ftp://example.com/app.zip")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#f-download-error")).to_contain_text("http")
    expect(page.get_by_role("textbox", name="Download link")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("textbox", name="Download link")).to_have_value("ftp://example.com/app.zip")
    assert seller_call(dashboard_server, sellerkey, "getsettings").json()["version"] == "1.0"
    page.get_by_role("textbox", name="Download link").fill("https://example.com/app.zip")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_role("status")).to_contain_text("General settings saved.")
    assert (
        seller_call(dashboard_server, sellerkey, "getsettings").json()["download"]
        == "https://example.com/app.zip"
    )

    tabs.get_by_role("link", name="Devices (HWID)").click()
    expect(page.get_by_role("heading", name="Devices (HWID)")).to_be_visible()
    page.get_by_label("HWID lock").uncheck()
    page.get_by_label("Devices per user").fill("3")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_role("status")).to_contain_text("Devices (HWID) settings saved.")
    saved = seller_call(dashboard_server, sellerkey, "getsettings").json()["settings"]
    assert (saved["hwid_lock"], saved["max_hwids"]) == (0, 3)
    tab.audit("settings-devices")

    tabs.get_by_role("link", name="Sign-in and limits").click()
    page.get_by_label("Session lifetime (seconds)").fill("7200")
    page.get_by_role("button", name="Save settings").click()
    expect(page.get_by_role("status")).to_contain_text("Sign-in and limits settings saved.")
    assert (
        seller_call(dashboard_server, sellerkey, "getsettings").json()["settings"]["session_seconds"] == 7200
    )

    tabs.get_by_role("link", name="Client messages").click()
    field = page.get_by_label("keynotfound")
    expect(page.locator("#f-keynotfound-preview")).to_contain_text('"message": "Invalid license key"')
    field.fill("That key is not ours")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#f-keynotfound-preview")).to_contain_text('"message": "That key is not ours"')
    page.get_by_role("button", name="Save messages").click()
    expect(page.get_by_role("status")).to_contain_text("1 message saved.")
    tab.audit("settings-messages")
    init = client_call(dashboard_server, ownerid, "Set Shop", type="init", ver="2.0")
    assert init["success"] is True, init
    refused = client_call(
        dashboard_server, ownerid, "Set Shop", type="license", key="NOPE", sessionid=str(init["sessionid"])
    )
    assert refused["message"] == "That key is not ours"
    page.emulate_media(color_scheme="dark")
    tabs.get_by_role("link", name="General").click()
    tab.audit("settings-dark")
    tab.check_console()
