"""In Chromium, against a real server: the Logs and Tamper logs pages. A program's lines and
tamper report sent over the client API, listed newest first; searched as one types (htmx), a
user's cell filtering by it, a bad date refused next to its field, the filtered view exported,
the retention setting's link, an address's lines and then everything deleted through the
dialog; each page audited."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from tests.live import LiveServer
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_chats import client_call, program_of
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]
NAME = "Log Shop"


def test_logs_and_tamper_logs_pages(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("logowner", PASSWORD)
    page = tab.page
    sign_in(tab, "logowner")
    ownerid, sellerkey = _create_app(tab, NAME)
    with httpx.Client(base_url=dashboard_server.url, timeout=30) as http:
        anonymous = {"ownerid": ownerid, "name": NAME}
        anonymous["sessionid"] = client_call(http, anonymous, "init")["sessionid"]
        assert client_call(http, anonymous, "log", message="before login", pcuser="guest")["success"]
        session = program_of(dashboard_server, http, ownerid, sellerkey, NAME)
        for message in ("started", "Crash in module X", "closed"):
            assert client_call(http, session, "log", message=message, pcuser="KIM-PC")["success"]
        reported = client_call(http, session, "tamper", reason="debugger attached", details="x64dbg")
        assert reported["success"] is True, reported

    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Logs", exact=True).click()
    expect(page.get_by_role("heading", name="Logs", exact=True)).to_be_visible()
    table = page.get_by_role("table", name=re.compile("Logs"))
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(4)
    expect(rows.first).to_contain_text("closed")
    expect(rows.last).to_contain_text("before login")
    expect(rows.last).to_contain_text("Not signed in")
    expect(table).to_contain_text("(4 in all)")
    expect(page.locator("#kept")).to_contain_text("older than 30 days are deleted")
    tab.audit("logs")

    # Searched as one types (htmx swaps the results); then a user's cell filters by it.
    page.get_by_label("Search").fill("crash")
    expect(page).to_have_url(re.compile(r"search=crash"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Crash in module X")
    page.get_by_label("Search").fill("")
    expect(rows).to_have_count(4)
    table.get_by_role("link", name="kim").first.click()
    expect(page).to_have_url(re.compile(r"user=kim"))
    expect(rows).to_have_count(3)
    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
    saved = download.value.path().read_text()
    assert saved.splitlines()[0] == "id,created_at,credential,pcuser,message,ip"
    assert [line.split(",")[4] for line in saved.strip().splitlines()[1:]] == [
        "started",
        "Crash in module X",
        "closed",
    ]

    # A date the server cannot read (a browser's date field would not send one; a URL can).
    page.goto(page.url.split("?")[0] + "?from=2027-02-30")
    expect(page.locator("#flt-from-error")).to_contain_text("The date 'From' must look like 2026-01-31.")
    expect(page.get_by_label("From")).to_have_attribute("aria-invalid", "true")
    expect(rows.first).to_contain_text("Correct the filter marked above")
    tab.audit("logs-bad-date")

    page.get_by_role("link", name="change it in the settings").click()
    expect(page.get_by_label("Keep client logs (days)")).to_have_value("30")
    nav.get_by_role("link", name="Logs", exact=True).click()

    # An address's cell filters by it; its lines can then go (dellogsbyip).
    table.get_by_role("link", name="127.0.0.1").first.click()
    expect(page).to_have_url(re.compile(r"ip=127.0.0.1"))
    page.get_by_role("button", name="Delete the log lines from 127.0.0.1…").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Delete every log line sent from 127.0.0.1?")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The log lines from 127.0.0.1 are deleted.")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("No log lines yet")

    with httpx.Client(base_url=dashboard_server.url, timeout=30) as http:
        assert client_call(http, anonymous, "log", message="one more", pcuser="guest")["success"]
    page.reload()
    expect(rows.first).to_contain_text("one more")
    page.get_by_role("button", name="Delete every entry…").click()
    expect(dialog).to_contain_text("Delete every one of the log lines?")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("Every one of the log lines is deleted.")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("No log lines yet")

    nav.get_by_role("link", name="Tamper logs").click()
    expect(page.get_by_role("heading", name="Tamper logs")).to_be_visible()
    table = page.get_by_role("table", name=re.compile("Tamper logs"))
    expect(table).to_contain_text("debugger attached")
    expect(table).to_contain_text("x64dbg")
    expect(table.locator('a[href*="/users/"]')).to_have_text("kim")  # the signed-in user's page
    expect(page.locator("#kept")).to_contain_text("only records it")
    tab.audit("tamper-logs")
    page.get_by_label("Search").fill("nothing like it")
    expect(table).to_contain_text("Nothing matches these filters.")
    page.get_by_label("Search").fill("")
    expect(table).to_contain_text("debugger attached")
    page.get_by_role("button", name="Delete every entry…").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("Every one of the tamper reports is deleted.")
    expect(table).to_contain_text("No tamper reports.")
    tab.check_console()
