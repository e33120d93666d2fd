"""In Chromium, against a real server allowed to call the loopback address: the Webhooks page. A
bad URL refused next to its field (htmx), a webhook added (its URL masked), a test call to a
local HTTP receiver with its outcome shown, the URL revealed, the webhook edited; a client's call
and a failing test in the delivery log with status, duration and error; a webhook deleted through
the dialog, then every one after a confirmation. Every page audited for accessibility."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests import databases
from tests.conftest import serve_live
from tests.httpservers import LocalServer, serving
from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]
SECRET = "s3cretSellerKey"
APP = "Hook Shop"


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def dashboard_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """The dashboard's server, whose outbound calls may reach the loopback receiver."""
    yield from serve_live(
        request, tmp_path_factory, public_host="localhost", LICENSEGATE_OUTBOUND_ALLOW="127.0.0.1"
    )


@pytest.fixture
def receiver() -> Iterator[LocalServer]:
    with serving() as server:
        server.reply("/hook", b'{"ok":true}', headers={"Content-Type": "application/json"})
        server.reply("/broken", b"upstream exploded", status=502)
        yield server


def client_webhook(server: LiveServer, ownerid: str, webid: str) -> httpx.Response:
    """A program's Webhook call: a session first (init), then the call."""
    base = {"ownerid": ownerid, "name": APP}
    opened = httpx.post(f"{server.url}/api/1.0/", params={**base, "type": "init"}, timeout=30).json()
    assert opened["success"] is True, opened
    query = {**base, "type": "webhook", "sessionid": opened["sessionid"], "webid": webid}
    return httpx.post(f"{server.url}/api/1.0/", params=query, timeout=30)


def test_webhooks_page(tab: Tab, dashboard_server: LiveServer, receiver: LocalServer) -> None:
    dashboard_server.create_account("hookseller", PASSWORD)
    page = tab.page
    sign_in(tab, "hookseller")
    ownerid, sellerkey = _create_app(tab, APP)
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Webhooks", exact=True).click()  # not "Event webhooks"
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    expect(page.get_by_role("table", name=re.compile("^Webhooks"))).to_contain_text("No webhooks yet")

    page.get_by_label("URL", exact=True).fill("ftp://example.com/hook")
    page.get_by_role("button", name="Add the webhook").click()
    expect(page.locator("#f-url-error")).to_contain_text("Only http:// and https://")
    expect(page.get_by_label("URL", exact=True)).to_have_attribute("aria-invalid", "true")
    tab.audit("webhooks-refused")

    url = receiver.url(f"/hook?key={SECRET}")
    page.get_by_label("URL", exact=True).fill(url)
    page.get_by_label("User agent (optional)").fill("MyApp/2.0")
    page.get_by_label("Id (optional)").fill("orders")
    page.get_by_role("button", name="Add the webhook").click()
    expect(page.get_by_role("heading", name="Webhook orders")).to_be_visible()
    expect(page.get_by_role("status").first).to_contain_text("The webhook orders is added")
    # Post/redirect/get, through htmx too: the address is the new webhook's.
    expect(page).to_have_url(re.compile(r"/webhooks/orders$"))
    expect(page.locator("main")).to_contain_text(f"http://127.0.0.1:{receiver.port}/•••")
    assert SECRET not in page.content()

    page.get_by_label("Parameters (optional)").fill("user=kim")
    page.get_by_role("button", name="Send test").click()
    result = page.locator("#test-result")
    expect(result).to_contain_text("HTTP 200")
    expect(result).to_contain_text('{"ok":true}')
    assert receiver.requests[-1].path == f"/hook?key={SECRET}&user=kim"
    assert receiver.requests[-1].headers["user-agent"] == "MyApp/2.0"
    expect(page.get_by_role("table", name="Recent calls of orders").locator("tbody tr")).to_have_count(1)
    tab.audit("webhooks-webhook")
    # The result came by a redirect: reloading shows the webhook again and calls nothing.
    expect(page).to_have_url(re.compile(r"/webhooks/orders(#test-result)?$"))
    calls = len(receiver.requests)
    page.reload()
    expect(page.get_by_role("heading", name="Webhook orders")).to_be_visible()
    expect(page.locator("#test-result")).to_have_count(0)
    expect(page.get_by_role("table", name="Recent calls of orders").locator("tbody tr")).to_have_count(1)
    assert len(receiver.requests) == calls

    page.get_by_role("button", name="Reveal the URL of orders").click()
    expect(page.locator("#webhook-url")).to_have_text(url)
    page.get_by_label("User agent (optional)").fill("MyApp/3.0")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").first).to_contain_text("The webhook orders is saved.")
    expect(page.locator("main")).to_contain_text("MyApp/3.0")
    assert SECRET not in page.content()  # hidden again

    # A second webhook any client session may call, and one whose target is not listening.
    for webid, target in (
        ("broken", receiver.url(f"/broken?key={SECRET}")),
        ("closed", "http://127.0.0.1:1/x"),
    ):
        made = seller_call(dashboard_server, sellerkey, "addwebhook", baseurl=target, webid=webid, authed="0")
        assert made.json()["success"] is True, made.text
    answered = client_webhook(dashboard_server, ownerid, "broken")
    assert answered.json()["response"] == "upstream exploded", answered.text

    page.get_by_role("link", name="← Webhooks").click()
    hooks = page.get_by_role("table", name=re.compile("^Webhooks"))
    expect(hooks.locator("tbody tr")).to_have_count(3)
    hooks.get_by_role("button", name="Send test to closed").click()
    expect(page.locator("#test-result")).to_contain_text("Could not connect to '127.0.0.1'")
    expect(page).to_have_url(re.compile(r"/webhooks/closed#test-result$"))
    page.get_by_role("link", name="← Webhooks").click()
    log = page.get_by_role("table", name=re.compile("^Delivery log"))
    rows = log.locator("tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.nth(0)).to_contain_text("closed")
    expect(rows.nth(0)).to_contain_text("Test GET")
    expect(rows.nth(0)).to_contain_text("Could not connect")
    expect(rows.nth(1)).to_contain_text("Client GET")
    expect(rows.nth(1)).to_contain_text("502")
    expect(rows.nth(1)).to_contain_text("upstream exploded")
    expect(rows.nth(2)).to_contain_text("200")
    expect(rows.nth(2)).to_contain_text(re.compile(r"\d+ ms"))
    assert SECRET not in page.content()
    tab.audit("webhooks")

    page.get_by_label("Outcome").select_option("failed")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"outcome=failed"))
    expect(rows).to_have_count(2)

    hooks.get_by_role("button", name="Delete orders").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Delete the webhook orders?")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status").first).to_contain_text("The webhook orders is deleted.")
    expect(hooks.locator("tbody tr")).to_have_count(2)
    page.get_by_role("button", name="Delete every webhook…").click()
    expect(page.get_by_role("heading", name="Delete every webhook?")).to_be_visible()
    page.get_by_role("button", name="Delete every webhook").click()
    expect(page.get_by_role("status").first).to_contain_text("Every webhook is deleted (2 webhooks).")
    tab.check_console()
