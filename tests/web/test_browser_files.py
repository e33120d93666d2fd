"""In Chromium, against a real server with small limits (uploads 3 MiB, Download File 1 MiB): the
Files page. A 2 MiB file uploaded with the progress bar (its values watched until it is full),
flagged as too large for programs; a file over the upload limit refused in the page before it is
sent; a file fetched from a URL on a loopback server, an internal address refused next to the
field; on the file's page its content replaced (progress again) under the same id, which the
seller downloads and a program too once the file is open to any program; renamed, deleted
through the dialog; every file deleted; an upload after the session ended leads to the sign-in
page. On a slow line (Chromium's network emulation) the bar shows part of the file sent, and the
upload is cancelled. Without script the same forms post as plain forms. Pages audited."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect

from tests import databases
from tests.conftest import serve_live
from tests.httpservers import serving
from tests.live import LiveServer
from tests.web.browser import Tab, open_tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]
MIB = 1024 * 1024
# Every change of a <progress> value on the page, as [value, max] (the main part is swapped after
# an upload, so the observer watches the whole body).
WATCH_PROGRESS = """() => {
    window.seenProgress = [];
    new MutationObserver(records => records.forEach(r => {
        if (r.target.tagName === 'PROGRESS') { window.seenProgress.push([r.target.value, r.target.max]); }
    })).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['value']});
}"""


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def dashboard_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """Small limits, so that test files cross them; outbound requests may reach loopback (the
    test's own HTTP server holding a file to fetch)."""
    yield from serve_live(
        request,
        tmp_path_factory,
        public_host="localhost",
        LICENSEGATE_MAX_UPLOAD_BYTES=str(3 * MIB),
        LICENSEGATE_CLIENT_FILE_BYTES=str(MIB),
        LICENSEGATE_OUTBOUND_ALLOW="127.0.0.1",
    )


def payload(name: str, content: bytes) -> FilePayload:
    return {"name": name, "mimeType": "application/octet-stream", "buffer": content}


def upload_and_watch(page: Page, form: str, button: str, name: str, content: bytes) -> None:
    """Choose the file in `form` (its heading), send it, and wait for the bar to say it is done."""
    page.evaluate(WATCH_PROGRESS)
    section = page.get_by_role("form", name=form)
    section.get_by_label(re.compile(r"^(File|New content)")).set_input_files(payload(name, content))
    section.get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_role("form", name=form).locator(".upload-said")).to_contain_text(
        f"Upload complete: {name}", timeout=30_000
    )
    bar = page.get_by_role("form", name=form).locator("progress")
    expect(bar).to_be_visible()
    assert bar.evaluate("bar => bar.value === bar.max")
    seen: list[list[float]] = page.evaluate("window.seenProgress")
    # The bytes sent went through the bar (XMLHttpRequest's upload progress), up to all of them.
    assert any(value >= len(content) and value == top for value, top in seen), seen


