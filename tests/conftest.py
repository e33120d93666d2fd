"""Fixtures shared by the whole suite. Every test that touches a database runs twice: on SQLite
and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from xdist.scheduler import LoadScopeScheduling

from licensegate.app import build_app
from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.domain.apps import CreatedApp, create_application
from licensegate.services import Services
from tests import databases
from tests.helpers import Seller, create_seller
from tests.live import LiveServer, start_server
from tests.smtp import Inbox, smtp_server

# Modules whose tests share servers (and Chromium) started once per module: tests/**/test_live_*.py,
# tests/web/test_browser_*.py, and these.
SHARED_SERVER_MODULES = ("test_live_", "test_browser_", "test_long_writes.py", "test_server.py")


class LiveModulesTogether(LoadScopeScheduling):  # type: ignore[misc]  # xdist has no type hints
    """xdist's `load` distribution, except that all tests of a module that starts servers (or
    Chromium) once per module go to one test process, which then starts them once instead of
    once in each process that runs some of its tests. Such groups are handed out first (xdist
    orders work by its number of tests), so no long module is left for the end."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return path if Path(path).name.startswith(SHARED_SERVER_MODULES) else nodeid


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScopeScheduling | None:
    return LiveModulesTogether(config, log) if config.getoption("dist") == "load" else None


# Fixtures that exist on PostgreSQL only: the login announcements of notify mode.
POSTGRES_ONLY_FIXTURES = frozenset({"notify", "heard"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """What exists only on PostgreSQL (marked `postgres_only`, or using a fixture of
    POSTGRES_ONLY_FIXTURES) is not collected on SQLite, rather than skipped there: in this suite
    a skip would mean something is missing."""
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_sqlite = callspec is not None and callspec.params.get("db_url") == "sqlite"
        only_postgres = item.get_closest_marker("postgres_only") is not None or bool(
            POSTGRES_ONLY_FIXTURES & set(getattr(item, "fixturenames", ()))
        )
        (dropped if on_sqlite and only_postgres else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return databases.create_sqlite_template(tmp_path_factory.mktemp("template"))


@pytest.fixture(scope="session")
def postgres_test_url() -> str:
    return databases.claim_database(databases.unique_name("lgtest"))


@pytest.fixture(params=databases.FLAVOURS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        yield databases.sqlite_copy(template, tmp_path / "test.db")
    else:
        url: str = request.getfixturevalue("postgres_test_url")
        databases.empty_postgres(url)
        yield url


def make_settings(db_url: str, data_dir: Path, **overrides: object) -> Settings:
    base = Settings(
        data_dir=data_dir,
        database_url=db_url,
        argon2_time_cost=1,
        argon2_memory_kib=64,
        pg_pool_size=4,
    )
    return base.with_overrides(**overrides) if overrides else base


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    """A real SMTP server on 127.0.0.1 (its inbox, its port), for tests of e-mail."""
    with smtp_server() as server:
        yield server


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data")


@pytest.fixture
async def services(settings: Settings, clock: MovableClock) -> AsyncIterator[Services]:
    opened = await Services.open(settings, clock=clock)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def client(services: Services) -> AsyncIterator[httpx.AsyncClient]:
    app = build_app(services.settings, services)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.fixture
async def created(services: Services) -> CreatedApp:
    """An application as `create_application` answers it: with the secret and the public key the
    tests of KeyAuth's libraries need (a module overrides `seller` with `seller_of(created, ...)`)."""
    return await create_application(
        services.db, services.secrets, owner="o", name="app", now=services.clock.now()
    )


@pytest.fixture
async def seller(services: Services, client: httpx.AsyncClient) -> Seller:
    return await create_seller(services, client)


def serve_live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, **env: str
) -> Iterator[LiveServer]:
    """A real `licensegate serve` process with two workers, on its own database.

    Every request of a test comes from 127.0.0.1, and without Redis each worker admits its half
    of the per-address limit: how the kernel spreads a burst's connections between the workers
    would decide whether a test's 200 calls pass. So the address limit is out of the way unless a
    test sets it (tests of that limit start their own servers)."""
    env.setdefault("LICENSEGATE_CLIENT_ADDRESS_LIMIT", "1000000")
    folder = tmp_path_factory.mktemp("live")
    url = f"sqlite:///{folder / 'live.db'}" if request.param == "sqlite" else databases.take_live_database()
    server = start_server(url, folder, **env)
    try:
        yield server
    finally:
        server.stop()
        if request.param == "postgres":
            databases.give_back_live_database(url)


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def live_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    yield from serve_live(request, tmp_path_factory)


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def outbound_live_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A live server whose outbound requests may reach the loopback address (local test targets)."""
    yield from serve_live(request, tmp_path_factory, LICENSEGATE_OUTBOUND_ALLOW="127.0.0.1")
