"""Delivering events: claim what is due, send each through the guarded outbound client, signed
with the application's Ed25519 key, and note how it went.

At least once: a delivery stays pending until a 2xx answer is noted; a node that dies between
sending and noting leaves it to be claimed again once its lease runs out, so a receiver may see
an event twice, always with the same `Licensegate-Event-Id`. Failures are retried with
exponential backoff and jitter for `event_retry_hours`; a 410 disables the endpoint; after
`event_alert_failures` consecutive failures the application's owner is e-mailed once (until a
delivery succeeds again). The headers and the signed text are specified in `docs/events.md`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from licensegate import ids, outbound
from licensegate.appcache import AppCache
from licensegate.clock import Clock
from licensegate.config import Settings
from licensegate.domain.appkeys import Signers
from licensegate.mailer import Mailer
from licensegate.secretbox import SecretBox
from licensegate.store import events as store
from licensegate.store.database import Database, DatabaseError, Executor

log = logging.getLogger("licensegate.events")

URL_PURPOSE = "event_endpoints.url"
EXCERPT_BYTES = 2048
FIRST_DELAY = 30  # seconds before the first retry; doubled each time
MAX_DELAY = 6 * 3600
LEASE_SLACK = 10  # seconds past the timeout a claim keeps a delivery from other nodes
PRUNE_BATCH = 1000
OUTCOMES = ("delivered", "retry", "failed", "disabled")

H_ID, H_EVENT, H_TIME, H_DIGEST, H_SIGNATURE = (
    "Licensegate-Event-Id",
    "Licensegate-Event",
    "Licensegate-Timestamp",
    "Licensegate-Digest",
    "Licensegate-Signature",
)


@dataclass
class Courier:
    """What delivering needs."""

    settings: Settings
    db: Database
    clock: Clock
    secrets: SecretBox
    signers: Signers
    mailer: Mailer
    wants: AppCache[frozenset[str]]  # the login-path events each application wants (events.login_cache)


def backoff(attempt: int) -> int:
    """Seconds before the retry that follows failed attempt number `attempt` (1, 2, ...): 30 s
    doubled each time up to 6 hours, each spread by ±25 % so that many failures do not come
    back together."""
    base = min(FIRST_DELAY * 2 ** min(attempt - 1, 20), MAX_DELAY)
    return int(base * (0.75 + secrets.randbelow(501) / 1000))


def signed_text(method: str, path: str, timestamp: str, digest: str) -> bytes:
    return f"{method}\n{path}\n{timestamp}\n{digest}".encode()


def digest_of(body: bytes) -> str:
    return "sha-256=" + base64.b64encode(hashlib.sha256(body).digest()).decode()


def target_path(url: str) -> str:
    """What the signature covers of the URL: its path and query string, as the receiver sees it."""
    parsed = outbound.parse_url(url)
    query = parsed.query.decode()
    return (parsed.path or "/") + (f"?{query}" if query else "")


def _summary(name: str, app_name: str, data: dict[str, Any]) -> str:
    parts = []
    for field, value in data.items():
        if field == "version" or value is None:
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items() if v is not None)
        parts.append(f"{field}: {value}")
    return f"{name} in {app_name}" + (" — " + "; ".join(parts) if parts else "")


def body_of(row: store.DueRow) -> bytes:
    """The request body in the endpoint's format."""
    data: dict[str, Any] = orjson.loads(row["payload"])
    if row["include_keys"] and row["license_key"] is not None and isinstance(data.get("key"), dict):
        data["key"] = {**data["key"], "key": row["license_key"]}
    created = datetime.fromtimestamp(row["created_at"], UTC).isoformat().replace("+00:00", "Z")
    if row["format"] == "discord":
        return orjson.dumps(
            {
                "username": "licensegate",
                "embeds": [
                    {
                        "title": row["name"],
                        "description": _summary(row["name"], row["app_name"], data)[:4000],
                        "timestamp": created,
                        "footer": {"text": row["event_id"]},
                    }
                ],
            }
        )
    if row["format"] == "slack":
        return orjson.dumps({"text": _summary(row["name"], row["app_name"], data)[:3000]})
    return orjson.dumps(
        {
            "id": row["event_id"],
            "type": row["name"],
            "created_at": row["created_at"],
            "app": {"id": row["app_id"], "name": row["app_name"]},
            "data": data,
        }
    )


