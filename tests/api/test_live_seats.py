"""Seats against a real `licensegate serve` with two worker processes, on SQLite and PostgreSQL:
100 concurrent logins of one user from every worker, counted exactly."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from tests.api.test_live_client import new_app, seller_call
from tests.conftest import serve_live
from tests.live import LiveServer, license_logins_at_once

pytestmark = pytest.mark.server
LOGINS = 100
SEATS = 5
HWID = "machine-0000000000000001"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Refused logins from one address count against it: the 95 refusals must not throttle.
    yield from serve_live(request, tmp_path_factory, LICENSEGATE_LOGIN_ADDRESS_LIMIT="100000")


@pytest.mark.parametrize("overage", ["refuse", "end_oldest"])
def test_one_hundred_concurrent_logins_across_two_workers(server: LiveServer, overage: str) -> None:
    created = new_app(server, f"live-seats-{overage}")
    sellerkey = created["sellerkey"]
    seller_call(server, sellerkey, "updatesettings", hwidcheck="0")
    key = seller_call(server, sellerkey, "add", expiry="30")["key"]
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    with httpx.Client(base_url=server.url, timeout=30) as http:  # the first use makes the user
        sid = http.post("/api/1.0/", params={**base, "type": "init"}).json()["sessionid"]
        first = http.post(
            "/api/1.0/", params={**base, "type": "license", "key": key, "hwid": HWID, "sessionid": sid}
        )
        assert first.json()["success"] is True, first.text
        http.post("/api/1.0/", params={**base, "type": "logout", "sessionid": sid})
    seller_call(server, sellerkey, "setseats", sub="default", sessions=str(SEATS), overage=overage)
    answers = asyncio.run(license_logins_at_once(server, base, key, [HWID] * LOGINS))
    succeeded = sum(1 for a in answers if a["success"])
    if overage == "refuse":
        assert succeeded == SEATS, {str(a.get("error")) for a in answers}
        assert {a["error"] for a in answers if not a["success"]} == {"seat_limit"}
    else:
        assert succeeded == LOGINS, {str(a.get("error")) for a in answers}
    seller_call(server, sellerkey, "setseats", user=key, sessions=str(SEATS), overage=overage)
    shown = seller_call(server, sellerkey, "getseats", user=key)
    assert shown["in_use"] == {"sessions": SEATS, "machines": 1}