def test_files_page(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("fileseller", PASSWORD)
    page = tab.page
    sign_in(tab, "fileseller")
    ownerid, _sellerkey = _create_app(tab, "File Shop")
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Files").click()
    expect(page.get_by_role("heading", name="Files", exact=True)).to_be_visible()
    table = page.get_by_role("table", name="Files")
    expect(table).to_contain_text("No files yet")

    big = os.urandom(2 * MIB)
    upload_and_watch(page, "Upload a file", "Upload", "Loader.exe", big)
    flash = page.locator("#flash")
    expect(flash).to_contain_text("Loader.exe is added as file")
    expect(flash).to_contain_text("Programs cannot download it: it is larger than the 1 MiB")
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table).to_contain_text("2 MiB")
    expect(table.locator("tbody tr", has_text="Loader.exe")).to_contain_text("Too large")
    expect(page.locator("#too-large")).to_contain_text("1 file is larger than the 1 MiB")

    # Over the upload limit: said next to the field at once, nothing sent.
    upload = page.get_by_role("form", name="Upload a file")
    upload.get_by_label("File", exact=True).set_input_files(payload("huge.iso", b"h" * (3 * MIB + 1)))
    posted: list[str] = []
    page.on("request", lambda request: posted.append(request.url) if request.method == "POST" else None)
    upload.get_by_role("button", name="Upload", exact=True).click()
    expect(page.locator("#f-file-error")).to_contain_text("larger than the limit of 3 MiB")
    assert posted == []
    expect(page.get_by_label("File", exact=True)).to_have_attribute("aria-invalid", "true")
    tab.audit("files-refused")

    with serving() as web:
        web.reply("/dl/readme.txt", b"read me first\n")
        fetch = page.get_by_role("form", name="Add a file from a URL")
        fetch.get_by_label("URL").fill("http://10.0.0.7/readme.txt")
        fetch.get_by_role("button", name="Fetch and add").click()
        expect(page.locator("#f-url-error")).to_contain_text("private address")
        fetch = page.get_by_role("form", name="Add a file from a URL")
        fetch.get_by_label("URL").fill(web.url("/dl/readme.txt"))
        fetch.get_by_label("Only logged-in users may download it").uncheck()
        fetch.get_by_role("button", name="Fetch and add").click()
        expect(flash).to_contain_text("readme.txt is added as file")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr", has_text="readme.txt")).to_contain_text("Any program")
    tab.audit("files")

    table.get_by_role("link", name="Loader.exe", exact=True).click()
    expect(page.get_by_role("heading", name="Loader.exe")).to_be_visible()
    file_id = page.locator("#file-id").inner_text()
    expect(page.locator("#too-large")).to_be_visible()
    small = b"MZ small loader v2"
    upload_and_watch(page, "Replace the content", "Upload and replace", "loader-v2.exe", small)
    expect(flash).to_contain_text("The content of Loader.exe is replaced (18 bytes); its id stays.")
    expect(page.locator("#file-id")).to_have_text(file_id)
    expect(page.locator("#too-large")).to_have_count(0)
    with page.expect_download() as saved:
        page.get_by_role("link", name="Download", exact=True).click()
    assert saved.value.suggested_filename == "Loader.exe"
    with open(saved.value.path(), "rb") as got_back:
        assert got_back.read() == small
    page.get_by_role("button", name="Let any program download Loader.exe").click()
    expect(flash).to_contain_text("Loader.exe can now be downloaded by any program")
    tab.audit("files-detail")

    # A program (not logged in) downloads the new content by the same id.
    with httpx.Client(base_url=dashboard_server.url, timeout=30) as http:
        base = {"ownerid": ownerid, "name": "File Shop"}
        init = http.post("/api/1.0/", params={**base, "type": "init"}).json()
        got = http.post(
            "/api/1.0/", params={**base, "sessionid": init["sessionid"], "type": "file", "fileid": file_id}
        ).json()
    assert got["success"] is True, got
    assert bytes.fromhex(got["contents"]) == small
    page.reload()
    expect(page.locator(".facts")).to_contain_text("1 by programs, the latest")

    page.get_by_label("Name", exact=True).fill("Loader 2.exe")
    page.get_by_role("button", name="Rename").click()
    expect(flash).to_contain_text(f"File {file_id} is now named Loader 2.exe.")
    page.get_by_role("button", name="Delete Loader 2.exe").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Delete the file Loader 2.exe?")
    dialog.get_by_role("button", name="Confirm").click()
    expect(flash).to_contain_text("The file Loader 2.exe is deleted.")
    expect(page.get_by_role("heading", name="Files", exact=True)).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(1)

    page.get_by_role("button", name="Delete every file…").click()
    expect(page.get_by_role("dialog")).to_contain_text("Delete all 1 file?")
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(flash).to_contain_text("Every file is deleted (1 file).")
    expect(table).to_contain_text("No files yet")

    # The session ended meanwhile: the upload's answer is the sign-in page, opened as a page.
    tab.context.clear_cookies()
    upload = page.get_by_role("form", name="Upload a file")
    upload.get_by_label("File", exact=True).set_input_files(payload("late.bin", b"late"))
    upload.get_by_role("button", name="Upload", exact=True).click()
    expect(page).to_have_url(re.compile(r"/dashboard/signin$"))
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    tab.check_console()


