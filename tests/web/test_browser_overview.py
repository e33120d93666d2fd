"""In Chromium, against a real server with two workers: the overview after programs have logged
in (their counts written by the workers' background flush), its tables, "online now" refreshed
by htmx, pausing through the confirmation dialog; audited for accessibility, light and dark."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests import databases
from tests.conftest import serve_live
from tests.live import LiveServer, seller_call
from tests.web.browser import Tab, open_tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def dashboard_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """Workers write their login counts every second here, so the charts see them soon."""
    yield from serve_live(
        request, tmp_path_factory, public_host="localhost", LICENSEGATE_COUNT_FLUSH_SECONDS="1"
    )


def _programs_log_in(server: LiveServer, ownerid: str, name: str, sellerkey: str) -> None:
    """Three License Logins that work, two refused (an unknown key, another machine), one tamper
    report."""
    key = seller_call(server, sellerkey, "add", expiry="30", amount="1").json()["key"]
    seller_call(server, sellerkey, "add", expiry="3", amount="2")
    api = f"{server.url}/api/1.0/"
    base = {"ownerid": ownerid, "name": name}
    with httpx.Client(timeout=30) as http:
        for hwid, login_key in (
            (HWID, key),
            (HWID, key),
            (HWID, key),
            (HWID, "UNKNOWN-KEY"),
            ("other-pc-0001", key),
        ):
            session = http.post(api, params={**base, "type": "init"}).json()["sessionid"]
            http.post(
                api, params={**base, "type": "license", "sessionid": session, "key": login_key, "hwid": hwid}
            )
        http.post(api, params={**base, "type": "tamper", "sessionid": session, "reason": "debugger attached"})


def _create_app(tab: Tab, name: str) -> tuple[str, str]:
    page = tab.page
    page.get_by_label("Application name").fill(name)
    page.get_by_role("button", name="Create").click()
    sellerkey = page.locator("#sellerkey").inner_text()
    page.get_by_role("link", name=f"Go to {name}").click()
    expect(page.get_by_role("heading", name="Status", exact=True)).to_be_visible()
    page.get_by_role("link", name="Connect your program").click()
    ownerid = page.locator("#ownerid").inner_text()
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Overview").click()
    return ownerid, sellerkey


def _wait_for_logins(tab: Tab, successes: int) -> None:
    """Reload until the workers' counts are written (they flush every second)."""
    table = tab.page.locator("figure", has=tab.page.locator("h3", has_text="Logins per day")).locator("table")
    deadline = time.monotonic() + 20
    while True:
        # text_content: the table is inside a closed <details>, so it has no rendered text.
        cells = [t.strip() for t in table.locator("tbody tr").last.locator("td").all_text_contents()]
        headers = [t.strip() for t in table.locator("thead th").all_text_contents()]
        if "Success" in headers and cells[headers.index("Success") - 1] == str(successes):
            return
        assert time.monotonic() < deadline, f"the logins were not counted: {headers} {cells}"
        time.sleep(0.5)
        tab.page.reload()


def test_the_overview_shows_what_programs_did_and_pauses_the_application(
    tab: Tab, dashboard_server: LiveServer
) -> None:
    dashboard_server.create_account("overseer", PASSWORD)
    page = tab.page
    sign_in(tab, "overseer")
    ownerid, sellerkey = _create_app(tab, "Radar Pro")
    _programs_log_in(dashboard_server, ownerid, "Radar Pro", sellerkey)
    page.reload()
    _wait_for_logins(tab, 3)
    logins = page.locator("figure", has=page.locator("h3", has_text="Logins per day"))
    expect(logins.locator("svg[role=img]")).to_have_accessible_name(
        re.compile("Logins per day, last 30 days")
    )
    expect(logins.locator(".legend")).to_contain_text("Unknown key")
    expect(logins.locator(".legend")).to_contain_text("HWID mismatch")
    keys = page.locator("figure", has=page.locator("h3", has_text="License keys by status"))
    keys.get_by_text("Show the numbers").click()
    expect(keys.locator("table")).to_contain_text(re.compile(r"Not used\s*2"))
    expect(keys.locator("table")).to_contain_text(re.compile(r"Used\s*1"))
    expect(page.locator("#online")).to_contain_text("Users online")
    # htmx refreshes "online now" in place.
    with page.expect_response(lambda r: r.url.endswith("/online"), timeout=20_000) as refreshed:
        pass
    assert refreshed.value.status == 200
    expect(page.locator("#online")).to_contain_text(re.compile(r"Users online\s*1"))
    expect(page.locator("#online")).to_contain_text(re.compile(r"Machines in use\s*1"))
    expect(page.locator("#online")).to_contain_text(re.compile(r"Credits spent today\s*0"))
    tab.audit("overview")

    page.get_by_role("button", name="Pause the application").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("nobody's subscription runs down")
    tab.audit("overview-pause-dialog")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.locator("#flash")).to_contain_text("Radar Pro is paused")
    expect(page.get_by_role("button", name="Unpause the application")).to_be_visible()
    page.get_by_role("button", name="Unpause the application").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.locator("#flash")).to_contain_text("Radar Pro is running again")
    tab.check_console()


def test_the_overview_in_dark_mode_passes_the_audit(
    chromium: Browser, dashboard_server: LiveServer, tab: Tab
) -> None:
    dashboard_server.create_account("moonlight", PASSWORD)
    dark = open_tab(chromium, dashboard_server.public_url, shots=tab.shots)
    try:
        dark.page.emulate_media(color_scheme="dark")
        sign_in(dark, "moonlight")
        ownerid, sellerkey = _create_app(dark, "Night Radar")
        _programs_log_in(dashboard_server, ownerid, "Night Radar", sellerkey)
        dark.page.reload()
        _wait_for_logins(dark, 3)
        dark.page.locator("figure", has=dark.page.locator("h3", has_text="Logins per day")).get_by_text(
            "Show the numbers"
        ).click()
        dark.audit("overview-dark")
    finally:
        dark.context.close()