async def headers_for(courier: Courier, row: store.DueRow, url: str, body: bytes) -> dict[str, str]:
    sealed, _secret = await courier.signers.sealed_keys(courier.db, row["app_id"], row["signing_key"], "")
    signer = courier.signers.signer(sealed)
    timestamp = str(courier.clock.now())
    digest = digest_of(body)
    return {
        "content-type": "application/json",
        H_ID: row["event_id"],
        "Idempotency-Key": row["event_id"],
        H_EVENT: row["name"],
        H_TIME: timestamp,
        H_DIGEST: digest,
        H_SIGNATURE: signer.sign(signed_text("POST", target_path(url), timestamp, digest)),
    }


def _excerpt(content: bytes) -> str | None:
    text = content[:EXCERPT_BYTES].decode("utf-8", errors="replace")
    text = "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in text)
    return text or None


@dataclass(frozen=True)
class Sent:
    status: int | None
    duration_ms: int
    excerpt: str | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


async def send(courier: Courier, row: store.DueRow) -> Sent:
    """One request; never raises for what the receiver or the network did."""
    started = time.perf_counter()
    try:
        url = courier.secrets.open(row["url"], URL_PURPOSE)
        body = body_of(row)
        reply = await outbound.request(
            courier.settings,
            "POST",
            url,
            headers=await headers_for(courier, row, url, body),
            body=body,
            max_bytes=courier.settings.outbound_max_bytes,
            timeout=courier.settings.event_timeout,
        )
    except outbound.OutboundError as exc:
        status: int | None = None
        excerpt: str | None = None
        error: str | None = exc.message  # names the host at most, never the URL
    else:
        status, excerpt, error = reply.status, _excerpt(reply.content), None
    return Sent(status, max(0, round((time.perf_counter() - started) * 1000)), excerpt, error)


async def send_test(courier: Courier, endpoint: store.EndpointRow) -> Sent:
    """An `endpoint.test` event sent to one endpoint now, outside the queue."""
    app = await store.app_of(courier.db, endpoint["app_id"])
    now = courier.clock.now()
    row: store.DueRow = {
        "id": 0,
        "app_id": endpoint["app_id"],
        "attempts": 1,
        "started_at": now,
        "event_id": ids.event_id(),
        "name": "endpoint.test",
        "payload": orjson.dumps({"version": 1, "message": "A test event from licensegate."}).decode(),
        "license_key": None,
        "created_at": now,
        "endpoint_id": endpoint["id"],
        "url": endpoint["url"],
        "url_shown": endpoint["url_shown"],
        "format": endpoint["format"],
        "include_keys": endpoint["include_keys"],
        "enabled": endpoint["enabled"],
        "failures": endpoint["failures"],
        "alerted_at": endpoint["alerted_at"],
        "app_name": app["name"],
        "signing_key": app["signing_key"],
        "account_id": app["account_id"],
    }
    return await send(courier, row)


async def deliver_due(courier: Courier, limit: int | None = None) -> int:
    """Claim and make the deliveries due now (at most `limit`, default `event_batch`), all at
    once; returns how many were claimed."""
    now = courier.clock.now()
    settings = courier.settings
    rows = await store.claim(
        courier.db,
        now=now,
        lease_until=now + settings.event_timeout + LEASE_SLACK,
        limit=limit or settings.event_batch,
    )
    for row, result in zip(
        rows,
        await asyncio.gather(*(_deliver_one(courier, row) for row in rows), return_exceptions=True),
        strict=True,
    ):
        if isinstance(result, BaseException):  # the delivery stays claimed until its lease runs out
            log.error("delivering event %s failed: %s", row["event_id"], type(result).__name__)
    return len(rows)