def test_files_without_script(chromium: Browser, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("plainseller", PASSWORD)
    tab = open_tab(chromium, dashboard_server.public_url, javascript=False)
    try:
        page = tab.page
        sign_in(tab, "plainseller")
        _create_app(tab, "Plain Shop")
        page.get_by_role("navigation", name="Application").get_by_role("link", name="Files").click()
        upload = page.get_by_role("form", name="Upload a file")
        upload.get_by_label("File", exact=True).set_input_files(payload("plain.bin", b"plain content"))
        upload.get_by_role("button", name="Upload", exact=True).click()
        expect(page.locator("#flash")).to_contain_text("plain.bin is added as file")
        expect(page.get_by_role("table", name="Files")).to_contain_text("13 bytes")
        # Just over the limit: the server reads it, refuses it next to the field (413).
        upload = page.get_by_role("form", name="Upload a file")
        upload.get_by_label("File", exact=True).set_input_files(payload("over.bin", b"o" * (3 * MIB + 1)))
        with page.expect_response(re.compile(r"/files/upload$")) as answer:
            upload.get_by_role("button", name="Upload", exact=True).click()
        assert answer.value.status == 413
        expect(page.locator("#f-file-error")).to_contain_text("larger than the limit of 3 MiB")
        # Far over: refused from its declared length, unread.
        upload = page.get_by_role("form", name="Upload a file")
        upload.get_by_label("File", exact=True).set_input_files(payload("far.bin", b"f" * (6 * MIB)))
        with page.expect_response(re.compile(r"/files/upload$")) as answer:
            upload.get_by_role("button", name="Upload", exact=True).click()
        assert answer.value.status == 413
        expect(page.locator("#f-file-error")).to_contain_text("larger than the limit of 3 MiB")
        page.get_by_role("button", name="Delete plain.bin").click()
        expect(page.get_by_role("heading", name="Delete the file plain.bin?")).to_be_visible()
        page.get_by_role("button", name="Delete the file").click()
        expect(page.locator("#flash")).to_contain_text("The file plain.bin is deleted.")
        tab.check_console()
    finally:
        tab.context.close()


def test_an_upload_on_a_slow_line_shows_its_progress_and_can_be_cancelled(
    tab: Tab, dashboard_server: LiveServer
) -> None:
    dashboard_server.create_account("slowseller", PASSWORD)
    page = tab.page
    sign_in(tab, "slowseller")
    _create_app(tab, "Slow Shop")
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Files").click()
    line = tab.context.new_cdp_session(page)  # Chromium's network emulation: 256 KiB/s up
    line.send("Network.enable")
    line.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 20, "downloadThroughput": -1, "uploadThroughput": 256 * 1024},
    )
    form = page.get_by_role("form", name="Upload a file")
    form.get_by_label("File", exact=True).set_input_files(payload("slow.bin", os.urandom(2 * MIB)))
    form.get_by_role("button", name="Upload", exact=True).click()
    bar = form.locator("progress")
    # Part of the file has gone, not all of it: the bar and its text say how much.
    page.wait_for_function(
        "() => { const bar = document.querySelector('#upload-progress');"
        " return bar.value > 0 && bar.value < bar.max * 0.9; }",
        timeout=20_000,
    )
    expect(form.locator(".upload-said")).to_contain_text(re.compile(r"\d+% sent \(.+ of 2 MiB\)"))
    expect(form.get_by_role("button", name="Upload", exact=True)).to_be_disabled()
    form.locator("progress").scroll_into_view_if_needed()
    tab.audit("files-uploading")
    form.get_by_role("button", name="Cancel the upload").click()
    expect(page.locator("#flash")).to_contain_text("The upload was cancelled; nothing was changed.")
    expect(bar).to_be_hidden()
    expect(form.get_by_role("button", name="Upload", exact=True)).to_be_enabled()
    line.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    page.reload()
    expect(page.get_by_role("table", name="Files")).to_contain_text("No files yet")
    tab.check_console()
