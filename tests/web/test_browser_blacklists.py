"""In Chromium, against a real server: the Blacklist page (where each entry came from), an
address and a HWID added, a bad one refused next to its field (htmx), one entry removed through
the dialog, every entry removed after a confirmation; the Whitelist page (who added each entry),
one added and removed, then every one; both audited for accessibility."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]

# Loads the list shown again in place of #results and tells whether the form of the button named
# by the argument was taken out of the page by it.
SWAP_THE_LIST_UNDER = """async (label) => {
  const asked = document.querySelector(`button[aria-label="${label}"]`).form;
  await htmx.ajax("GET", location.pathname + location.search,
                  {target: "#results", select: "#results", swap: "outerHTML"});
  return !asked.isConnected && document.querySelector(`button[aria-label="${label}"]`) !== null;
}"""


def test_blacklist_and_whitelist_pages(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("blackseller", PASSWORD)
    page = tab.page
    sign_in(tab, "blackseller")
    _ownerid, sellerkey = _create_app(tab, "Black Shop")
    for params in (
        {"hwid": "S-1-5-21-DIRECT-1001", "reason": "chargeback"},
        {"ip": "203.0.113.0/24", "reason": "hosting range"},
    ):
        made = seller_call(dashboard_server, sellerkey, "black", **params)
        assert made.json()["success"] is True, made.text
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Blacklist").click()
    expect(page.get_by_role("heading", name="Blacklist", exact=True)).to_be_visible()
    table = page.get_by_role("table", name="Blacklist")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table).to_contain_text("Added by blackseller")

    page.get_by_label("IP address or range").fill("999.1.1.1")
    page.get_by_role("button", name="Blacklist", exact=True).click()
    expect(page.locator("#f-ip-error")).to_contain_text("999.1.1.1")
    expect(page.get_by_label("IP address or range")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("IP address or range").fill("198.51.100.7")
    page.get_by_label("Reason").fill("abuse")
    page.get_by_role("button", name="Blacklist", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("198.51.100.7 is blacklisted.")
    expect(table.locator("tbody tr")).to_have_count(3)
    page.get_by_role("textbox", name="HWID (optional)").fill("S-1-5-21-FORM-2002")
    page.get_by_role("button", name="Blacklist", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("S-1-5-21-FORM-2002 is blacklisted.")
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table).to_contain_text("Added by blackseller (dashboard)")
    tab.audit("blacklist")

    page.get_by_label("Type").select_option("hwid")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"kind=hwid"))
    expect(table.locator("tbody tr")).to_have_count(2)
    page.get_by_role("button", name="Remove S-1-5-21-DIRECT-1001").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Remove S-1-5-21-DIRECT-1001 from the blacklist")
    # The list is swapped while the dialog is open, as a filter's late answer does (the select's
    # change and Apply each ask for it): the confirmation still removes the entry.
    assert page.evaluate(SWAP_THE_LIST_UNDER, "Remove S-1-5-21-DIRECT-1001") is True
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("S-1-5-21-DIRECT-1001 is no longer blacklisted.")
    page.get_by_label("Type").select_option("")
    page.get_by_role("button", name="Apply").click()
    expect(table.locator("tbody tr")).to_have_count(3)
    page.get_by_role("button", name="Remove every entry…").click()
    expect(page.get_by_role("heading", name="Empty the blacklist?")).to_be_visible()
    page.get_by_role("button", name="Empty the blacklist").click()
    expect(page.get_by_role("status")).to_contain_text("The blacklist is empty (3 entries removed).")
    nav.get_by_role("link", name="Blacklist").click()

    nav.get_by_role("link", name="Whitelist").click()
    expect(page.get_by_role("heading", name="Whitelist", exact=True)).to_be_visible()
    page.get_by_label("IP address or range").fill("192.0.2.0/24")
    page.get_by_role("button", name="Whitelist", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("192.0.2.0/24 is whitelisted.")
    expect(page.get_by_role("table", name="Whitelist")).to_contain_text("192.0.2.0/24")
    expect(page.get_by_role("table", name="Whitelist")).to_contain_text("Added by blackseller (dashboard)")
    page.get_by_label("IP address or range").fill("198.51.100.9")
    page.get_by_role("button", name="Whitelist", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("198.51.100.9 is whitelisted.")
    tab.audit("whitelist")
    page.get_by_role("button", name="Remove 198.51.100.9").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("198.51.100.9 is no longer whitelisted.")
    page.get_by_role("button", name="Remove every entry…").click()
    expect(page.get_by_role("heading", name="Empty the whitelist?")).to_be_visible()
    page.get_by_role("button", name="Empty the whitelist").click()
    expect(page.get_by_role("status")).to_contain_text("The whitelist is empty (1 entry removed).")
    tab.check_console()
