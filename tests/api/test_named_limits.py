"""Named rate limits (issue 23 part 4): limits the seller sets on a user or a key, counted on top
of the address and application limits, refused with their own code (429, `Retry-After`, signed
in every dialect), never spending the window of valid calls, and shared by two nodes through
Redis. The windows move with the test clock."""

from __future__ import annotations

import secrets
from pathlib import Path

import httpx
import pytest

from licensegate.app import build_app, outcomes
from licensegate.clock import MovableClock
from licensegate.services import Services
from licensegate_client import client as lg
from tests.api.test_client_dialects import HWID as DIALECT_HWID
from tests.api.test_client_dialects import App
from tests.api.test_client_dialects import app as dialect_app  # noqa: F401  (the fixture)
from tests.api.test_client_dialects import dialect as dialect  # the fixture
from tests.api.test_client_license import HWID, new_key
from tests.api.test_client_license import app as app  # the fixture: an initialised program
from tests.conftest import make_settings
from tests.helpers import Client, Seller, create_seller
from tests.test_ratelimit import REDIS_URL

pytestmark = pytest.mark.anyio


async def logged_in(seller: Seller, app: Client) -> str:
    key = await new_key(seller, days=400)
    await app.ok("license", key=key, hwid=HWID)
    return key


async def flag(services: Services, app_id: int) -> int:
    return int(await services.db.fetch_value("SELECT named_limits FROM apps WHERE id = ?", app_id))


async def test_seller_operations_and_their_refusals(seller: Seller, app: Client, services: Services) -> None:
    key = await logged_in(seller, app)  # the user is named by the key
    assert await flag(services, seller.app_id) == 0  # no limit: calls read none
    await seller.fails("setratelimit", 400, "named_limit_target", name="api", requests=5, window=60)
    await seller.fails(
        "setratelimit", 404, "user_not_found", user="nobody", name="api", requests=5, window=60
    )
    await seller.fails(
        "setratelimit", 404, "key_not_found", key="NOPE-NOPE", name="api", requests=5, window=60
    )
    await seller.fails(
        "setratelimit", 400, "number_out_of_range", user=key, name="api", requests=0, window=60
    )
    await seller.fails("setratelimit", 400, "number_out_of_range", user=key, name="api", requests=5, window=0)
    assert (await seller.ok("listratelimits", user=key))["limits"] == []

    body = await seller.ok("setratelimit", user=key, name="api", requests=5, window=60)
    assert body["limit"] == {"name": "api", "requests": 5, "window": 60}
    assert await flag(services, seller.app_id) == 1
    await seller.ok("setratelimit", user=key, name="api", requests=7, window=3600)  # changes it
    await seller.ok("setratelimit", user=key, name="burst", requests=2, window=1)
    await seller.ok("setratelimit", key=key, name="api", requests=9, window=60)
    assert (await seller.ok("listratelimits", user=key))["limits"] == [
        {"name": "api", "requests": 7, "window": 3600},
        {"name": "burst", "requests": 2, "window": 1},
    ]
    assert (await seller.ok("listratelimits", key=key))["limits"] == [
        {"name": "api", "requests": 9, "window": 60}
    ]
    await seller.ok("delratelimit", user=key, name="burst")
    await seller.fails("delratelimit", 404, "named_limit_not_found", user=key, name="burst")
    assert [row["name"] for row in (await seller.ok("listratelimits", user=key))["limits"]] == ["api"]

    targets = await services.db.fetch_all(
        "SELECT action FROM audit_log WHERE target = ? ORDER BY id", f"user:{key}"
    )
    assert [row["action"] for row in targets] == [
        "setratelimit",
        "setratelimit",
        "setratelimit",
        "delratelimit",
    ]


