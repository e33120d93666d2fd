"""In Chromium, against a real server: the Tokens page with a key's and a user's tokens (each
linked to its key or user), filtered by type and state, searched by username, an unknown token
refused next to its field, one banned with a reason, unbanned, its bound file hash reset, deleted
through the dialog; audited for accessibility."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, execute_sql, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

# The page shows a bound hash's first 12 characters and an ellipsis; tokens are random hex,
# so a shorter marker ("abab") turned up in one now and then (CI saw 1aecd3f5ababbc39...).
BOUND_HASH_SHOWN = "ab" * 6 + "…"

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_tokens_page(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("tokenseller", PASSWORD)
    page = tab.page
    sign_in(tab, "tokenseller")
    _ownerid, sellerkey = _create_app(tab, "Token Shop")
    key: str = seller_call(dashboard_server, sellerkey, "add", expiry="30", amount="1").json()["key"]
    made = seller_call(dashboard_server, sellerkey, "adduser", user="ann", sub="default", expiry="30")
    assert made.json()["success"] is True, made.text
    listed = seller_call(dashboard_server, sellerkey, "fetchalltokens", assigned="ann").json()
    token: str = listed["tokens"][0]["token"]
    # A program checked its file with ann's token: the token is bound to that file's hash.
    # (on a thread: Playwright's loop runs on this one, and execute_sql runs its own for PostgreSQL)
    with ThreadPoolExecutor(1) as pool:
        pool.submit(
            execute_sql,
            dashboard_server.database_url,
            "UPDATE tokens SET file_hash = ?, used_at = 1 WHERE kind = 'user' AND assigned = ?",
            "ab" * 32,
            "ann",
        ).result()

    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Tokens").click()
    expect(page.get_by_role("heading", name="Tokens", exact=True)).to_be_visible()
    table = page.get_by_role("table", name="Tokens")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.get_by_role("link", name=key)).to_be_visible()
    expect(table.get_by_role("link", name="ann")).to_have_attribute("href", re.compile(r"/users/\d+$"))
    tab.audit("tokens")

    # Filtered by type, then by state.
    page.get_by_label("Type").select_option("license")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"kind=license"))
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table.get_by_role("link", name=key)).to_be_visible()
    page.get_by_label("Type").select_option("")
    page.get_by_label("State").select_option("used")
    page.get_by_role("button", name="Apply").click()
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table.get_by_role("link", name="ann")).to_be_visible()
    page.get_by_label("State").select_option("")

    page.get_by_label("Token, key or username").fill("ann")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"search=ann"))
    expect(table.locator("tbody tr")).to_have_count(1)
    table.get_by_role("link", name=f"Ban {token}").click()
    expect(page.get_by_label("Token", exact=True)).to_have_value(token)
    page.get_by_label("Reason").fill("x" * 256)
    page.get_by_label("Token", exact=True).fill("0" * 32)
    page.get_by_role("button", name="Ban the token").click()
    expect(page.locator("#f-token-error")).to_contain_text("0000")  # unknown, said next to the field
    page.get_by_label("Token", exact=True).fill(token)
    page.get_by_label("Reason").fill("shared on a forum")
    page.get_by_role("button", name="Ban the token").click()
    expect(page.get_by_role("status")).to_contain_text(f"The token {token} is banned")
    expect(page.get_by_role("table", name="Tokens")).to_contain_text("shared on a forum")
    page.get_by_role("button", name=f"Unban {token}").click()
    expect(page.get_by_role("status")).to_contain_text("is no longer banned")
    expect(page.get_by_role("table", name="Tokens")).to_contain_text(BOUND_HASH_SHOWN)
    page.get_by_role("button", name=f"Reset hash {token}").click()
    expect(page.get_by_role("status")).to_contain_text("is reset")
    expect(page.get_by_role("table", name="Tokens")).not_to_contain_text(BOUND_HASH_SHOWN)
    expect(page.get_by_role("button", name=f"Reset hash {token}")).to_have_count(0)
    page.get_by_role("button", name=f"Delete {token}").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text(f"The token {token} is deleted.")
    expect(page.get_by_role("table", name="Tokens").locator("tbody tr")).to_have_count(1)
    tab.check_console()
