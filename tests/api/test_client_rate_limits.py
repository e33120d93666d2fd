"""Client API rate limits: per address first, then per session, then a far higher ceiling for the
whole application, so one abusive address cannot starve an application's other users. Each test
runs with the in-process counters and with Redis."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest

from licensegate.addresses import counted_as
from licensegate.app import build_app
from licensegate.clock import Clock
from licensegate.config import Settings
from licensegate.services import Services
from tests.conftest import make_settings
from tests.helpers import Client, Seller, create_seller
from tests.test_ratelimit import REDIS_URL

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
def limiter_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def limits_settings(db_url: str, tmp_path: Path, backend: str, **overrides: object) -> Settings:
    if backend == "redis":
        overrides |= {
            "redis_url": REDIS_URL,
            "redis_prefix": f"t{secrets.token_hex(6)}",
            # A loaded machine must not make the limiter fall back to per-worker counting.
            "redis_timeout_ms": 5000,
        }
    return make_settings(db_url, tmp_path / "data", **overrides)


@pytest.fixture
def settings(db_url: str, tmp_path: Path, limiter_backend: str) -> Settings:
    return limits_settings(db_url, tmp_path, limiter_backend)


class Addresses:
    """One application reached from several client addresses (its seller from 192.0.2.250)."""

    seller: Seller

    def __init__(self, services: Services) -> None:
        self.app = build_app(services.settings, services)
        self._open: list[httpx.AsyncClient] = []

    def http(self, ip: str, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=self.app, client=(ip, 40000))
        http = httpx.AsyncClient(transport=transport, base_url="http://testserver", headers=headers)
        self._open.append(http)
        return http

    def client(self, ip: str, headers: dict[str, str] | None = None) -> Client:
        return Client(self.http(ip, headers), self.seller.ownerid, self.seller.name)

    async def close(self) -> None:
        for http in self._open:
            await http.aclose()

    @classmethod
    async def of(cls, services: Services) -> Addresses:
        made = cls(services)
        made.seller = await create_seller(services, made.http("192.0.2.250"))
        return made


@pytest.fixture
async def addresses(services: Services) -> AsyncIterator[Addresses]:
    made = await Addresses.of(services)
    try:
        yield made
    finally:
        await made.close()


async def statuses(client: Client, type_: str, count: int) -> list[int]:
    return [(await client.call(type_)).status_code for _ in range(count)]


async def test_one_address_flooding_init_is_refused_while_other_addresses_are_served(
    addresses: Addresses, services: Services
) -> None:
    """The default limits: 300 requests per address per minute at one application."""
    abuser = addresses.client("198.51.100.66")
    seen = await statuses(abuser, "init", services.settings.client_address_limit + 20)
    assert seen[: services.settings.client_address_limit] == [200] * services.settings.client_address_limit
    assert set(seen[services.settings.client_address_limit :]) == {429}
    refused = await abuser.call("init")
    body = refused.json()
    assert (refused.status_code, body["error"], body["code"]) == (429, "rate_limited", 42)
    assert 0 < int(refused.headers["Retry-After"]) <= services.settings.client_limit_window
    for ip in ("198.51.100.1", "198.51.100.2", "2001:db8:1::1"):
        await addresses.client(ip).init()


@asynccontextmanager
async def limited(
    db_url: str, tmp_path: Path, backend: str, clock: Clock | None = None, **overrides: object
) -> AsyncIterator[tuple[Services, Addresses]]:
    """An application served with these settings, reached from several addresses."""
    services = await Services.open(limits_settings(db_url, tmp_path, backend, **overrides), clock=clock)
    try:
        addresses = await Addresses.of(services)
        try:
            yield services, addresses
        finally:
            await addresses.close()
    finally:
        await services.close()


async def test_requests_refused_for_their_address_do_not_use_up_the_application_limit(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    async with limited(db_url, tmp_path, limiter_backend, client_address_limit=4) as (_services, addresses):
        await addresses.seller.ok("updatesettings", clientratelimit=10)
        abuser = addresses.client("198.51.100.66")
        assert await statuses(abuser, "init", 30) == [200] * 4 + [429] * 26
        # The application's ceiling (10) saw only the abuser's 4 allowed requests.
        assert await statuses(addresses.client("198.51.100.1"), "init", 4) == [200] * 4
        assert await statuses(addresses.client("198.51.100.2"), "init", 3) == [200, 200, 429]


async def test_one_session_is_limited_on_its_own(db_url: str, tmp_path: Path, limiter_backend: str) -> None:
    async with limited(db_url, tmp_path, limiter_backend, client_session_limit=3) as (_, addresses):
        program = addresses.client("198.51.100.7")
        await program.init()  # no session yet: counted for the address only
        # (check refuses a session not logged in with 403; the fourth call is not even looked at)
        assert await statuses(program, "check", 5) == [403, 403, 403, 429, 429]
        other = program.fresh()
        await other.init()  # the same address, another session
        assert await statuses(other, "check", 1) == [403]


async def test_behind_a_trusted_proxy_each_forwarded_address_counts_apart(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    proxies = Settings.from_env({"LICENSEGATE_TRUSTED_PROXIES": "10.0.0.1"}).trusted_proxies
    async with limited(
        db_url, tmp_path, limiter_backend, client_address_limit=3, trusted_proxies=proxies
    ) as (_, addresses):
        first = addresses.client("10.0.0.1", {"X-Forwarded-For": "198.51.100.1"})
        assert await statuses(first, "init", 4) == [200, 200, 200, 429]
        second = addresses.client("10.0.0.1", {"X-Forwarded-For": "198.51.100.2"})
        assert await statuses(second, "init", 1) == [200]
        # An untrusted peer's forwarded address is not believed: it counts as the peer.
        spoofer = addresses.client("198.51.100.9", {"X-Forwarded-For": "198.51.100.3"})
        assert await statuses(spoofer, "init", 4) == [200, 200, 200, 429]
        elsewhere = addresses.client("198.51.100.9", {"X-Forwarded-For": "198.51.100.4"})
        assert await statuses(elsewhere, "init", 1) == [429]


async def test_an_ipv6_subscriber_counts_as_its_whole_64(
    db_url: str, tmp_path: Path, limiter_backend: str
) -> None:
    async with limited(db_url, tmp_path, limiter_backend, client_address_limit=2) as (_, addresses):
        seen = [(await addresses.client(f"2001:db8:5:6::{n:x}").call("init")).status_code for n in (1, 2, 3)]
        assert seen == [200, 200, 429]
        assert await statuses(addresses.client("2001:db8:5:7::1"), "init", 1) == [200]


def test_what_an_address_counts_as() -> None:
    assert counted_as("198.51.100.7") == "198.51.100.7"
    assert counted_as("2001:db8:5:6:1:2:3:4") == "2001:db8:5:6::/64"
    assert counted_as("not an address") == "not an address"