async def _deliver_one(courier: Courier, row: store.DueRow) -> None:
    if not row["enabled"]:  # disabled by its owner after this was queued: not sent
        sent = Sent(None, 0, None, "The endpoint is disabled.")
        async with courier.db.transaction() as tx:
            await store.finish(tx, row["id"], state=store.FAILED, status=None, now=courier.clock.now())
            await _note(tx, row, sent, "failed", courier.clock.now())
        return
    sent = await send(courier, row)
    now = courier.clock.now()
    settings = courier.settings
    alert_to: str | None = None
    async with courier.db.transaction() as tx:
        if sent.ok:
            outcome = "delivered"
            await store.finish(tx, row["id"], state=store.DELIVERED, status=sent.status, now=now)
            await store.endpoint_succeeded(tx, row["endpoint_id"])
        elif sent.status == 410:
            outcome = "disabled"
            await store.finish(tx, row["id"], state=store.FAILED, status=sent.status, now=now)
            await store.disable_endpoint(tx, row["endpoint_id"], "The endpoint answered 410 Gone.", now)
        else:
            delay = backoff(row["attempts"])
            if now + delay - row["started_at"] > settings.event_retry_hours * 3600:
                outcome = "failed"
                await store.finish(tx, row["id"], state=store.FAILED, status=sent.status, now=now)
            else:
                outcome = "retry"
                await store.retry_at(tx, row["id"], status=sent.status, due_at=now + delay)
            failures = await store.endpoint_failed(tx, row["endpoint_id"])
            if failures >= settings.event_alert_failures and await store.mark_alerted(
                tx, row["endpoint_id"], now
            ):
                alert_to = await store.owner_email(tx, row["account_id"])
        await _note(tx, row, sent, outcome, now)
    if outcome == "disabled":  # committed: every worker forgets what the application's endpoints want
        await courier.wants.changed(row["app_id"])
    if alert_to and courier.mailer.configured:
        courier.mailer.send_later(
            alert_to,
            f"Event webhook deliveries of {row['app_name']} are failing",
            f"The last {settings.event_alert_failures} deliveries of events of the application "
            f"'{row['app_name']}' to one of its event webhooks failed (the latest: "
            f"{sent.error or f'HTTP {sent.status}'}).\n\n"
            "Events keep being retried for two days. See the Event webhooks page of the dashboard "
            "for the delivery log, and redeliver failed events once the receiver works again.\n",
            "event webhook failures",
        )


async def _note(tx: Executor, row: store.DueRow, sent: Sent, outcome: str, now: int) -> None:
    await store.add_attempt(
        tx,
        app_id=row["app_id"],
        delivery_id=row["id"],
        status=sent.status,
        duration_ms=sent.duration_ms,
        outcome=outcome,
        excerpt=sent.excerpt,
        error=sent.error,
        now=now,
    )


async def prune(courier: Courier) -> int:
    """Drop the delivery log and events older than `event_log_days` (in batches)."""
    before = courier.clock.now() - courier.settings.event_log_days * 86400
    gone = 0
    while (batch := await store.prune(courier.db, before, PRUNE_BATCH)) > 0:
        gone += batch
    return gone


async def metrics_text(db: Database, now: int) -> str:
    """Prometheus lines, for every node (read from the database): the queue's depth, deliveries
    by state, attempts by outcome (those the log keeps) and the age of the oldest pending event."""
    try:
        states = await store.states(db)
        outcomes = await store.outcomes(db)
        oldest = await store.oldest_pending(db)
    except DatabaseError:
        return ""
    lines = [
        "# HELP licensegate_event_queue_depth Event deliveries waiting to be made.",
        "# TYPE licensegate_event_queue_depth gauge",
        f"licensegate_event_queue_depth {states.get(store.PENDING, 0)}",
        "# HELP licensegate_event_deliveries Event deliveries kept, by state.",
        "# TYPE licensegate_event_deliveries gauge",
        *(
            f'licensegate_event_deliveries{{state="{state}"}} {states.get(state, 0)}'
            for state in (store.PENDING, store.DELIVERED, store.FAILED)
        ),
        "# HELP licensegate_event_attempts Delivery attempts the delivery log keeps, by outcome.",
        "# TYPE licensegate_event_attempts gauge",
        *(
            f'licensegate_event_attempts{{outcome="{outcome}"}} {outcomes.get(outcome, 0)}'
            for outcome in OUTCOMES
        ),
        "# HELP licensegate_event_oldest_pending_seconds Age of the oldest event not yet delivered.",
        "# TYPE licensegate_event_oldest_pending_seconds gauge",
        f"licensegate_event_oldest_pending_seconds {0 if oldest is None else max(0, now - oldest)}",
    ]
    return "\n".join(lines) + "\n"


GAUGES_KEEP = 10  # seconds a worker answers /metrics with the queue's counts it read last


class QueueGauges:
    """The event lines of `/metrics`, read from the database at most once per `GAUGES_KEEP`
    seconds by each worker (concurrent scrapes share one read): they count the delivery log,
    whose delivered and failed rows can number millions, so a scraper asking often (several
    Prometheus servers, a dashboard refreshing every second) must not scan it each time."""

    def __init__(self) -> None:
        self._text = ""
        self._read_at: int | None = None
        self._reading = asyncio.Lock()

    async def text(self, db: Database, now: int) -> str:
        async with self._reading:
            if self._read_at is None or not 0 <= now - self._read_at < GAUGES_KEEP:
                text = await metrics_text(db, now)
                if not text:  # the database did not answer: nothing kept, asked again next time
                    return ""
                self._text, self._read_at = text, now
            return self._text
