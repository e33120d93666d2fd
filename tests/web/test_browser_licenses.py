"""In Chromium, against a real server: the Licenses actions. Create keys and copy them all, a row
action swapped in by htmx, a bulk action with its preview and typed confirmation, an import's
dry-run report; every state audited for accessibility."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from tests.live import LiveServer
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]


def test_create_copy_ban_bulk_delete_and_import_keys(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("keyseller", PASSWORD)
    page = tab.page
    tab.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=dashboard_server.public_url)
    sign_in(tab, "keyseller")
    page.get_by_label("Application name").fill("Key Shop")
    page.get_by_role("button", name="Create").click()
    sellerkey = page.locator("#sellerkey").inner_text()
    page.get_by_role("link", name="Go to Key Shop").click()
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Licenses").click()

    # Create keys; they are shown once, and "Copy all" puts them on the clipboard.
    page.get_by_role("link", name="Create keys").click()
    expect(page.get_by_role("heading", name="Create license keys")).to_be_visible()
    page.get_by_label("How many keys").fill("3")
    page.get_by_label("Mask").fill("KS-****-****")
    page.get_by_label("Length").fill("2")
    page.get_by_label("Unit").select_option("weeks")
    page.get_by_label("Note").fill("launch")
    page.get_by_role("button", name="Create keys").click()
    expect(page.get_by_role("heading", name="3 new keys")).to_be_visible()
    keys = page.get_by_label("The keys, one a line").input_value().split("\n")
    assert len(keys) == 3
    assert all(re.fullmatch(r"KS-\w{4}-\w{4}", key) for key in keys)
    page.get_by_role("button", name="Copy all").click()
    expect(page.locator("#flash")).to_contain_text("Copied to the clipboard.")
    assert page.evaluate("() => navigator.clipboard.readText()") == "\n".join(keys)
    tab.audit("licenses-copied")

    # A row action: ban one key with a reason; htmx swaps the list and says so.
    page.get_by_role("link", name="Back to the licenses").click()
    target = keys[0]
    row = page.get_by_role("row").filter(has_text=target)
    row.get_by_text("Actions").click()
    row.get_by_label("Reason").fill("chargeback")
    tab.audit("licenses-row-actions")
    row.get_by_role("button", name="Ban").click()
    expect(page.locator("#flash")).to_contain_text(f"The key {target} is banned.")
    expect(page.get_by_role("row").filter(has_text=target)).to_contain_text("Banned")

    # Deleting asks in the dialog first; confirmed, htmx posts it and swaps the list.
    doomed = keys[2]
    row = page.get_by_role("row").filter(has_text=doomed)
    row.get_by_text("Actions").click()
    row.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(f"Delete the key {doomed}?")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.get_by_role("row").filter(has_text=doomed)).to_have_count(1)
    row.get_by_role("button", name="Delete").click()
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.locator("#flash")).to_contain_text(f"The key {doomed} is deleted.")
    expect(page.get_by_role("row").filter(has_text=doomed)).to_have_count(0)
    keys = keys[:2]

    # An export the page has counted shows its progress, then saves the file.
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
    assert download.value.suggested_filename.endswith(".csv")
    expect(page.locator(".export-progress")).to_contain_text("2 of 2 keys: saved as")
    saved = download.value.path().read_text()
    assert sorted(line.split(",")[0] for line in saved.splitlines()[1:]) == sorted(keys)

    # A bulk action over every key matching a filter, above the typed threshold.
    for _ in range(2):
        made = httpx.get(
            dashboard_server.url + "/api/seller/",
            params={"sellerkey": sellerkey, "type": "add", "expiry": "1", "amount": "60", "note": "old"},
            timeout=30,
        )
        assert made.json()["success"] is True
    page.get_by_label("Note contains").fill("old")
    page.get_by_role("button", name="Apply").click()
    table = page.get_by_role("table", name=re.compile("License keys"))
    expect(table).to_contain_text("(120 in all)")
    page.get_by_label("Action").select_option("delete")
    page.get_by_label(re.compile("All 120 rows matching the filter")).check()
    page.get_by_role("button", name="Preview…").click()
    preview = page.locator("#bulk-preview")
    expect(preview).to_contain_text("This will delete 120 keys (every key matching the filter).")
    tab.audit("licenses-bulk-preview")
    preview.get_by_label(re.compile("Type the number of keys")).fill("12")
    preview.get_by_role("button", name="Delete: 120 keys").click()
    expect(page.locator("#form-error")).to_contain_text("does not match")
    page.get_by_label(re.compile("Type the number of keys")).fill("120")
    page.get_by_role("button", name="Delete: 120 keys").click()
    expect(page.locator("#flash")).to_contain_text("Done: delete 120 keys.")
    expect(page.get_by_role("table", name=re.compile("License keys"))).to_contain_text("(0 in all)")

    # Import: the dry-run report first, then the import.
    page.get_by_role("link", name="Import keys").click()
    expect(page.get_by_role("heading", name="Import license keys")).to_be_visible()
    lines = ["key,level,duration_days,note", "IMP-0001,1,7,a", "IMP-0001,1,7,b", f"{keys[1]},1,7,"]
    content = "\n".join([*lines, "bad key,1,7,", "IMP-0002,1,30,", ""])
    page.get_by_label("File to import").set_input_files(
        {"name": "keys.csv", "mimeType": "text/csv", "buffer": content.encode()}
    )
    page.get_by_role("button", name="Check the file").click()
    summary = page.locator("#import-summary")
    expect(summary).to_contain_text("2 keys would be created.")
    expect(summary).to_contain_text("1 repeated within the file")
    expect(summary).to_contain_text("1 already exists in this application")
    expect(summary).to_contain_text("1 invalid")
    tab.audit("licenses-import-report")
    page.get_by_role("button", name="Import 2 keys").click()
    expect(page.locator("#flash")).to_contain_text("Imported 2 keys.")
    tab.check_console()
