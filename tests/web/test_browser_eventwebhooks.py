"""In Chromium, against a real server allowed to call the loopback address: the Event webhooks
page. A bad URL refused next to its field, an endpoint added; an event made through the seller
API delivered by the server's own worker to a local receiver and shown in the delivery log; a
test event; the endpoint disabled and enabled; an event redelivered with its id; the endpoint
deleted through the dialog. Every page audited for accessibility."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

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
APP = "Event Shop"


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def dashboard_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    yield from serve_live(
        request,
        tmp_path_factory,
        public_host="localhost",
        LICENSEGATE_OUTBOUND_ALLOW="127.0.0.1",
        LICENSEGATE_EVENT_POLL_MS="100",
    )


@pytest.fixture
def receiver() -> Iterator[LocalServer]:
    with serving() as server:
        server.reply("/events", b"thanks")
        yield server


def wait_until(done: Callable[[], bool], what: str, within: float = 60.0) -> None:
    """Wait for the server's delivery worker (a condition, not a duration, is what is checked)."""
    deadline = time.monotonic() + within
    while not done():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def test_event_webhooks_page(tab: Tab, dashboard_server: LiveServer, receiver: LocalServer) -> None:
    dashboard_server.create_account("eventseller", PASSWORD)
    page = tab.page
    sign_in(tab, "eventseller")
    _ownerid, sellerkey = _create_app(tab, APP)
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Event webhooks").click()
    expect(page.get_by_role("heading", name="Event webhooks", exact=True)).to_be_visible()
    expect(page.get_by_role("table", name=re.compile("^Endpoints"))).to_contain_text("No event webhooks yet")

    page.get_by_label("URL", exact=True).fill("ftp://example.com/hook")
    page.get_by_role("button", name="Add the event webhook").click()
    expect(page.locator("#f-url-error")).to_contain_text("http")
    page.get_by_label("URL", exact=True).fill(receiver.url("/events?token=abc"))
    page.get_by_label("Events (optional)").fill("user.created, user.banned")
    page.get_by_role("button", name="Add the event webhook").click()
    expect(page.get_by_role("status").first).to_contain_text("The event webhook 1 is added")
    endpoints = page.get_by_role("table", name=re.compile("^Endpoints"))
    expect(endpoints).to_contain_text("user.created, user.banned")
    assert "token=abc" not in page.content()
    tab.audit("event-webhooks")

    made = seller_call(dashboard_server, sellerkey, "adduser", user="kim", sub="default", expiry="30")
    assert made.json()["success"] is True, made.text
    wait_until(lambda: len(receiver.requests) == 1, "the user.created delivery")
    assert receiver.requests[0].headers["licensegate-event"] == "user.created"
    event_id = receiver.requests[0].headers["licensegate-event-id"]
    log = page.get_by_role("table", name="Attempts")
    # The attempt is noted once the receiver has answered: look again until it is there.
    wait_until(lambda: page.reload() is not None and "delivered" in log.inner_text(), "the delivery log")
    expect(log.locator("tbody tr")).to_have_count(1)
    expect(log).to_contain_text(event_id)

    endpoints.get_by_role("button", name="Send test to event webhook 1").click()
    expect(page.get_by_role("status").first).to_contain_text("HTTP status 200")
    assert receiver.requests[-1].headers["licensegate-event"] == "endpoint.test"

    endpoints.get_by_role("button", name="Disable event webhook 1").click()
    expect(endpoints).to_contain_text("Disabled")
    endpoints.get_by_role("button", name="Enable event webhook 1").click()
    expect(endpoints).to_contain_text("Enabled")

    before = len(receiver.requests)
    page.get_by_role("table", name="Events").get_by_role("button", name=f"Redeliver {event_id}").click()
    expect(page.get_by_role("status").first).to_contain_text(f"The event {event_id} is queued again")
    wait_until(lambda: len(receiver.requests) == before + 1, "the redelivery")
    assert receiver.requests[-1].headers["licensegate-event-id"] == event_id

    endpoints.get_by_role("button", name="Delete event webhook 1").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status").first).to_contain_text("The event webhook 1 is deleted.")
    expect(endpoints).to_contain_text("No event webhooks yet")
    tab.check_console()
