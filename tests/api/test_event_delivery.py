"""Delivering events to a real loopback receiver (issue 22), on SQLite and PostgreSQL: signatures
verify with docs/events.md's Python and JavaScript examples; retries keep the event id; 410
disables; the failure alert arrives over SMTP; redelivery; two workers on one database deliver
each event once; the expiring-soon scan; metrics. Time moves by the test clock, never by sleeps."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from licensegate import eventworker
from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.domain import eventdelivery, eventendpoints, events, expiryevents
from licensegate.domain.apps import create_application
from licensegate.eventworker import courier_of
from licensegate.services import Services
from licensegate.store import events as store_events
from tests.conftest import make_settings
from tests.helpers import Seller, seller_of
from tests.httpservers import LocalServer, Seen, serving
from tests.smtp import Inbox

pytestmark = pytest.mark.anyio
DOCS = Path(__file__).resolve().parents[2] / "docs" / "events.md"


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", outbound_allow=("127.0.0.1",), event_alert_failures=3)


@pytest.fixture
def receiver() -> Any:
    with serving() as server:
        server.reply("/hook", b'{"ok":true}')
        yield server


class Shop:
    def __init__(self, services: Services, seller: Seller, public_key: str, endpoint: str) -> None:
        self.services, self.seller, self.public_key, self.endpoint = services, seller, public_key, endpoint

    async def deliver(self) -> int:
        return await eventdelivery.deliver_due(courier_of(self.services))

    async def state(self) -> list[str]:
        rows = await self.services.db.fetch_all("SELECT state FROM event_deliveries ORDER BY id")
        return [row["state"] for row in rows]


@pytest.fixture
async def shop(services: Services, client: Any, receiver: LocalServer) -> Shop:
    created = await create_application(
        services.db, services.secrets, owner="o", name="app", now=services.clock.now()
    )
    seller = seller_of(created, client)
    body = await seller.ok("addeventwebhook", url=receiver.url("/hook?shop=1"))
    return Shop(services, seller, created.public_key, body["id"])


def example(language: str) -> str:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(), re.S)
    assert len(blocks) == 1
    block: str = blocks[0]
    return block


def verify_python(public_key: str, seen: Seen, now: int) -> bool:
    namespace: dict[str, Any] = {}
    exec(example("python"), namespace)  # noqa: S102 - the documented example, run as written
    return bool(namespace["verify"](public_key, seen.method, seen.path, seen.headers, seen.body, now))


def verify_node(tmp_path: Path, public_key: str, seen: list[Seen], now: int) -> list[bool]:
    module = tmp_path / "verify.js"
    module.write_text(example("js"))
    harness = tmp_path / "harness.js"
    harness.write_text(
        'const { verify } = require("./verify.js");\n'
        'const cases = JSON.parse(require("node:fs").readFileSync(0, "utf8"));\n'
        "console.log(JSON.stringify(cases.map((c) => verify(c.key, c.method, c.path, c.headers, "
        'Buffer.from(c.body, "base64"), c.now))));\n'
    )
    cases = [
        {
            "key": public_key,
            "method": s.method,
            "path": s.path,
            "headers": s.headers,
            "body": base64.b64encode(s.body).decode(),
            "now": now,
        }
        for s in seen
    ]
    done = subprocess.run(
        ["node", str(harness)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: list[bool] = json.loads(done.stdout)
    return result


async def test_signed_delivery_verifies_in_python_and_node(
    shop: Shop, receiver: LocalServer, services: Services, tmp_path: Path
) -> None:
    await shop.seller.ok("adduser", user="alice", sub="default", expiry=30)
    await shop.seller.ok("banuser", user="alice", reason="chargeback")
    assert await shop.deliver() == 2
    assert await shop.state() == ["delivered", "delivered"]
    # Deliveries due together are made together, in any order.
    by_type = {seen.headers["licensegate-event"]: seen for seen in receiver.requests}
    first, second = by_type["user.created"], by_type["user.banned"]
    assert (first.method, first.path) == ("POST", "/hook?shop=1")
    body = orjson.loads(second.body)
    assert body["type"] == "user.banned"
    assert body["id"] == second.headers["licensegate-event-id"] == second.headers["idempotency-key"]
    assert body["data"]["user"]["username"] == "alice"
    now = services.clock.now()
    assert verify_python(shop.public_key, first, now)
    assert verify_python(shop.public_key, second, now)
    assert verify_node(tmp_path, shop.public_key, [first, second], now) == [True, True]
    # A body changed on the way, or another path, does not verify.
    forged = Seen(
        second.method, second.path, second.headers, second.body.replace(b"chargeback", b"mistake!!!")
    )
    moved = Seen(second.method, "/other", second.headers, second.body)
    assert not verify_python(shop.public_key, forged, now)
    assert not verify_python(shop.public_key, moved, now)
    assert verify_node(tmp_path, shop.public_key, [forged, moved], now) == [False, False]
    # Too old a timestamp is refused by the examples.
    assert not verify_python(shop.public_key, first, now + 3600)


async def test_fails_three_times_then_gets_it_with_the_same_id(
    shop: Shop, receiver: LocalServer, services: Services, clock: MovableClock
) -> None:
    receiver.reply("/hook", b"down for maintenance", status=503)
    await shop.seller.ok("adduser", user="bob", sub="default", expiry=30)
    for attempt in range(3):
        assert await shop.deliver() == 1
        assert await shop.deliver() == 0  # not due again before its backoff
        clock.advance(2 * 30 * 2**attempt)  # past the longest backoff with jitter
    receiver.reply("/hook", b"thanks")
    assert await shop.deliver() == 1
    assert await shop.state() == ["delivered"]
    ids = {seen.headers["licensegate-event-id"] for seen in receiver.requests}
    assert len(receiver.requests) == 4
    assert len(ids) == 1
    log = await shop.seller.ok("fetcheventdeliveries")
    assert [a["outcome"] for a in log["attempts"]] == ["delivered", "retry", "retry", "retry"]
    assert [a["status"] for a in log["attempts"]] == [200, 503, 503, 503]
    assert log["attempts"][1]["response"] == "down for maintenance"
    endpoint = (await shop.seller.ok("fetcheventwebhooks"))["endpoints"][0]
    assert endpoint["failures"] == 0  # a success clears the count


async def test_gives_up_after_the_retry_window(
    shop: Shop, receiver: LocalServer, clock: MovableClock
) -> None:
    receiver.reply("/hook", b"", status=500)
    await shop.seller.ok("adduser", user="carl", sub="default", expiry=30)
    started, attempts = clock.now(), 0
    while await shop.state() == ["pending"]:
        clock.set(await shop.services.db.fetch_value("SELECT due_at FROM event_deliveries"))
        attempts += await shop.deliver()
    assert await shop.state() == ["failed"]
    # Doubling delays from 30 s, capped at 6 hours, for two days: 16 to 18 attempts.
    assert 14 <= attempts <= 20
    assert 40 * 3600 <= clock.now() - started <= 48 * 3600


async def test_410_disables_the_endpoint(shop: Shop, receiver: LocalServer, services: Services) -> None:
    receiver.reply("/hook", b"gone", status=410)
    await shop.seller.ok("adduser", user="dora", sub="default", expiry=30)
    await shop.seller.ok("banuser", user="dora")
    assert await shop.deliver() == 2
    endpoint = (await shop.seller.ok("fetcheventwebhooks"))["endpoints"][0]
    assert endpoint["enabled"] == 0
    assert "410" in endpoint["disabled_reason"]
    assert await shop.state() == ["failed", "failed"]
    await shop.seller.ok("unbanuser", user="dora")  # no endpoint wants it now
    assert await services.db.fetch_value("SELECT COUNT(*) FROM events") == 2
    await shop.seller.ok("editeventwebhook", id=shop.endpoint, enabled=1)
    endpoint = (await shop.seller.ok("fetcheventwebhooks"))["endpoints"][0]
    assert (endpoint["enabled"], endpoint["disabled_reason"]) == (1, None)


async def test_410_tells_every_worker_the_login_events_are_no_longer_wanted(
    shop: Shop, receiver: LocalServer, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    app_id = shop.seller.app_id
    await shop.seller.ok("editeventwebhook", id=shop.endpoint, events="all,user.logged_in")
    assert await services.event_wants.get(services.db, app_id) == frozenset(
        {"user.logged_in", "blacklist.hit"}
    )
    told: list[int] = []
    announce = services.event_wants.changed

    async def spy(changed: int) -> None:
        told.append(changed)
        await announce(changed)

    monkeypatch.setattr(services.event_wants, "changed", spy)
    receiver.reply("/hook", b"gone", status=410)
    await shop.seller.ok("adduser", user="gina", sub="default", expiry=30)
    assert await shop.deliver() == 1
    assert told == [app_id]
    assert await services.event_wants.get(services.db, app_id) == frozenset()


async def test_repeated_failures_email_the_owner_once(
    db_url: str,
    tmp_path: Path,
    smtp: tuple[Inbox, int],
    clock: MovableClock,
    receiver: LocalServer,
    client: Any,
) -> None:
    inbox, port = smtp
    settings = make_settings(
        db_url,
        tmp_path / "mail",
        outbound_allow=("127.0.0.1",),
        event_alert_failures=3,
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_security="none",
    )
    services = await Services.open(settings, clock=clock)
    try:
        created = await create_application(
            services.db, services.secrets, owner="o", name="app", now=clock.now()
        )
        await services.db.execute(
            "UPDATE accounts SET email = 'owner@example.test' "
            "WHERE id = (SELECT account_id FROM apps WHERE id = ?)",
            created.app_id,
        )
        courier = courier_of(services)
        receiver.reply("/hook", b"", status=500)
        await eventendpoints.add(
            settings,
            services.db,
            services.secrets,
            created.app_id,
            eventendpoints.EndpointSpec(receiver.url("/hook"), "all", None, None, None),
            clock.now(),
        )
        for n in range(5):
            async with services.db.transaction() as tx:
                await events.record(tx, created.app_id, "app.paused", clock.now(), {"n": n})
        assert await eventdelivery.deliver_due(courier) == 5  # five failures at once: one alert
        await services.mailer.drain()
        assert len(inbox.messages) == 1
        message = inbox.messages[0]
        assert message["To"] == "owner@example.test"
        assert "failing" in message["Subject"]
        assert receiver.url("/hook") not in message.get_payload()
        alerted = await services.db.fetch_value("SELECT alerted_at FROM event_endpoints")
        assert alerted is not None
    finally:
        await services.close()


async def test_redelivery_keeps_the_id(shop: Shop, receiver: LocalServer, clock: MovableClock) -> None:
    await shop.seller.ok("adduser", user="erin", sub="default", expiry=30)
    assert await shop.deliver() == 1
    event_id = receiver.requests[0].headers["licensegate-event-id"]
    assert (await shop.seller.ok("redeliverevent", event=event_id))["queued"] == 1
    assert await shop.deliver() == 1
    assert [s.headers["licensegate-event-id"] for s in receiver.requests] == [event_id, event_id]
    await shop.seller.fails("redeliverevent", 404, "event_not_found", event="evt_nothing")
    # Failed deliveries since a time, again.
    receiver.reply("/hook", b"", status=410)
    await shop.seller.ok("banuser", user="erin")
    assert await shop.deliver() == 1
    await shop.seller.ok("editeventwebhook", id=shop.endpoint, enabled=1)
    receiver.reply("/hook", b"ok")
    since = clock.now() - 1
    assert (await shop.seller.ok("redeliverfailedevents", since=since))["queued"] == 1
    assert await shop.deliver() == 1
    assert receiver.requests[-1].headers["licensegate-event"] == "user.banned"
    assert (
        receiver.requests[-1].headers["licensegate-event-id"]
        == receiver.requests[-2].headers["licensegate-event-id"]
    )


async def test_test_button_and_formats(shop: Shop, receiver: LocalServer) -> None:
    answer = await shop.seller.ok("testeventwebhook", id=shop.endpoint)
    assert answer["status"] == 200
    assert receiver.requests[-1].headers["licensegate-event"] == "endpoint.test"
    await shop.seller.ok("editeventwebhook", id=shop.endpoint, format="discord")
    await shop.seller.ok("testeventwebhook", id=shop.endpoint)
    discord = orjson.loads(receiver.requests[-1].body)
    assert discord["embeds"][0]["title"] == "endpoint.test"
    await shop.seller.ok("editeventwebhook", id=shop.endpoint, format="slack")
    await shop.seller.ok("testeventwebhook", id=shop.endpoint)
    assert "endpoint.test in app" in orjson.loads(receiver.requests[-1].body)["text"]
    # The guarded client refuses internal targets (only 127.0.0.1 is allowed in these tests).
    await shop.seller.fails("addeventwebhook", 400, "target_not_allowed", url="http://10.0.0.1/hook")
    await shop.seller.fails(
        "addeventwebhook", 400, "unknown_event", url=receiver.url("/x"), events="user.exploded"
    )
    await shop.seller.fails("deleteeventwebhook", 404, "event_endpoint_not_found", id=999)


async def test_include_keys_sends_the_full_key(shop: Shop, receiver: LocalServer) -> None:
    keys = await shop.seller.ok("add", expiry=1, mask="****-****-****-****", amount=1, format="json")
    key = keys["keys"][0]
    assert await shop.deliver() == 1
    assert key.encode() not in receiver.requests[-1].body
    await shop.seller.ok("editeventwebhook", id=shop.endpoint, includekeys=1)
    await shop.seller.ok("ban", key=key, reason="leaked")
    assert await shop.deliver() == 1
    assert orjson.loads(receiver.requests[-1].body)["data"]["key"]["key"] == key


async def test_two_workers_deliver_each_event_once(
    shop: Shop,
    receiver: LocalServer,
    services: Services,
    settings: Settings,
    clock: MovableClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two nodes (each its own Services: its own connections) drain one queue at once: each event
    is delivered once, and both nodes delivered some. Both run on one event loop, so the second
    node claims while the first node's first batch is on the wire (its requests wait on the
    network): both take part by the order of the loop, not by timing."""
    for n in range(60):
        async with services.db.transaction() as tx:
            await events.record(tx, shop.seller.app_id, "app.paused", clock.now(), {"n": n})
    other = await Services.open(settings, clock=clock)  # a second node: its own connections
    claimed: dict[int, list[str]] = {id(services.db): [], id(other.db): []}  # event ids, by node
    claim = store_events.claim

    async def noting(db: Any, **how: Any) -> list[store_events.DueRow]:
        rows = await claim(db, **how)
        claimed[id(db)].extend(row["event_id"] for row in rows)
        return rows

    monkeypatch.setattr(store_events, "claim", noting)
    try:
        couriers = [courier_of(services), courier_of(other)]

        async def drain(courier: eventdelivery.Courier) -> int:
            made = 0
            while got := await eventdelivery.deliver_due(courier, limit=7):
                made += got
            return made

        made = await asyncio.gather(*(drain(c) for c in couriers))
    finally:
        await other.close()
    first, second = claimed.values()
    assert first  # both nodes took part
    assert second
    assert sorted(made) == sorted([len(first), len(second)])
    assert len(first + second) == len(set(first + second)) == 60  # no event claimed twice
    ids = [seen.headers["licensegate-event-id"] for seen in receiver.requests]
    assert sorted(ids) == sorted(first + second)  # each sent once
    assert await shop.state() == ["delivered"] * 60


