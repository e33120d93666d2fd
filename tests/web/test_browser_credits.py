"""In Chromium, against a real server: the usage-credits part of the user and key pages (set,
add, refill, remove), checked through the seller API; the change is in the user's timeline; the
part is audited for accessibility."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_seller_pages import open_shop

pytestmark = [pytest.mark.browser, pytest.mark.server]


def balance(server: LiveServer, sellerkey: str, **target: str) -> dict[str, object]:
    body = seller_call(server, sellerkey, "getcredits", **target).json()
    assert body["success"] is True, body
    credits: dict[str, object] = body["credits"]
    return credits


def test_credits_on_the_user_and_key_pages(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    sellerkey = open_shop(tab, dashboard_server, "creditseller", "Credit Shop")
    made = seller_call(dashboard_server, sellerkey, "adduser", user="cid", sub="default", expiry="30")
    assert made.json()["success"] is True, made.text
    key = seller_call(dashboard_server, sellerkey, "add", expiry="30", level="1").json()["key"]
    nav = page.get_by_role("navigation", name="Application")

    nav.get_by_role("link", name="Users").click()
    page.get_by_role("link", name="cid", exact=True).first.click()
    section = page.get_by_role("region", name="Usage credits")
    expect(section).to_contain_text("No credit balance")
    section.get_by_label("Set the balance to").fill("10")
    section.get_by_role("button", name="Set balance").click()
    expect(page.get_by_role("status")).to_contain_text("The credit balance is set.")
    section = page.get_by_role("region", name="Usage credits")
    section.get_by_label("Credits to add").fill("5")
    section.get_by_role("button", name="Add credits").click()
    expect(page.get_by_role("status")).to_contain_text("The credits are added.")
    expect(page.locator("#credit-balance")).to_have_text("15")
    section = page.get_by_role("region", name="Usage credits")
    section.get_by_label("Refill", exact=True).select_option("week")
    section.get_by_label("Refill up to").fill("20")
    section.get_by_label("At (HH:MM, UTC)").fill("06:30")
    section.get_by_role("button", name="Save refill").click()
    expect(page.get_by_role("status")).to_contain_text("The refill is saved.")
    expect(page.get_by_role("region", name="Usage credits")).to_contain_text(
        "up to 20 every week at 06:30 UTC"
    )
    shown = balance(dashboard_server, sellerkey, user="cid")
    assert shown["balance"] == 15
    assert shown["refill"] is not None
    tab.audit("user-credits")
    # A refusal comes back as a message: taking more than the balance holds.
    section = page.get_by_role("region", name="Usage credits")
    section.get_by_label("Credits to add").fill("-100")
    section.get_by_role("button", name="Add credits").click()
    expect(page.get_by_role("status")).to_contain_text("between 0 and")
    # The changes are in the user's timeline.
    expect(page.get_by_role("region", name="Timeline").first).to_contain_text("addcredits")

    nav.get_by_role("link", name="Licenses").click()
    page.get_by_role("link", name=key).first.click()
    section = page.get_by_role("region", name="Usage credits")
    section.get_by_label("Set the balance to").fill("3")
    section.get_by_role("button", name="Set balance").click()
    expect(page.get_by_role("status")).to_contain_text("The credit balance is set.")
    assert balance(dashboard_server, sellerkey, key=key)["balance"] == 3
    page.get_by_role("region", name="Usage credits").get_by_role(
        "button", name="Remove the credit balance"
    ).click()
    page.get_by_role("dialog", name="Please confirm").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The credit balance is removed.")
    body = seller_call(dashboard_server, sellerkey, "getcredits", key=key).json()
    assert body["error"] == "credits_not_set"
    tab.check_console()
