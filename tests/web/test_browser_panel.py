"""End to end, in Chromium against a real server, with the client library's `WebLoader` as the
desktop program: the seller turns the customer panel on and adds buttons (Web loader page); an
end user signs in on the panel (a wrong password refused), presses Connect; the page gets a
one-time token and hands it to the loader's local listener, which logs in with it through the
client API; the page shows the buttons and each press reaches the loader. The used token is
refused to a second login; the listener refuses requests from any other origin or host; the
HWID reset within its cooldown; both panel pages audited."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import httpx
import pytest
from playwright.sync_api import Browser, expect

from licensegate_client.client import Answer, Client, WebLoader
from tests import databases
from tests.conftest import serve_live
from tests.live import LiveServer, free_port, seller_call
from tests.web.browser import Tab, open_tab, screenshots_wanted
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]
LOADER_PORT = free_port()
HWID = "S-1-5-21-web-loader-0001"
KIM_PASSWORD = "kim's own password"
T = TypeVar("T")


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def panel_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A real server whose panel pages look for the loader on this test's free port."""
    yield from serve_live(
        request, tmp_path_factory, public_host="localhost", LICENSEGATE_WEB_LOADER_PORT=str(LOADER_PORT)
    )


@pytest.fixture
def panel_tab(chromium: Browser, panel_server: LiveServer, request: pytest.FixtureRequest) -> Iterator[Tab]:
    shots = screenshots_wanted() and "sqlite" in request.node.name
    opened = open_tab(chromium, panel_server.public_url, shots=shots)
    try:
        yield opened
    finally:
        opened.context.close()


