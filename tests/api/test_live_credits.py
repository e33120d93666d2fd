"""Usage credits against a real `licensegate serve` with two worker processes, on SQLite and
PostgreSQL: 100 concurrent spends of one balance are exact, and /metrics adds up what both
workers spent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.api.test_live_client import new_app, seller_call
from tests.conftest import serve_live
from tests.live import LiveServer

pytestmark = pytest.mark.server
TOKEN = "metrics-token-for-the-credits-test"
SPENDS = 100
BALANCE = 60


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serve_live(request, tmp_path_factory, LICENSEGATE_METRICS_TOKEN=TOKEN)


def spent_total(server: LiveServer) -> float:
    answer = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert answer.status_code == 200
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            if sample.name == "licensegate_credits_spent_total":
                return float(sample.value)
    raise AssertionError("licensegate_credits_spent_total is missing from /metrics")


async def spend_at_once(
    server: LiveServer, base: dict[str, str], sessions: list[str]
) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=SPENDS + 10)
    async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=60) as http:
        return await asyncio.gather(
            *(http.post("/api/1.0/", params={**base, "type": "spend", "sessionid": sid}) for sid in sessions)
        )


def test_one_hundred_concurrent_spends_across_two_workers_are_exact(server: LiveServer) -> None:
    created = new_app(server, "live-credits")
    key = seller_call(server, created["sellerkey"], "add", expiry="30")["key"]
    seller_call(server, created["sellerkey"], "setcredits", key=key, balance=str(BALANCE))
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    sessions = []
    with httpx.Client(base_url=server.url, timeout=30) as http:
        for _ in range(4):  # a few sessions of the one key, spread over the workers
            sid = http.post("/api/1.0/", params={**base, "type": "init"}).json()["sessionid"]
            login = http.post(
                "/api/1.0/",
                params={**base, "type": "license", "key": key, "hwid": "machine-00000001", "sessionid": sid},
            ).json()
            assert login["success"] is True, login
            assert login["credits"]["balance"] == BALANCE
            sessions.append(sid)
    before = spent_total(server)
    responses = asyncio.run(spend_at_once(server, base, [sessions[i % 4] for i in range(SPENDS)]))
    bodies = [r.json() for r in responses]
    assert sum(1 for b in bodies if b["success"]) == BALANCE, {r.text for r in responses}
    assert {b["error"] for b in bodies if not b["success"]} == {"credits_exhausted"}
    assert sorted(b["balance"] for b in bodies if b["success"]) == list(range(BALANCE))
    shown = seller_call(server, created["sellerkey"], "getcredits", key=key)["credits"]
    assert (shown["balance"], shown["spent"]) == (0, BALANCE)
    deadline = time.monotonic() + 20
    while spent_total(server) < before + BALANCE and time.monotonic() < deadline:
        time.sleep(0.3)  # another worker's counts are at most about a second old
    assert spent_total(server) == before + BALANCE
