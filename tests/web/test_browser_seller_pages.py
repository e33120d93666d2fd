"""In Chromium, against a real server: the Seller keys page (a key created with ticked areas and
shown once, a refusal next to its field, a revocation confirmed in the dialog) and the Audit log
page (the chain checked as the page is shown, filters by target, who and what, the export, an
entry changed in the database located on the page) and the Seller log page (off, turned on,
calls filtered by status, secrets redacted, the export), each page audited for accessibility."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, execute_sql, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]


def open_shop(tab: Tab, server: LiveServer, owner: str, name: str) -> str:
    """Sign in as a new owner, create an application and go to it; its first seller key."""
    server.create_account(owner, PASSWORD)
    page = tab.page
    sign_in(tab, owner)
    page.get_by_label("Application name").fill(name)
    page.get_by_role("button", name="Create").click()
    sellerkey = page.locator("#sellerkey").inner_text()
    page.get_by_role("link", name=f"Go to {name}").click()
    return sellerkey


def test_seller_keys_page(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    first = open_shop(tab, dashboard_server, "keyseller", "Key Shop")
    assert seller_call(dashboard_server, first, "setseller").json()["success"] is True
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Seller keys").click()
    expect(page.get_by_role("heading", name="Seller keys")).to_be_visible()
    table = page.get_by_role("table", name=re.compile("Seller keys"))
    expect(table).to_contain_text("All areas")
    expect(table).to_contain_text("from 127.0.0.1")
    # Nothing ticked: refused through htmx, the message beside the areas.
    page.get_by_label("Name (optional)").fill("shop bot")
    page.get_by_role("button", name="Create the key").click()
    expect(page.locator("#areas-error")).to_contain_text("Tick at least one area.")
    page.get_by_label("licenses (license keys)").check()
    page.get_by_label("users (users)").check()
    tab.audit("seller-keys")
    page.get_by_role("button", name="Create the key").click()
    expect(page.get_by_role("heading", name="Seller key shop bot")).to_be_visible()
    key = page.locator("#sellerkey").inner_text()
    assert re.fullmatch(r"[0-9a-f]{32}", key)
    tab.audit("seller-key-created")
    made = seller_call(dashboard_server, key, "setseller").json()
    assert made["permissions"] == ["licenses", "users"]
    page.get_by_role("link", name="Back to the seller keys").click()
    expect(table).to_contain_text("licenses, users")
    page.get_by_role("button", name="Revoke shop bot").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The seller key shop bot is revoked.")
    assert seller_call(dashboard_server, key, "setseller").json()["success"] is False
    tab.check_console()


def test_audit_log_page(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    key = open_shop(tab, dashboard_server, "auditseller", "Audit Shop")
    for user in ("ann", "ben"):
        made = seller_call(dashboard_server, key, "adduser", user=user, sub="default", expiry="30")
        assert made.json()["success"] is True, made.text
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("heading", name="Audit log")).to_be_visible()
    # The chain is checked as soon as the page is shown (htmx).
    expect(page.locator("#chain")).to_contain_text("Intact since")
    expect(page.locator("#chain")).to_contain_text("all 3 entries fit the chain")
    table = page.get_by_role("table", name=re.compile("Audit log"))
    expect(table).to_contain_text("auditseller (seller key")
    expect(table).to_contain_text("user:ann")
    tab.audit("audit-log")
    # A target's cell filters the list by it.
    table.get_by_role("link", name="user:ben").click()
    expect(page).to_have_url(re.compile(r"target=user%3Aben"))
    expect(table).not_to_contain_text("user:ann")
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
    saved = download.value.path().read_text()
    assert "user:ben" in saved
    assert "user:ann" not in saved

    # By who, then by what (the form's fields).
    tab.goto(re.sub(r"^https?://[^/]+", "", page.url.split("?")[0]))
    page.get_by_label("Who").fill("auditseller (dashboard)")
    page.get_by_role("button", name="Apply").click()
    expect(table).to_contain_text("createapp")
    expect(table).not_to_contain_text("adduser")
    page.get_by_label("Who").fill("")
    page.get_by_label("What").fill("adduser")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"action=adduser"))
    expect(table.locator("tbody tr")).to_have_count(2)

    # An entry changed behind the application's back: the page names where the chain breaks.
    # (on a thread: Playwright's loop runs on this one, and execute_sql runs its own for PostgreSQL)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(
            execute_sql,
            dashboard_server.database_url,
            "UPDATE audit_log SET target = 'user:mallory' WHERE target = 'user:ann'",
        ).result()
    page.reload()
    expect(page.locator("#chain")).to_contain_text(re.compile(r"Broken at entry #\d+"))
    tab.check_console()


def test_seller_log_page(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    key = open_shop(tab, dashboard_server, "logseller", "Log Shop")
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Seller log").click()
    expect(page.get_by_role("heading", name="Seller log")).to_be_visible()
    expect(page.locator("#recording")).to_contain_text("The seller log is off for this application")
    tab.audit("seller-log-off")
    page.get_by_role("button", name="Turn the seller log on").click()
    expect(page.get_by_role("status")).to_contain_text("The seller log is on")
    made = seller_call(
        dashboard_server, key, "adduser", user="ann", sub="default", expiry="30", **{"pass": "pw123456"}
    )
    assert made.json()["success"] is True, made.text
    seller_call(dashboard_server, key, "deluser", user="nobody")
    page.reload()
    table = page.get_by_role("table", name=re.compile("Seller log"))
    expect(table).to_contain_text("adduser")
    expect(table).to_contain_text("[redacted]")
    expect(table).not_to_contain_text("pw123456")
    page.get_by_label("Status").select_option("404")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"status=404"))
    expect(table).to_contain_text("deluser")
    expect(table).not_to_contain_text("adduser")
    tab.audit("seller-log")
    with page.expect_download() as download:
        page.get_by_role("link", name="JSON").click()
    saved = download.value.path().read_text()
    assert "deluser" in saved
    assert "adduser" not in saved
    tab.check_console()
