"""In Chromium, against a real server: the Entitlements page (create, a refusal beside its field,
edit) and the entitlements part of the subscription, key and user pages (attach, detach), checked
through the seller API; the license-file button of a user's page (a download that verifies
offline, a refusal shown); each page audited for accessibility."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import expect

from licensegate_client import client as lg
from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_seller_pages import open_shop

pytestmark = [pytest.mark.browser, pytest.mark.server]


def attached(server: LiveServer, sellerkey: str, **target: str) -> list[str]:
    body = seller_call(server, sellerkey, "fetchentitlements", **target).json()
    assert body["success"] is True, body
    return [item["code"] for item in body["entitlements"]]


def test_entitlements_on_their_page_and_on_subscription_key_and_user_pages(
    tab: Tab, dashboard_server: LiveServer
) -> None:
    page = tab.page
    sellerkey = open_shop(tab, dashboard_server, "entseller", "Feature Shop")
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Entitlements").click()
    expect(page.get_by_role("heading", name="Entitlements", exact=True)).to_be_visible()
    page.get_by_label("Code").fill("export")
    page.get_by_label("Display name").fill("Export")
    page.get_by_label("Metadata (JSON object)").fill("[1]")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#f-metadata-error")).to_contain_text("JSON object")
    page.get_by_label("Metadata (JSON object)").fill('{"seats": 5}')
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("status")).to_contain_text("The entitlement export is created.")
    table = page.get_by_role("table", name=re.compile("Entitlements"))
    expect(table).to_contain_text("export")
    tab.audit("entitlements")
    table.get_by_label("Display name").fill("CSV export")
    page.get_by_role("button", name="Save export").click()
    expect(page.get_by_role("status")).to_contain_text("The entitlement export is saved.")
    listed = seller_call(dashboard_server, sellerkey, "fetchentitlements").json()["entitlements"]
    assert [(e["code"], e["name"], e["metadata"]) for e in listed] == [("export", "CSV export", {"seats": 5})]

    # The subscription's page: attach, then detach.
    nav.get_by_role("link", name="Subscriptions").click()
    page.get_by_role("link", name="Edit default").click()
    section = page.get_by_role("region", name="Entitlements")
    section.get_by_label("Entitlement to attach").select_option("export")
    section.get_by_role("button", name="Attach").click()
    expect(page.get_by_role("status")).to_contain_text("The entitlement export is attached.")
    assert attached(dashboard_server, sellerkey, sub="default") == ["export"]
    tab.audit("subscription-entitlements")
    page.get_by_role("region", name="Entitlements").get_by_role("button", name="Detach export").click()
    expect(page.get_by_role("status")).to_contain_text("The entitlement export is detached.")
    assert attached(dashboard_server, sellerkey, sub="default") == []

    # A key's page and its user's page.
    key = seller_call(dashboard_server, sellerkey, "add", expiry="30", level="1").json()["key"]
    made = seller_call(dashboard_server, sellerkey, "adduser", user="ann", sub="default", expiry="30")
    assert made.json()["success"] is True, made.text
    nav.get_by_role("link", name="Licenses").click()
    page.get_by_role("link", name=key).first.click()
    expect(page.get_by_role("heading", name=f"Key {key}")).to_be_visible()
    section = page.get_by_role("region", name="Entitlements")
    section.get_by_label("Entitlement to attach").select_option("export")
    section.get_by_role("button", name="Attach").click()
    expect(page.get_by_role("status")).to_contain_text("The entitlement export is attached.")
    assert attached(dashboard_server, sellerkey, key=key) == ["export"]
    nav.get_by_role("link", name="Users").click()
    page.get_by_role("link", name="ann", exact=True).first.click()
    section = page.get_by_role("region", name="Entitlements")
    section.get_by_label("Entitlement to attach").select_option("export")
    section.get_by_role("button", name="Attach").click()
    expect(page.get_by_role("status")).to_contain_text("The entitlement export is attached.")
    assert attached(dashboard_server, sellerkey, user="ann") == ["export"]
    expect(page.get_by_role("region", name="Entitlements")).to_contain_text("Has now: export")
    tab.audit("user-entitlements")
    tab.check_console()


def test_issue_a_license_file_from_the_user_page(tab: Tab, dashboard_server: LiveServer) -> None:
    """The button downloads a file that verifies offline; a refusal comes back as a message."""
    page = tab.page
    sellerkey = open_shop(tab, dashboard_server, "fileseller", "File Shop")
    made = seller_call(dashboard_server, sellerkey, "adduser", user="bea", sub="default", expiry="30")
    assert made.json()["success"] is True, made.text
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Users").click()
    page.get_by_role("link", name="bea", exact=True).first.click()
    section = page.get_by_role("region", name="License file")
    section.get_by_label("For the machine (HWID)").fill("machine-0000000000000001")
    tab.audit("user-license-file")
    with page.expect_download() as download:
        section.get_by_role("button", name="Issue a license file").click()
    text = Path(download.value.path()).read_text()
    keys = seller_call(dashboard_server, sellerkey, "fetchlicensekeys").json()["keys"]
    verified = lg.verify_license_file(
        text,
        {item["kid"]: item["public_key"] for item in keys},
        ownerid=verified_ownerid(text),
        name="File Shop",
        hwid="machine-0000000000000001",
    )
    assert verified.user == "bea"
    # Encryption needs a key the user redeemed: bea has none, so the page says why.
    page.get_by_role("region", name="License file").get_by_label(
        "Encrypt it for that machine and key"
    ).check()
    page.get_by_role("region", name="License file").get_by_role("button", name="Issue a license file").click()
    expect(page.get_by_role("status")).to_contain_text("An encrypted license file needs a license key")
    tab.check_console()


def verified_ownerid(text: str) -> str:
    """The ownerid the file names (the test's own application)."""
    payload = orjson.loads(base64.b64decode(text.splitlines()[1]))
    return str(payload["app"]["ownerid"])
