"""/metrics and the access log of a real `serve` with two workers: the counts of both workers add
up, and the log has one JSON line per request without a secret."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import serve_live
from tests.live import LiveServer

TOKEN = "metrics-token-for-the-test"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serve_live(
        request, tmp_path_factory, LICENSEGATE_ACCESS_LOG="on", LICENSEGATE_METRICS_TOKEN=TOKEN
    )


def samples(server: LiveServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert answer.status_code == 200
    found = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def count_of(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], type_: str, status: str) -> float:
    key = ("licensegate_requests_total", (("interface", "seller"), ("status", status), ("type", type_)))
    return found.get(key, 0)


def test_the_counts_of_both_workers_add_up(server: LiveServer) -> None:
    key = server.create_app("metrics-owner", "app")["sellerkey"]
    requests = 60

    def one(_: int) -> int:  # a new connection each: the requests spread over both workers
        answer = httpx.get(
            f"{server.url}/api/seller/", params={"sellerkey": key, "type": "setseller"}, timeout=30
        )
        return answer.status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(one, range(requests))) == {200}
    deadline = time.monotonic() + 20
    while True:  # another worker's counts are at most about a second old
        found = samples(server)
        if count_of(found, "setseller", "200") >= requests or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert count_of(found, "setseller", "200") == requests
    latency = ("licensegate_request_duration_seconds_count", (("interface", "seller"), ("type", "setseller")))
    assert found[latency] == requests
    assert found[("licensegate_worker_processes", ())] == 2
    assert found[("licensegate_db_connections", (("state", "open"),))] >= 2  # one per worker at least
    assert ("licensegate_password_checks", (("state", "queued"),)) in found
    assert ("licensegate_background_jobs_pending", ()) in found

    # The access log: one JSON line per request, from both workers, and no secret.
    lines = [json.loads(line) for line in server.log.read_text().splitlines() if line.startswith("{")]
    mine = [line for line in lines if line["type"] == "setseller"]
    assert len(mine) == requests
    assert {line["interface"] for line in mine} == {"seller"}
    assert {line["status"] for line in mine} == {200}
    assert {line["path"] for line in mine} == {"/api/seller/"}
    assert {line["client"] for line in mine} == {"127.0.0.1"}
    assert len({line["worker"] for line in mine}) == 2
    assert len({line["request_id"] for line in mine}) == requests
    assert all(line["duration_ms"] >= 0 and line["time"].endswith("Z") for line in mine)
    assert key not in server.log.read_text()


def test_metrics_need_the_token(server: LiveServer) -> None:
    assert httpx.get(f"{server.url}/metrics", timeout=10).status_code == 401
    wrong = httpx.get(f"{server.url}/metrics", headers={"Authorization": "Bearer nope"}, timeout=10)
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"] == "Bearer"


def test_a_client_call_is_counted_by_its_type(server: LiveServer) -> None:
    created = server.create_app("metrics-client", "app")
    params = {"type": "init", "ownerid": created["ownerid"], "name": "app", "ver": "1.0"}
    before = samples(server)
    key = ("licensegate_requests_total", (("interface", "client"), ("status", "200"), ("type", "init")))
    for _ in range(3):
        assert httpx.post(f"{server.url}/api/1.0/", params=params, timeout=10).status_code == 200
    deadline = time.monotonic() + 20
    while samples(server).get(key, 0) < before.get(key, 0) + 3 and time.monotonic() < deadline:
        time.sleep(0.3)
    assert samples(server).get(key, 0) == before.get(key, 0) + 3
    unknown = httpx.post(f"{server.url}/api/1.0/", params={"type": "nosuchtype"}, timeout=10)
    assert unknown.status_code >= 400
    log_lines = [json.loads(line) for line in server.log.read_text().splitlines() if line.startswith("{")]
    assert not any("nosuchtype" in json.dumps(line) for line in log_lines)  # only declared types
