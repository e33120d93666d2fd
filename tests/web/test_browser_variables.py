"""In Chromium, against a real server: the Subscriptions, User variables and Global variables
pages, each audited for accessibility; a refused form (htmx) shows the error next to its field;
a deletion asks in the dialog, saying how many users it affects."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_subscriptions_and_variables_pages(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("varseller", PASSWORD)
    page = tab.page
    sign_in(tab, "varseller")
    page.get_by_label("Application name").fill("Var Shop")
    page.get_by_role("button", name="Create").click()
    sellerkey = page.locator("#sellerkey").inner_text()
    for user in ("ann", "ben"):
        made = seller_call(dashboard_server, sellerkey, "adduser", user=user, sub="default", expiry="30")
        assert made.json()["success"] is True, made.text
    page.get_by_role("link", name="Go to Var Shop").click()
    nav = page.get_by_role("navigation", name="Application")

    nav.get_by_role("link", name="Subscriptions").click()
    expect(page.get_by_role("heading", name="Subscriptions", exact=True)).to_be_visible()
    page.get_by_label("Name", exact=True).fill("premium")
    page.get_by_label("Level", exact=True).fill("2")
    page.get_by_role("button", name="Create", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("The subscription premium is created")
    table = page.get_by_role("table", name=re.compile("Subscriptions"))
    expect(table).to_contain_text("premium")
    # A duplicate, refused through htmx: the message sits next to the name field.
    page.get_by_label("Name", exact=True).fill("premium")
    page.get_by_label("Level", exact=True).fill("3")
    page.get_by_role("button", name="Create", exact=True).click()
    expect(page.locator("#f-name-error")).to_contain_text("premium")
    expect(page.get_by_label("Name", exact=True)).to_have_attribute("aria-invalid", "true")
    tab.audit("subscriptions")
    page.get_by_role("link", name="Edit default").click()
    expect(page.get_by_role("heading", name="Subscription default")).to_be_visible()
    tab.audit("subscription-edit")
    page.get_by_role("button", name="Delete default").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("2 users hold it and will lose it.")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()

    nav.get_by_role("link", name="User variables").click()
    expect(page.get_by_role("heading", name="User variables")).to_be_visible()
    page.get_by_label("Every user of the application").check()
    page.get_by_label("Variable name", exact=True).fill("motd")
    page.get_by_label("Value", exact=True).fill("Welcome back")
    page.get_by_role("button", name="Set the variable").click()
    expect(page.get_by_role("status")).to_contain_text("motd is set for every user (2 users).")
    page.get_by_label("Username").fill("nobody")
    page.get_by_label("Every user of the application").uncheck()
    page.get_by_label("Variable name", exact=True).fill("tier")
    page.get_by_label("Value", exact=True).fill("gold")
    page.get_by_role("button", name="Set the variable").click()
    expect(page.locator("#f-user-error")).to_contain_text("nobody")
    page.get_by_label("Value starts with").fill("Welcome")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"value=Welcome"))
    expect(page.get_by_role("table", name="User variables")).to_contain_text("ben")
    tab.audit("user-variables")

    nav.get_by_role("link", name="Global variables").click()
    expect(page.get_by_role("heading", name="Global variables")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("download")
    page.get_by_label("Value", exact=True).fill("https://example.test/v2")
    page.get_by_role("button", name="Create", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("The global variable download is created.")
    page.get_by_label("Value of download").fill("https://example.test/v3")
    page.get_by_role("button", name="Save download").click()
    expect(page.get_by_role("status")).to_contain_text("download is saved")
    tab.audit("global-variables")
    page.get_by_role("button", name="Delete download").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The global variable download is deleted.")
    # The dark scheme passes the audit too.
    page.emulate_media(color_scheme="dark")
    nav.get_by_role("link", name="Subscriptions").click()
    tab.audit("subscriptions-dark")
    nav.get_by_role("link", name="User variables").click()
    tab.audit("user-variables-dark")
    tab.check_console()