class Program:
    """The desktop program: a client and its web-loader listener, on an event loop of their own
    (the test thread runs Playwright's)."""

    def __init__(self, server: LiveServer, ownerid: str, name: str, public_key: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server, self.ownerid, self.name, self.public_key = server, ownerid, name, public_key
        self.client = self.new_client()
        self.loader = WebLoader(self.client, panel_origin=server.public_url, hwid=HWID, port=LOADER_PORT)

    def new_client(self) -> Client:
        async def make() -> Client:
            return Client(self.server.url, ownerid=self.ownerid, name=self.name, public_key=self.public_key)

        return self.run(make())

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def start(self) -> None:
        async def start() -> None:
            assert (await self.client.init()).success
            await self.loader.start()

        self.run(start())

    def close(self) -> None:
        async def close() -> None:
            await self.loader.close()
            await self.client.aclose()

        self.run(close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def listener(path: str, **headers: str) -> httpx.Response:
    return httpx.get(f"http://127.0.0.1:{LOADER_PORT}{path}", headers=headers, timeout=10)


def test_panel_sign_in_token_loader_login_and_buttons(panel_tab: Tab, panel_server: LiveServer) -> None:
    tab, server = panel_tab, panel_server
    server.create_account("panelseller", PASSWORD)
    page = tab.page
    sign_in(tab, "panelseller")
    ownerid, sellerkey = _create_app(tab, "Panel Shop")
    page.get_by_role("link", name="Connect your program").click()
    public_key = page.locator("#public-key").inner_text().strip()
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Web loader").click()
    page.get_by_label("Customer panel on").check()
    page.get_by_label("Loader download link").fill("https://example.com/loader.exe")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("the customer panel is on")
    for value, text in (("start", "Start the game"), ("close", "Close the loader")):
        page.get_by_label("Text shown").fill(text)
        page.get_by_label("Value", exact=True).fill(value)
        page.get_by_role("button", name="Add the button").click()
        expect(page.get_by_role("status")).to_contain_text(f"({value}) is added")
    panel_url = page.locator("#panel-url").inner_text().strip()
    page.get_by_role("button", name="Sign out").click()
    added = seller_call(server, sellerkey, "adduser", user="kim", expiry="30", **{"pass": KIM_PASSWORD})
    assert added.json()["success"] is True, added.text

    page.goto(panel_url)
    expect(page.get_by_role("heading", name="Panel Shop: customer panel")).to_be_visible()
    page.get_by_label("Username").fill("kim")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("Invalid username or password.")
    tab.audit("customer-panel-signin")
    page.get_by_label("Username").fill("kim")
    page.get_by_label("Password").fill(KIM_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Your subscriptions")).to_be_visible()
    expect(page.get_by_role("link", name="Download the loader")).to_have_attribute(
        "href", "https://example.com/loader.exe"
    )
    choices = page.locator("#loader-buttons")
    expect(choices).to_be_hidden()

    program = Program(server, ownerid, "Panel Shop", public_key)
    try:
        program.start()
        # Nobody but the panel's page may talk to the loader: another origin, no origin, or a
        # name other than localhost (DNS rebinding) is refused before anything happens.
        foreign = listener("/handshake?user=kim&token=x", origin="http://evil.example")
        assert foreign.status_code == 403
        assert "access-control-allow-origin" not in foreign.headers
        assert listener("/handshake?user=kim&token=x").status_code == 403
        rebound = listener(
            "/handshake?user=kim&token=x", origin=server.public_url, host=f"evil.example:{LOADER_PORT}"
        )
        assert rebound.status_code == 403
        assert listener("/button?value=start&token=x", origin=server.public_url).status_code == 409
        preflight = httpx.options(
            f"http://127.0.0.1:{LOADER_PORT}/handshake",
            headers={"origin": server.public_url, "access-control-request-private-network": "true"},
            timeout=10,
        )
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == server.public_url
        assert preflight.headers["access-control-allow-private-network"] == "true"
        posted = httpx.post(
            f"http://127.0.0.1:{LOADER_PORT}/handshake", headers={"origin": server.public_url}
        )
        assert posted.status_code == 405

        login = asyncio.run_coroutine_threadsafe(program.loader.wait_for_login(), program.loop)
        page.get_by_role("button", name="Connect to the loader").click()
        expect(page.locator("#loader-status")).to_contain_text("The loader is signed in.")
        answer: Answer = login.result(30)
        assert answer.success
        assert answer.body["info"]["username"] == "kim"
        assert answer.body["info"]["hwid"] == HWID
        expect(choices).to_be_visible()
        tab.audit("customer-panel")

        pressed = asyncio.run_coroutine_threadsafe(program.loader.button(), program.loop)
        page.get_by_role("button", name="Start the game").click()
        assert pressed.result(30) == "start"
        expect(page.locator("#loader-status")).to_contain_text("Sent to the loader: Start the game.")
        closing = asyncio.run_coroutine_threadsafe(program.loader.button("close"), program.loop)
        page.get_by_role("button", name="Close the loader").click()
        assert closing.result(30) == "close"

        # The token did its one job: a second login with it is refused.
        used = program.loader._token
        assert used is not None
        again = program.new_client()

        async def reuse() -> Answer:
            await again.init()
            answer = await again.login_with_token("kim", used, hwid=HWID)
            await again.aclose()
            return answer

        refused = program.run(reuse())
        assert refused.success is False
        assert refused.error == "loader_token_invalid"
        # A button press needs the token of the accepted hand-off.
        wrong = listener("/button?value=start&token=nope", origin=server.public_url)
        assert wrong.status_code == 403
    finally:
        program.close()

    page.get_by_role("button", name="Reset HWID").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.locator("#flash")).to_contain_text("Your HWID is reset")
    expect(page.locator("#reset-wait")).to_contain_text("You can reset your HWID again in 7 days.")
    tab.check_console()

    # The owner sees both on kim's timeline and in the audit log.
    sign_in(tab, "panelseller")
    page.get_by_role("link", name="Panel Shop").click()
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Users").click()
    page.get_by_role("table", name=re.compile("^Users")).get_by_role("link", name="kim").click()
    timeline = page.get_by_role("table", name=re.compile("Timeline"))
    expect(timeline).to_contain_text("panelresethwid")
    expect(timeline).to_contain_text("panelsignin")
    expect(timeline).to_contain_text("kim (customer panel)")
    nav.get_by_role("link", name="Audit log").click()
    log = page.get_by_role("table", name=re.compile("Audit log"))
    expect(log.locator("tbody tr", has_text="panelsignin")).to_have_count(1)
    expect(log.locator("tbody tr", has_text="panelresethwid")).to_contain_text("user:kim")
    expect(page.locator("#chain")).to_contain_text("Intact since")
