"""Event delivery by real `licensegate serve` processes (issue 22), on SQLite and PostgreSQL: a
server killed with SIGKILL while delivering 1,000 queued events loses none (a server started again
on the database delivers the rest; an event may arrive twice, always with its one id); two
servers on one database share the queue."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests import databases
from tests.httpservers import LocalServer, serving
from tests.live import LiveServer, seller_call, start_server

pytestmark = pytest.mark.server
EVENTS = 1000
ENV = {
    "LICENSEGATE_OUTBOUND_ALLOW": "127.0.0.1",
    "LICENSEGATE_EVENT_POLL_MS": "100",
    "LICENSEGATE_EVENT_TIMEOUT": "2",
}


@pytest.fixture(params=databases.FLAVOURS)
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'live.db'}"
        return
    url = databases.take_live_database()
    try:
        yield url
    finally:
        databases.give_back_live_database(url)


def wait_until(done: Callable[[], bool], what: str, within: float = 180.0) -> None:
    deadline = time.monotonic() + within
    while not done():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.1)


def gauges(server: LiveServer) -> dict[str, float]:
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name.startswith("licensegate_event"):
            for sample in family.samples:
                label = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                found[f"{sample.name}{{{label}}}"] = sample.value
    return found


def queue_empty(server: LiveServer) -> bool:
    found = gauges(server)
    return found.get("licensegate_event_queue_depth{}") == 0 and (
        found.get("licensegate_event_deliveries{state=delivered}") == EVENTS
    )


def received_ids(receiver: LocalServer) -> dict[str, bytes]:
    """Each event id the receiver saw, with its body; a second copy must be the same event."""
    seen: dict[str, bytes] = {}
    for request in list(receiver.requests):
        event_id = request.headers["licensegate-event-id"]
        body = orjson.loads(request.body)
        assert body["id"] == event_id
        if event_id in seen:
            assert orjson.loads(seen[event_id])["data"] == body["data"]
        seen[event_id] = request.body
    return seen


def queue_events(server: LiveServer, receiver: LocalServer) -> None:
    app = server.create_app("owner", "app")
    added = seller_call(
        server, app["sellerkey"], "addeventwebhook", url=receiver.url("/events"), events="key.created"
    )
    assert added.json()["success"] is True, added.text
    for _ in range(EVENTS // 100):
        made = seller_call(server, app["sellerkey"], "add", expiry="1", amount="100", format="json")
        assert made.json()["success"] is True, made.text


def test_sigkill_while_delivering_loses_no_event(database: str, tmp_path: Path) -> None:
    with serving() as receiver:
        receiver.reply("/events", b"ok", delay=0.5)  # slow: the kill comes mid-way
        first = start_server(database, tmp_path, 2, **ENV)
        try:
            queue_events(first, receiver)
            wait_until(lambda: len(receiver.answered) >= 100, "the first deliveries")
            os.killpg(first.process.pid, signal.SIGKILL)
            first.process.wait(timeout=30)
        finally:
            first.stop()
        before = len(received_ids(receiver))
        assert before < EVENTS, "the kill came after every event was delivered: nothing was tested"
        receiver.reply("/events", b"ok")
        second = start_server(database, tmp_path, 2, log_name="second.log", **ENV)
        try:
            wait_until(lambda: queue_empty(second), "every event delivered after the restart")
        finally:
            second.stop()
        assert len(received_ids(receiver)) == EVENTS


def test_two_servers_share_the_queue(database: str, tmp_path: Path) -> None:
    with serving() as receiver:
        receiver.reply("/events", b"ok", delay=0.05)
        servers = [start_server(database, tmp_path, 1, log_name=f"server{n}.log", **ENV) for n in range(2)]
        try:
            queue_events(servers[0], receiver)
            wait_until(lambda: queue_empty(servers[1]), "every event delivered")
            assert gauges(servers[0])["licensegate_event_attempts{outcome=delivered}"] == EVENTS
        finally:
            for server in servers:
                server.stop()
        ids = received_ids(receiver)
        assert len(ids) == EVENTS
        # Each delivery is made by one server: as many requests as events (no lease ran out here).
        assert len(receiver.requests) == EVENTS
