"""In Chromium, against a real server: the seats part of the subscription, user and key pages
(set, remove), checked through the seller API, with what a user holds now; audited for
accessibility."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_seller_pages import open_shop

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_seats_on_the_subscription_user_and_key_pages(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    sellerkey = open_shop(tab, dashboard_server, "seatseller", "Seat Shop")
    made = seller_call(dashboard_server, sellerkey, "adduser", user="sam", sub="default", expiry="30")
    assert made.json()["success"] is True, made.text
    key = seller_call(dashboard_server, sellerkey, "add", expiry="30", level="1").json()["key"]
    nav = page.get_by_role("navigation", name="Application")

    nav.get_by_role("link", name="Subscriptions").click()
    page.get_by_role("link", name="Edit default").click()
    section = page.get_by_role("region", name="Seats")
    expect(section).to_contain_text("No seat rule here")
    section.get_by_label("Machines at once").fill("2")
    section.get_by_label("Sessions at once").fill("3")
    section.get_by_label("Over the limit").select_option("end_oldest")
    section.get_by_role("button", name="Save seats").click()
    expect(page.get_by_role("status")).to_contain_text("The seat rule is saved.")
    expect(page.locator("#seat-rule")).to_contain_text("At most 2 machines and 3 sessions")
    rule = seller_call(dashboard_server, sellerkey, "getseats", sub="default").json()["seats"]
    assert rule == {"machines": 2, "sessions": 3, "countby": "user", "overage": "end_oldest", "percent": 0}
    tab.audit("subscription-seats")

    nav.get_by_role("link", name="Users").click()
    page.get_by_role("link", name="sam", exact=True).first.click()
    expect(page.locator("#seats-in-use")).to_contain_text("0 sessions on 0 machines")
    section = page.get_by_role("region", name="Seats")
    section.get_by_label("Sessions at once").fill("1")
    section.get_by_role("button", name="Save seats").click()
    expect(page.get_by_role("status")).to_contain_text("The seat rule is saved.")
    assert seller_call(dashboard_server, sellerkey, "getseats", user="sam").json()["seats"]["sessions"] == 1
    page.get_by_role("region", name="Seats").get_by_role("button", name="Remove the seat rule").click()
    expect(page.get_by_role("status")).to_contain_text("The seat rule is removed.")
    assert (
        seller_call(dashboard_server, sellerkey, "getseats", user="sam").json()["error"]
        == "seat_rule_not_found"
    )

    nav.get_by_role("link", name="Licenses").click()
    page.get_by_role("link", name=key).first.click()
    section = page.get_by_role("region", name="Seats")
    section.get_by_label("Machines at once").fill("4")
    section.get_by_role("button", name="Save seats").click()
    expect(page.get_by_role("status")).to_contain_text("The seat rule is saved.")
    assert seller_call(dashboard_server, sellerkey, "getseats", key=key).json()["seats"]["machines"] == 4
    tab.audit("key-seats")
    tab.check_console()
