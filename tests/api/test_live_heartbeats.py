"""Heartbeats against a real `licensegate serve` with two worker processes, on SQLite and
PostgreSQL: the workers' sweep ends a killed client's session after the grace, which frees its
seat for another login."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.api.test_live_client import new_app, seller_call
from tests.conftest import serve_live
from tests.live import LiveServer

pytestmark = pytest.mark.server
HWID = "machine-0000000000000001"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serve_live(
        request,
        tmp_path_factory,
        LICENSEGATE_HEARTBEAT_SWEEP_SECONDS="1",
        LICENSEGATE_LOGIN_ADDRESS_LIMIT="100000",
    )


def test_a_killed_clients_seat_is_freed_after_the_grace(server: LiveServer) -> None:
    created = new_app(server, "live-heartbeats")
    sellerkey = created["sellerkey"]
    seller_call(server, sellerkey, "updatesettings", hwidcheck="0")
    key = seller_call(server, sellerkey, "add", expiry="30")["key"]
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    with httpx.Client(base_url=server.url, timeout=30) as http:

        def login() -> dict[str, object]:
            sid = http.post("/api/1.0/", params={**base, "type": "init"}).json()["sessionid"]
            params = {**base, "type": "license", "key": key, "hwid": HWID, "sessionid": sid}
            answer: dict[str, object] = http.post("/api/1.0/", params=params).json()
            return answer

        assert login()["success"] is True  # the first use makes the user
        seller_call(server, sellerkey, "setseats", sub="default", sessions="1")
        seller_call(server, sellerkey, "setheartbeat", interval="1", grace="1")
        # The first session holds the seat and never beats again (its program was killed).
        refused = login()
        assert refused["error"] == "seat_limit", refused
        deadline = time.monotonic() + 60
        answer = refused
        while answer.get("error") == "seat_limit" and time.monotonic() < deadline:
            time.sleep(0.5)
            answer = login()
        assert answer["success"] is True, answer  # a worker's sweep ended the silent session
