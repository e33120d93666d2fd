"""Fixtures of the dashboard tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from playwright.sync_api import Browser

from licensegate.services import Services
from tests import databases
from tests.conftest import serve_live
from tests.live import LiveServer
from tests.web.browser import Tab, launch, open_tab, screenshots_wanted
from tests.web.pages import Dashboard, browser


@pytest.fixture
async def dash(services: Services) -> AsyncIterator[Dashboard]:
    async with browser(services) as opened:
        yield opened


# --- real browser against a real server --------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """Module-scoped, not session-scoped: Playwright's sync API keeps an event loop running on the
    test thread while it is open, which the asyncio tests of other modules cannot share."""
    yield from launch()


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def dashboard_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A real server whose public URL names `localhost` (security keys refuse IP addresses)."""
    yield from serve_live(request, tmp_path_factory, public_host="localhost")


@pytest.fixture
def tab(chromium: Browser, dashboard_server: LiveServer, request: pytest.FixtureRequest) -> Iterator[Tab]:
    """A fresh browser tab on the dashboard; screenshots (when asked for) from the SQLite run."""
    shots = screenshots_wanted() and "sqlite" in request.node.name
    opened = open_tab(chromium, dashboard_server.public_url, shots=shots)
    try:
        yield opened
    finally:
        opened.context.close()
