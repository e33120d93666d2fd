"""A worker of a real two-worker `serve` killed with SIGKILL (as the out-of-memory killer would)
while clients keep calling: `serve` keeps running, the other worker keeps answering, a new
worker replaces the dead one, the log and `/metrics` say so, and no request fails beyond the one
each client had in flight when the worker died."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import serve_live
from tests.live import LiveServer

pytestmark = pytest.mark.server

CLIENTS = 4  # the bounded load: each client has one request at a time in flight
AFTER = 10  # successful calls each client makes after the replacement listens
ANSWER_BOUND = 30.0  # seconds: generous; a request is never left waiting forever


@pytest.fixture(params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from serve_live(request, tmp_path_factory)


@dataclass
class Client:
    """One client calling `init` again and again, each call on a new connection."""

    server: LiveServer
    app: dict[str, str]
    failures: list[str] = field(default_factory=list)
    successes: int = 0
    after_replacement: int = 0

    def run(self, stop: threading.Event, replaced: threading.Event) -> None:
        params = {"type": "init", "ownerid": self.app["ownerid"], "name": self.app["name"]}
        headers = {"Connection": "close"}
        while not stop.is_set():
            try:
                answer = httpx.post(
                    f"{self.server.url}/api/1.3/", params=params, headers=headers, timeout=ANSWER_BOUND
                )
                ok = answer.status_code == 200 and answer.json()["success"] is True
                outcome = "" if ok else f"{answer.status_code} {answer.text[:200]}"
            except httpx.HTTPError as exc:
                ok, outcome = False, f"{type(exc).__name__}: {exc}"
            if ok:
                self.successes += 1
                self.after_replacement += replaced.is_set()
            else:
                self.failures.append(outcome)


def restarts(server: LiveServer) -> float:
    text = httpx.get(f"{server.url}/metrics", timeout=ANSWER_BOUND).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "licensegate_worker_restarts_total":
                return sample.value
    raise AssertionError(f"no licensegate_worker_restarts_total in {text}")


def wait_for(condition: str, check: object, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"gave up waiting until {condition}"
        time.sleep(0.1)


def test_a_killed_worker_is_replaced_and_the_service_keeps_answering(server: LiveServer) -> None:
    app = server.create_app("worker-death", "app")
    assert restarts(server) == 0
    before = server.worker_pids()
    assert len(before) == 2
    stop, replaced = threading.Event(), threading.Event()
    clients = [Client(server, app) for _ in range(CLIENTS)]
    threads = [threading.Thread(target=client.run, args=(stop, replaced)) for client in clients]
    for thread in threads:
        thread.start()
    try:
        wait_for("every client was answered", lambda: all(client.successes >= 3 for client in clients))
        victim, survivor = before
        os.kill(victim, signal.SIGKILL)
        wait_for(
            "a new worker replaced the dead one",
            lambda: len(server.worker_pids()) == 2 and victim not in server.worker_pids(),
        )
        replaced.set()
        wait_for("the clients went on", lambda: all(client.after_replacement >= AFTER for client in clients))
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=2 * ANSWER_BOUND)
    assert server.process.poll() is None, "serve exited"
    after = server.worker_pids()
    assert survivor in after
    assert victim not in after
    for client in clients:
        # At most the call it had in flight on the worker that died.
        assert len(client.failures) <= 1, client.failures
    assert restarts(server) == 1
    log = server.log.read_text()
    assert (
        f"worker-1 (pid {victim}) was killed by SIGKILL" in log
        or f"worker-2 (pid {victim}) was killed by SIGKILL" in log
    ), log
    assert "unexpected fault" not in log
