"""In Chromium, against a real server: the Applications and Licenses pages, every one audited
for accessibility; filters that htmx applies in place keep the view in the address bar."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.live import LiveServer
from tests.web.browser import Tab, open_tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_create_an_application_then_browse_and_filter_its_keys(
    tab: Tab, dashboard_server: LiveServer
) -> None:
    dashboard_server.create_account("seller1", PASSWORD)
    page = tab.page
    sign_in(tab, "seller1")
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    page.get_by_label("Application name").fill("Aimbot Pro")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Aimbot Pro is ready")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/dashboard/apps/\d+/ready$"))  # post/redirect/get
    tab.audit("application-created")
    sellerkey = page.locator("#sellerkey").inner_text()
    page.get_by_role("link", name="Go to Aimbot Pro").click()
    expect(page.get_by_role("heading", name="Activity")).to_be_visible()
    page.get_by_role("link", name="Connect your program").click()
    expect(page.get_by_role("heading", name="Connect your program")).to_be_visible()
    page.get_by_text("Python (KeyAuth-Python-Example)").click()
    tab.audit("application")
    tab.goto("/dashboard/apps")
    tab.audit("applications")

    api = dashboard_server.url + "/api/seller/"
    for note, amount in (("summer sale", 3), ("giveaway", 2)):
        made = httpx.get(
            api,
            params={
                "sellerkey": sellerkey,
                "type": "add",
                "expiry": "30",
                "amount": str(amount),
                "note": note,
            },
            timeout=30,
        )
        assert made.json()["success"] is True
    page.get_by_role("link", name="Aimbot Pro").click()
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Licenses").click()
    expect(page.get_by_role("heading", name="Licenses")).to_be_visible()
    expect(page.get_by_role("table", name=re.compile("License keys"))).to_contain_text("(5 in all)")
    tab.audit("licenses")

    # A filter applied by htmx: the table is replaced in place and the URL keeps the view.
    page.get_by_label("Note contains").fill("giveaway")
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_role("table", name=re.compile("License keys"))).to_contain_text("(2 in all)")
    expect(page).to_have_url(re.compile(r"note=giveaway"))
    page.reload()
    expect(page.get_by_role("table", name=re.compile("License keys"))).to_contain_text("(2 in all)")
    tab.audit("licenses-filtered")
    page.get_by_role("link", name="Key", exact=True).click()
    expect(page.get_by_role("columnheader", name=re.compile("^Key"))).to_have_attribute(
        "aria-sort", "ascending"
    )

    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
    assert download.value.suggested_filename.endswith(".csv")
    tab.check_console()


def test_the_pages_in_dark_mode_pass_the_audit(
    chromium: Browser, dashboard_server: LiveServer, tab: Tab
) -> None:
    dashboard_server.create_account("nightowl", PASSWORD)
    dark = open_tab(chromium, dashboard_server.public_url, shots=tab.shots)
    try:
        dark.page.emulate_media(color_scheme="dark")
        sign_in(dark, "nightowl")
        dark.page.get_by_label("Application name").fill("Night App")
        dark.page.get_by_role("button", name="Create").click()
        dark.page.get_by_role("link", name="Go to Night App").click()
        dark.page.get_by_role("link", name="Connect your program").click()
        dark.audit("application-dark")
        dark.page.get_by_role("navigation", name="Application").get_by_role("link", name="Licenses").click()
        dark.audit("licenses-dark")
        dark.goto("/dashboard/account")
        dark.audit("account-dark")
    finally:
        dark.context.close()
