"""In Chromium, against a real server (two workers) and the loopback stand-in of KeyAuth's seller
API: "Import from KeyAuth" on the Applications page. With a seller key: the read runs in the
background while the page shows its progress (held half way, the page reloaded: the same
progress, from whichever worker answers), then the dry-run report (counts, what is lost), and
nothing is imported until "Import" is pressed; then the application is there with its users and
keys, and its audit log says who imported it. With the export files: the check names what the
files lose. A wrong seller key ends in KeyAuth's own message. Pages audited."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import FilePayload, Page, expect

from tests import databases
from tests import keyauth_standin as ka
from tests.conftest import serve_live
from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.server]


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def dashboard_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """Outbound requests may reach loopback: the stand-in of KeyAuth."""
    yield from serve_live(
        request, tmp_path_factory, public_host="localhost", LICENSEGATE_OUTBOUND_ALLOW="127.0.0.1"
    )


def open_import(page: Page) -> None:
    page.goto(page.url.split("/dashboard")[0] + "/dashboard/apps")
    page.get_by_role("link", name="Import from KeyAuth").click()
    expect(page.get_by_role("heading", name="Import from KeyAuth")).to_be_visible()


def read_with_seller_key(page: Page, key: str, url: str) -> None:
    form = page.get_by_role("form", name="With the application's seller key")
    form.get_by_label("Seller key").fill(key)
    form.get_by_text("Address and pace").click()
    form.get_by_label("Seller API address").fill(url)
    form.get_by_label("Requests per seconds").fill("1000/0")
    form.get_by_role("button", name="Read the application").click()


def test_import_with_a_seller_key(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("mover", PASSWORD)
    page = tab.page
    sign_in(tab, "mover")
    app = ka.generate(users=12, keys=8)
    standin = ka.Standin(app)
    standin.hold_after = 20  # the lists, then four users; the fifth waits
    with ka.serving(standin) as url:
        open_import(page)
        tab.audit("keyauth-import")
        read_with_seller_key(page, app.sellerkey, url)
        count = page.locator("#import-count")
        expect(count).to_have_text(re.compile(r"^20 of \d+ requests$"), timeout=30_000)
        shown = count.inner_text()
        tab.audit("keyauth-import-progress")
        page.reload()  # the progress is the row's: any worker shows it
        expect(count).to_have_text(shown)
        standin.release.set()
        expect(page.get_by_role("heading", name="What the import will do")).to_be_visible(timeout=60_000)
        counts = page.get_by_role("table", name=re.compile("Standin App"))
        expect(counts.get_by_role("row", name=re.compile(r"^users"))).to_contain_text("12")
        warnings = page.locator(".report-warnings")
        expect(warnings).to_contain_text("read with usersub")
        expect(warnings).to_contain_text("imported disabled")
        tab.audit("keyauth-import-report")
    # Checked, not imported: the application does not exist yet.
    page.goto(page.url.split("/dashboard")[0] + "/dashboard/apps")
    expect(page.get_by_role("link", name="Standin App")).to_have_count(0)
    page.go_back()
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="Imported")).to_be_visible(timeout=60_000)
    # KeyAuth's team passwords are not reusable: each member's invitation link is shown.
    expect(page.locator(".invitations")).to_contain_text("reseller1: http")
    expect(page.locator(".invitations")).to_contain_text("manager1: http")
    tab.audit("keyauth-import-done")
    page.goto(page.url.split("/dashboard")[0] + "/dashboard/apps")
    page.get_by_role("link", name="Standin App").click()
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("table", name=re.compile("Audit"))).to_contain_text("importkeyauth")
    # The seller key came along: the seller API answers it, with every key.
    keys = seller_call(dashboard_server, app.sellerkey, "fetchallkeys").json()
    assert {k["key"] for k in keys["keys"]} == {k["key"] for k in app.keys}


def test_import_with_export_files(tab: Tab, dashboard_server: LiveServer, tmp_path: Path) -> None:
    dashboard_server.create_account("filemover", PASSWORD)
    page = tab.page
    sign_in(tab, "filemover")
    app = ka.generate(users=6, keys=4, seed=7)
    app.name = "Files App"
    keys, users = ka.write_exports(app, tmp_path)
    open_import(page)
    form = page.get_by_role("form", name="With the dashboard's export files")

    def payload(path: Path) -> FilePayload:
        return {"name": path.name, "mimeType": "application/json", "buffer": path.read_bytes()}

    form.get_by_label("KeyAuthKeys.json").set_input_files(payload(keys))
    form.get_by_label("KeyAuthUsers.json").set_input_files(payload(users))
    form.get_by_label("Application name").fill(app.name)
    form.get_by_label("Ownerid").fill(app.ownerid)
    form.get_by_label("Application secret").fill(app.secret)
    form.get_by_label(re.compile(r"^Version")).fill(app.version)
    form.get_by_role("button", name="Check the files").click()
    expect(page.get_by_role("heading", name="What the import will do")).to_be_visible(timeout=60_000)
    expect(page.locator(".report-warnings")).to_contain_text("no key status")
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="Imported")).to_be_visible(timeout=60_000)


def test_a_refused_seller_key(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("wrongkey", PASSWORD)
    page = tab.page
    sign_in(tab, "wrongkey")
    with ka.serving(ka.Standin(ka.generate(users=1, keys=1))) as url:
        open_import(page)
        read_with_seller_key(page, "0" * 32, url)
        expect(page.locator("#import-error")).to_contain_text(
            "No application with specified seller key found", timeout=30_000
        )
    open_import(page)
    page.get_by_role("form", name="With the application's seller key").get_by_label("Seller key").fill(
        "short"
    )
    page.get_by_role("button", name="Read the application").click()
    expect(page.locator("#f-sellerkey-error")).to_contain_text("32 characters")
