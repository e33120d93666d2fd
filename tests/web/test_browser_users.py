"""In Chromium, against a real server: the Users list (search in the URL), adding time with the
preview of the new expiry following the form (htmx), a ban showing what it blacklists, and the
user's and the key's detail pages, each audited for accessibility."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_users_list_time_preview_ban_and_detail_pages(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("userseller", PASSWORD)
    page = tab.page
    sign_in(tab, "userseller")
    page.get_by_label("Application name").fill("User Shop")
    page.get_by_role("button", name="Create").click()
    sellerkey = page.locator("#sellerkey").inner_text()

    def seller(type_: str, **params: str) -> dict[str, object]:
        body: dict[str, object] = seller_call(dashboard_server, sellerkey, type_, **params).json()
        assert body["success"] is True, body
        return body

    for user in ("ann", "annika", "ben"):
        seller("adduser", user=user, sub="default", expiry="30")
    seller("addhwiduser", user="ann", hwid="HWID-ANN-0001")
    key = str(seller("add", expiry="7", amount="1", level="1")["key"])
    seller("activate", user="kai", key=key, **{"pass": "kai-password-1"})

    page.get_by_role("link", name="Go to User Shop").click()
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Users").click()
    expect(page.get_by_role("heading", name="Users", exact=True)).to_be_visible()
    table = page.get_by_role("table", name=re.compile("Users"))
    expect(table).to_contain_text("annika")
    page.get_by_label("Search").fill("ann")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"q=ann"))
    expect(table).not_to_contain_text("ben")
    expect(table).to_contain_text("annika")
    tab.audit("users-search")

    # Time with a preview: the new expiry shows as the amount is typed (htmx), before anything changes.
    def row_menu(user: str) -> None:
        page.locator("summary").filter(has_text=re.compile(rf"^Actions for {user}$")).click()

    row_menu("ann")
    page.get_by_role("link", name="Add or take time from ann…").click()
    expect(page.get_by_role("heading", name="Time of ann")).to_be_visible()
    page.get_by_label("Amount").fill("10")
    preview = page.locator("#time-preview")
    expect(preview).to_contain_text("Expires after")
    tab.audit("user-time")
    page.get_by_role("button", name="Apply").click()
    expect(page.get_by_role("status")).to_contain_text("ann has more time on default.")

    # A row action with script: htmx posts it and swaps the list and the status message in place.
    row_menu("annika")
    page.get_by_role("button", name="Pause annika").click()
    expect(page.get_by_role("status")).to_contain_text("annika's time is paused.")
    expect(table.get_by_role("row", name=re.compile("^annika "))).to_contain_text("Paused")

    # A ban says what it blacklists; the IP can be left out.
    row_menu("ann")
    page.get_by_role("link", name="Ban ann…").click()
    expect(page.get_by_role("heading", name="Ban ann")).to_be_visible()
    expect(page.get_by_role("main")).to_contain_text("HWID-ANN-0001")
    tab.audit("user-ban-hwid")
    page.get_by_label("Reason").fill("refund abuse")
    page.get_by_role("button", name="Ban ann").click()
    expect(page.get_by_role("status")).to_contain_text("ann is banned")
    row_menu("ann")
    expect(page.get_by_role("button", name="Unban ann")).to_be_visible()

    # The user's page, and from it the key it redeemed.
    page.get_by_label("Search").fill("kai")
    page.get_by_role("button", name="Apply").click()
    page.get_by_role("link", name="kai", exact=True).click()
    expect(page.get_by_role("heading", name=re.compile("^kai"))).to_be_visible()
    expect(page.get_by_role("main")).to_contain_text("Timeline")
    tab.audit("user-detail")
    page.get_by_role("link", name=key).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(key)
    expect(page.get_by_role("main")).to_contain_text("Its user: kai")
    tab.audit("key-detail")
    page.get_by_label("Note").fill("paid by card")
    page.get_by_role("button", name="Save the note").click()
    expect(page.get_by_role("main")).to_contain_text("paid by card")
    expect(page).to_have_url(re.compile(r"/licenses/\d+$"))