async def test_expiring_soon_and_expired_once(shop: Shop, services: Services, clock: MovableClock) -> None:
    await shop.seller.ok("adduser", user="finn", sub="default", expiry=2)
    db = services.db
    assert await expiryevents.scan(db, clock.now(), days=3) == 1
    assert await expiryevents.scan(db, clock.now(), days=3) == 0
    clock.advance(2 * 86400 + 1)
    assert await expiryevents.scan(db, clock.now(), days=3) == 1
    assert await expiryevents.scan(db, clock.now(), days=3) == 0
    rows = await db.fetch_all("SELECT name FROM events ORDER BY id")
    assert [r["name"] for r in rows] == ["user.created", "subscription.expiring_soon", "subscription.expired"]


async def test_the_expiry_scan_reads_only_applications_an_endpoint_wants_it_for(
    shop: Shop, services: Services, client: Any
) -> None:
    """A user of an application without an event endpoint runs out too: the scan does not look
    at that application's grants (at a million of them it had walked them all every minute)."""
    quiet = await create_application(
        services.db, services.secrets, owner="q", name="quiet", now=services.clock.now()
    )
    await seller_of(quiet, client).ok("adduser", user="quinn", sub="default", expiry=2)
    await shop.seller.ok("adduser", user="finn", sub="default", expiry=2)
    name = "subscription.expiring_soon"
    assert await store_events.apps_wanting(services.db, name) == [shop.seller.app_id]
    assert await expiryevents.scan(services.db, services.clock.now(), days=3) == 1
    rows = await services.db.fetch_all("SELECT app_id FROM events WHERE name = ?", name)
    assert [row["app_id"] for row in rows] == [shop.seller.app_id]