async def test_a_refused_call_spends_no_window(
    seller: Seller, app: Client, services: Services, clock: MovableClock
) -> None:
    """The user's hourly limit is counted before the key's per-minute one: calls the key's limit
    refuses must not use up the hour."""
    clock.set(1_800_000_000)  # the start of an hour (and of a minute)
    key = await logged_in(seller, app)
    await seller.ok("setratelimit", user=key, name="hour", requests=5, window=3600)
    await seller.ok("setratelimit", key=key, name="minute", requests=2, window=60)
    codes = [(await app.call("check")).status_code for _ in range(6)]
    assert codes == [200, 200, 429, 429, 429, 429]
    refused = await app.fails("check", 429, "named_limit_exceeded")
    assert refused["limit"] == "minute"
    assert refused["message"] == "Too many requests for this key (limit 'minute'); try again later."
    assert (await app.call("check")).headers["Retry-After"] == "60"

    clock.advance(60)  # a new minute: the hour has counted only the 2 calls admitted
    assert [(await app.call("check")).status_code for _ in range(3)] == [200, 200, 429]
    clock.advance(60)
    await app.ok("check")  # the fifth of the hour
    refused_response = await app.call("check")
    assert refused_response.json()["limit"] == "hour"
    assert refused_response.headers["Retry-After"] == str(3600 - 120)
    counted = outcomes(services)  # /metrics counts the refusals by whose limit refused
    assert ("licensegate_named_limit_refusals_total", ("key",), 7) in counted
    assert ("licensegate_named_limit_refusals_total", ("user",), 1) in counted

    # Other users of the application are not limited; removing the limits lifts them at once.
    other = app.fresh()
    await other.init()
    await logged_in(seller, other)
    await other.ok("check")
    await seller.ok("delratelimit", user=key, name="hour")
    await app.ok("check")


async def test_a_named_limit_refusal_is_429_and_signed_in_every_dialect(
    dialect_app: App,  # noqa: F811
    dialect: lg.Dialect,
) -> None:
    key = await dialect_app.key()
    program = dialect_app.client(dialect)  # it checks every answer's signature
    await program.init()
    assert (await program.license(key, hwid=DIALECT_HWID)).success
    await dialect_app.seller.ok("setratelimit", key=key, name="calls", requests=1, window=60)
    assert (await program.check()).success
    limited = await program.check()
    assert (limited.status, limited.error) == (429, "named_limit_exceeded")
    assert int(limited.headers["retry-after"]) > 0
    assert limited.retry_after == int(limited.headers["retry-after"])
    assert limited["limit"] == "calls"


async def test_two_nodes_share_a_named_limit_through_redis(db_url: str, tmp_path: Path) -> None:
    """Two Services over one database and one Redis (two nodes): the limit holds in total."""
    prefix = f"t{secrets.token_hex(6)}"
    clock = MovableClock(start=1_800_000_000)
    nodes = [
        await Services.open(
            make_settings(
                db_url,
                tmp_path / "data",
                redis_url=REDIS_URL,
                redis_prefix=prefix,
                redis_timeout_ms=5000,  # a loaded machine must not make it fall back
            ),
            clock=clock,
        )
        for _ in range(2)
    ]
    https = [
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(node.settings, node), client=("198.51.100.5", 4000)),
            base_url="http://testserver",
        )
        for node in nodes
    ]
    try:
        seller = await create_seller(nodes[0], https[0])
        first = Client(https[0], seller.ownerid, seller.name)
        await first.init()
        key = await logged_in(seller, first)
        second = Client(https[1], seller.ownerid, seller.name)
        second.sessionid = first.sessionid  # the same session, served by the other node
        await second.ok("check")  # node 2 has served this application before the limit is set
        await seller.ok("setratelimit", user=key, name="api", requests=6, window=60)
        seen = [(await (first if n % 2 else second).call("check")).status_code for n in range(10)]
        assert seen == [200] * 6 + [429] * 4
        clock.advance(60)
        assert (await second.call("check")).status_code == 200
    finally:
        for http in https:
            await http.aclose()
        for node in nodes:
            await node.close()
