"""A key's first use racing other devices against a real `licensegate serve` with two worker
processes, on SQLite and PostgreSQL: with a seat limit of 1 exactly one of them logs in (the
first use), every other is refused `seat_limit`, across workers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.api.test_live_client import new_app, seller_call
from tests.conftest import serve_live
from tests.live import LiveServer, license_logins_at_once

pytestmark = pytest.mark.server
RACERS = 40


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Refused logins from one address count against it: the refusals must not throttle.
    yield from serve_live(request, tmp_path_factory, LICENSEGATE_LOGIN_ADDRESS_LIMIT="100000")


def test_the_first_use_takes_the_only_seat_across_two_workers(server: LiveServer) -> None:
    created = new_app(server, "live-first-use")
    sellerkey = created["sellerkey"]
    seller_call(server, sellerkey, "updatesettings", hwidcheck="0")
    seller_call(server, sellerkey, "setseats", sub="default", sessions="1")
    key = seller_call(server, sellerkey, "add", expiry="30")["key"]
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    answers = asyncio.run(
        license_logins_at_once(server, base, key, [f"machine-{i:04d}-00000000" for i in range(RACERS)])
    )
    assert sum(1 for a in answers if a["success"]) == 1, {str(a.get("error")) for a in answers}
    assert {a["error"] for a in answers if not a["success"]} == {"seat_limit"}
    shown = seller_call(server, sellerkey, "getseats", sub="default")
    assert shown["seats"]["sessions"] == 1
    seller_call(server, sellerkey, "setseats", user=key, sessions="1")
    assert seller_call(server, sellerkey, "getseats", user=key)["in_use"] == {"sessions": 1, "machines": 1}
