"""In Chromium, against a real server: the rate limits part of the user and key pages (set,
change, remove), checked through the seller API; the change is in the user's timeline; the part
is audited for accessibility."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_seller_pages import open_shop

pytestmark = [pytest.mark.browser, pytest.mark.server]


def limits(server: LiveServer, sellerkey: str, **target: str) -> list[dict[str, object]]:
    body = seller_call(server, sellerkey, "listratelimits", **target).json()
    assert body["success"] is True, body
    found: list[dict[str, object]] = body["limits"]
    return found


def test_rate_limits_on_the_user_and_key_pages(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    sellerkey = open_shop(tab, dashboard_server, "limitseller", "Limit Shop")
    made = seller_call(dashboard_server, sellerkey, "adduser", user="lim", sub="default", expiry="30")
    assert made.json()["success"] is True, made.text
    key = seller_call(dashboard_server, sellerkey, "add", expiry="30", level="1").json()["key"]
    nav = page.get_by_role("navigation", name="Application")

    nav.get_by_role("link", name="Users").click()
    page.get_by_role("link", name="lim", exact=True).first.click()
    section = page.get_by_role("region", name="Rate limits")
    expect(section).to_contain_text("No rate limit of its own")
    section.get_by_label("Limit name").fill("api")
    section.get_by_label("Requests").fill("100")
    section.get_by_label("Per (seconds)").fill("60")
    section.get_by_role("button", name="Save rate limit").click()
    expect(page.get_by_role("status")).to_contain_text("The rate limit is saved.")
    expect(page.locator("#rate-limits")).to_contain_text("api")
    assert limits(dashboard_server, sellerkey, user="lim") == [{"name": "api", "requests": 100, "window": 60}]
    tab.audit("user-ratelimits")
    # A refusal comes back as a message: a window longer than a month.
    section = page.get_by_role("region", name="Rate limits")
    section.get_by_label("Limit name").fill("api")
    section.get_by_label("Requests").fill("5")
    section.get_by_label("Per (seconds)").fill("99999999")
    section.get_by_role("button", name="Save rate limit").click()
    expect(page.get_by_role("status")).to_contain_text("window")
    assert limits(dashboard_server, sellerkey, user="lim")[0]["requests"] == 100
    expect(page.get_by_role("region", name="Timeline").first).to_contain_text("setratelimit")
    page.get_by_role("region", name="Rate limits").get_by_role("button", name="Remove api").click()
    page.get_by_role("dialog", name="Please confirm").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The rate limit is removed.")
    assert limits(dashboard_server, sellerkey, user="lim") == []

    nav.get_by_role("link", name="Licenses").click()
    page.get_by_role("link", name=key).first.click()
    section = page.get_by_role("region", name="Rate limits")
    section.get_by_label("Limit name").fill("burst")
    section.get_by_label("Requests").fill("10")
    section.get_by_label("Per (seconds)").fill("1")
    section.get_by_role("button", name="Save rate limit").click()
    expect(page.get_by_role("status")).to_contain_text("The rate limit is saved.")
    assert limits(dashboard_server, sellerkey, key=key) == [{"name": "burst", "requests": 10, "window": 1}]
    tab.audit("key-ratelimits")
    tab.check_console()
