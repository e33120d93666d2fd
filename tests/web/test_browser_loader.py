"""In Chromium, against a real server: the Web loader page. The customer panel switched on with
a download link (a bad link refused next to its field), buttons added (a taken value refused
next to its field, htmx), moved up and down, edited, deleted through the dialog, and every
button deleted (confirmed); the page audited."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_web_loader_page(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("loaderseller", PASSWORD)
    page = tab.page
    sign_in(tab, "loaderseller")
    _create_app(tab, "Loader Shop")
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Web loader").click()
    expect(page.get_by_role("heading", name="Web loader", exact=True)).to_be_visible()
    buttons = page.get_by_role("table", name="Buttons")
    expect(buttons).to_contain_text("No buttons yet")

    page.get_by_label("Loader download link").fill("ftp://example.com/loader.exe")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#f-webdownload-error")).to_contain_text("http")
    page.get_by_label("Loader download link").fill("https://example.com/loader.exe")
    page.get_by_label("Customer panel on").check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Saved: the customer panel is on.")
    expect(page.get_by_role("link", name="/panel/")).to_be_visible()

    for value, text in (("start", "Start the game"), ("update", "Update"), ("close", "Close")):
        page.get_by_label("Text shown").fill(text)
        page.get_by_label("Value", exact=True).fill(value)
        page.get_by_role("button", name="Add the button").click()
        expect(page.get_by_role("status")).to_contain_text(f"The button {text} ({value}) is added")
    page.get_by_label("Text shown").fill("Again")
    page.get_by_label("Value", exact=True).fill("start")
    page.get_by_role("button", name="Add the button").click()
    expect(page.locator("#f-value-error")).to_contain_text("exists already")
    expect(page.get_by_label("Value", exact=True)).to_have_attribute("aria-invalid", "true")
    tab.audit("loader")

    rows = buttons.locator("tbody tr")
    page.get_by_role("button", name="Up close").click()
    expect(page.get_by_role("status")).to_contain_text("The button close is now number 2.")
    expect(rows.nth(1)).to_contain_text("close")
    page.get_by_role("button", name="Down start").click()
    expect(rows.nth(0)).to_contain_text("close")
    expect(rows.nth(1)).to_contain_text("start")

    page.get_by_role("link", name="Edit update").click()
    expect(page.get_by_role("heading", name="Edit the button Update")).to_be_visible()
    page.get_by_label("Value", exact=True).fill("up date")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#f-value-error")).to_contain_text("without spaces")
    tab.audit("loader-edit")
    page.get_by_label("Text shown").fill("Get updates")
    page.get_by_label("Value", exact=True).fill("upd")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("The button Get updates (upd) is saved.")
    expect(rows.nth(2)).to_contain_text("Get updates")

    page.get_by_role("button", name="Delete upd").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Delete the button upd?")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The button upd is deleted.")
    expect(rows).to_have_count(2)

    page.get_by_role("button", name="Delete every button…").click()
    expect(page.get_by_role("heading", name="Delete every button?")).to_be_visible()
    page.get_by_role("button", name="Delete every button", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Every button is deleted (2 in all).")
    expect(buttons).to_contain_text("No buttons yet")
    tab.check_console()