async def test_one_worker_of_two_looks_for_expiries_each_minute(
    shop: Shop, services: Services, settings: Settings, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two nodes' delivery loops, going round until each has waited five times: one of them
    scans (store/turns.py); a minute on by the test clock, one of them scans again."""
    await shop.seller.ok("adduser", user="finn", sub="default", expiry=2)
    other = await Services.open(settings, clock=clock)
    scans: list[int] = []
    scan = expiryevents.scan

    async def counted(db: Any, now: int, **how: Any) -> int:
        scans.append(now)
        return await scan(db, now, **how)

    monkeypatch.setattr(expiryevents, "scan", counted)
    waits = {id(services): 0, id(other): 0}
    waited = asyncio.Condition()

    def waiting(node: Services) -> Any:
        async def sleep(_seconds: float) -> None:
            async with waited:
                waits[id(node)] += 1
                waited.notify_all()
            await asyncio.sleep(0.005)

        return sleep

    async def both_wait(times: int) -> None:
        goal = {node: count + times for node, count in waits.items()}
        async with waited:
            await waited.wait_for(lambda: all(waits[node] >= goal[node] for node in waits))

    loops = [
        asyncio.create_task(eventworker.keep_delivering(node, sleep=waiting(node)))
        for node in (services, other)
    ]
    try:
        await asyncio.wait_for(both_wait(5), timeout=120)
        assert len(scans) == 1
        clock.advance(eventworker.SCAN_EVERY)
        await asyncio.wait_for(both_wait(5), timeout=120)
        assert len(scans) == 2
    finally:
        for loop in loops:
            loop.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        await other.close()
    rows = await services.db.fetch_all("SELECT name FROM events WHERE name LIKE 'subscription.%'")
    assert [row["name"] for row in rows] == ["subscription.expiring_soon"]


async def test_metrics_show_the_queue(shop: Shop, client: Any, clock: MovableClock) -> None:
    await shop.seller.ok("adduser", user="gus", sub="default", expiry=30)
    clock.advance(42)
    text = (await client.get("/metrics")).text
    assert "licensegate_event_queue_depth 1" in text
    assert "licensegate_event_oldest_pending_seconds 42" in text
    await shop.deliver()
    text = (await client.get("/metrics")).text
    # Each worker reads the counts at most every GAUGES_KEEP seconds (they scan the delivery log).
    assert "licensegate_event_queue_depth 1" in text
    clock.advance(eventdelivery.GAUGES_KEEP - 1)
    assert "licensegate_event_queue_depth 1" in (await client.get("/metrics")).text
    clock.advance(1)
    text = (await client.get("/metrics")).text
    assert "licensegate_event_queue_depth 0" in text
    assert 'licensegate_event_attempts{outcome="delivered"} 1' in text
    assert 'licensegate_event_deliveries{state="delivered"} 1' in text


async def test_disabling_stops_what_was_queued(shop: Shop, receiver: LocalServer) -> None:
    await shop.seller.ok("adduser", user="hal", sub="default", expiry=30)
    await shop.seller.ok("editeventwebhook", id=shop.endpoint, enabled=0)
    assert await shop.deliver() == 1
    assert receiver.requests == []
    assert await shop.state() == ["failed"]
    log = await shop.seller.ok("fetcheventdeliveries")
    assert log["attempts"][0]["error"] == "The endpoint is disabled."
