"""SQL of event webhooks: the endpoints, the event outbox, its delivery queue and the delivery log.

An event and its deliveries are written by the transaction of the change they report (`record`);
workers claim due deliveries in one statement (`claim`: on PostgreSQL with `FOR UPDATE SKIP
LOCKED`, so several nodes share the queue and each claim belongs to one of them; on SQLite one
statement under the write lock), which moves `due_at` past a lease: a node that dies mid-attempt
leaves the delivery due again once the lease runs out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict, cast

from licensegate.store.database import Executor

ALL = "*"
PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"

_ENDPOINT_COLUMNS = (
    "id, app_id, url, url_shown, events, format, enabled, include_keys, failures, alerted_at, "
    "disabled_reason, created_at, updated_at"
)


class EndpointRow(TypedDict):
    id: int
    app_id: int
    url: str  # sealed
    url_shown: str
    events: str
    format: str
    enabled: int
    include_keys: int
    failures: int
    alerted_at: int | None
    disabled_reason: str | None
    created_at: int
    updated_at: int


class DueRow(TypedDict):
    """A claimed delivery with what sending it needs."""

    id: int
    app_id: int
    attempts: int
    started_at: int
    event_id: str
    name: str
    payload: str
    license_key: str | None
    created_at: int
    endpoint_id: int
    url: str  # sealed
    url_shown: str
    format: str
    include_keys: int
    enabled: int
    failures: int
    alerted_at: int | None
    app_name: str
    signing_key: str | None
    account_id: int


class AttemptRow(TypedDict):
    id: int
    delivery_id: int
    event_id: str
    name: str
    endpoint_id: int
    status: int | None
    duration_ms: int
    outcome: str
    excerpt: str | None
    error: str | None
    created_at: int


class EventRow(TypedDict):
    id: int
    event_id: str
    name: str
    payload: str
    created_at: int
    pending: int  # its deliveries still pending
    failed: int  # and those that failed


def _wants(opt_in: bool) -> str:
    """The endpoints of an application that want an event (`?` = ",name,"). An opt-in event
    (logins: many a second) goes only to endpoints that name it, never to "all"."""
    match = "events LIKE ?" if opt_in else f"(events LIKE '{ALL}%' OR events LIKE ?)"
    return f"app_id = ? AND enabled = 1 AND {match}"


def _pattern(name: str) -> str:
    return f"%,{name},%"


async def record(
    tx: Executor,
    *,
    app_id: int,
    event_id: str,
    name: str,
    payload: str,
    license_key: str | None,
    now: int,
    opt_in: bool,
) -> bool:
    """Write the event and one pending delivery per endpoint that wants it, in the caller's
    transaction; nothing at all when no endpoint wants it. True when it was written."""
    row_id = await tx.fetch_value(
        "INSERT INTO events (app_id, event_id, name, payload, license_key, created_at) "
        "SELECT CAST(? AS BIGINT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), "
        "CAST(? AS BIGINT) "
        f"WHERE EXISTS (SELECT 1 FROM event_endpoints WHERE {_wants(opt_in)}) RETURNING id",
        app_id,
        event_id,
        name,
        payload,
        license_key,
        now,
        app_id,
        _pattern(name),
    )
    if row_id is None:
        return False
    await tx.execute(
        "INSERT INTO event_deliveries (app_id, event_id, endpoint_id, state, attempts, due_at, started_at) "
        f"SELECT app_id, CAST(? AS BIGINT), id, '{PENDING}', 0, CAST(? AS BIGINT), CAST(? AS BIGINT) "
        f"FROM event_endpoints WHERE {_wants(opt_in)}",
        row_id,
        now,
        now,
        app_id,
        _pattern(name),
    )
    return True


def wanting(app_id: str, names: Sequence[tuple[str, bool]]) -> str:
    """SQL: whether an enabled endpoint of the application `app_id` (an SQL expression) wants any
    of the events (name, opt-in). The names are the catalogue's (never input), written into the
    text, so a statement that embeds this is the same text every time (prepared once)."""
    assert all(name.replace(".", "").replace("_", "").isalnum() for name, _opt_in in names)
    matches = " OR ".join(
        f"events LIKE '{_pattern(name)}'"
        if opt_in
        else f"events LIKE '{ALL}%' OR events LIKE '{_pattern(name)}'"
        for name, opt_in in names
    )
    return f"EXISTS (SELECT 1 FROM event_endpoints WHERE app_id = {app_id} AND enabled = 1 AND ({matches}))"


async def wanted(db: Executor, app_id: int, names: Sequence[tuple[str, bool]]) -> bool:
    """Whether an enabled endpoint wants any of the events (name, opt-in): one statement."""
    return bool(await db.fetch_value(f"SELECT {wanting('?', names)}", app_id))


async def enabled_event_lists(db: Executor, app_id: int) -> list[str]:
    """The stored event lists of an application's enabled endpoints."""
    rows = await db.fetch_all("SELECT events FROM event_endpoints WHERE app_id = ? AND enabled = 1", app_id)
    return [row["events"] for row in rows]


# --- endpoints ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EndpointValues:
    url: str  # sealed
    url_shown: str
    events: str
    format: str
    enabled: bool
    include_keys: bool

    def row(self) -> tuple[object, ...]:
        return (self.url, self.url_shown, self.events, self.format, int(self.enabled), int(self.include_keys))


async def insert_endpoint(db: Executor, app_id: int, values: EndpointValues, now: int) -> int:
    row_id: int = await db.fetch_value(
        "INSERT INTO event_endpoints (url, url_shown, events, format, enabled, include_keys, app_id, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        *values.row(),
        app_id,
        now,
        now,
    )
    return row_id


async def update_endpoint(
    db: Executor, app_id: int, endpoint_id: int, values: EndpointValues, now: int
) -> int:
    """Enabling again clears the failure count and why it was disabled."""
    enabled = int(values.enabled)
    return await db.execute(
        "UPDATE event_endpoints SET url = ?, url_shown = ?, events = ?, format = ?, enabled = ?, "
        "include_keys = ?, updated_at = ?, "
        "failures = CASE WHEN ? = 1 AND enabled = 0 THEN 0 ELSE failures END, "
        "alerted_at = CASE WHEN ? = 1 AND enabled = 0 THEN NULL ELSE alerted_at END, "
        "disabled_reason = CASE WHEN ? = 1 THEN NULL ELSE disabled_reason END "
        "WHERE app_id = ? AND id = ?",
        *values.row(),
        now,
        enabled,
        enabled,
        enabled,
        app_id,
        endpoint_id,
    )


async def find_endpoint(db: Executor, app_id: int, endpoint_id: int) -> EndpointRow | None:
    row = await db.fetch_one(
        f"SELECT {_ENDPOINT_COLUMNS} FROM event_endpoints WHERE app_id = ? AND id = ?", app_id, endpoint_id
    )
    return cast("EndpointRow | None", row)


async def list_endpoints(db: Executor, app_id: int) -> list[EndpointRow]:
    rows = await db.fetch_all(
        f"SELECT {_ENDPOINT_COLUMNS} FROM event_endpoints WHERE app_id = ? ORDER BY id", app_id
    )
    return cast("list[EndpointRow]", rows)


async def delete_endpoint(db: Executor, app_id: int, endpoint_id: int) -> int:
    return await db.execute("DELETE FROM event_endpoints WHERE app_id = ? AND id = ?", app_id, endpoint_id)


async def count_endpoints(db: Executor, app_id: int) -> int:
    count: int = await db.fetch_value("SELECT COUNT(*) FROM event_endpoints WHERE app_id = ?", app_id)
    return count


# --- the queue ---------------------------------------------------------------------------------


async def claim(db: Executor, *, now: int, lease_until: int, limit: int) -> list[DueRow]:
    """Take up to `limit` due deliveries for this node: their next attempt moves to `lease_until`
    (so no other node takes them meanwhile) and their attempt count goes up by one.

    Asked first with a read, which needs no writer's lock: every worker polls every second or
    so, and nearly always nothing is due; on SQLite an UPDATE that changes nothing still takes
    the writers' file lock and a transaction, in turn with the requests' writes."""
    due = await db.fetch_value(
        f"SELECT 1 FROM event_deliveries WHERE state = '{PENDING}' AND due_at <= ? LIMIT 1", now
    )
    if due is None:
        return []
    skip = " FOR UPDATE SKIP LOCKED" if db.dialect == "postgresql" else ""
    ids = await db.fetch_all(
        "UPDATE event_deliveries SET due_at = ?, attempts = attempts + 1 WHERE id IN ("
        f"SELECT id FROM event_deliveries WHERE state = '{PENDING}' AND due_at <= ? "
        f"ORDER BY due_at, id LIMIT ?{skip}) RETURNING id",
        lease_until,
        now,
        limit,
    )
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    rows = await db.fetch_all(
        "SELECT d.id, d.app_id, d.attempts, d.started_at, e.event_id, e.name, e.payload, e.license_key, "
        "e.created_at, p.id AS endpoint_id, p.url, p.url_shown, p.format, p.include_keys, p.enabled, "
        "p.failures, p.alerted_at, a.name AS app_name, a.signing_key, a.account_id "
        "FROM event_deliveries d JOIN events e ON e.id = d.event_id "
        "JOIN event_endpoints p ON p.id = d.endpoint_id JOIN apps a ON a.id = d.app_id "
        f"WHERE d.id IN ({marks}) ORDER BY d.id",
        *[row["id"] for row in ids],
    )
    return cast("list[DueRow]", rows)


async def finish(db: Executor, delivery_id: int, *, state: str, status: int | None, now: int) -> int:
    return await db.execute(
        f"UPDATE event_deliveries SET state = ?, last_status = ?, finished_at = ? "
        f"WHERE id = ? AND state = '{PENDING}'",
        state,
        status,
        now,
        delivery_id,
    )


async def retry_at(db: Executor, delivery_id: int, *, status: int | None, due_at: int) -> int:
    return await db.execute(
        f"UPDATE event_deliveries SET due_at = ?, last_status = ? WHERE id = ? AND state = '{PENDING}'",
        due_at,
        status,
        delivery_id,
    )


async def add_attempt(
    db: Executor,
    *,
    app_id: int,
    delivery_id: int,
    status: int | None,
    duration_ms: int,
    outcome: str,
    excerpt: str | None,
    error: str | None,
    now: int,
) -> None:
    await db.execute(
        "INSERT INTO event_attempts (app_id, delivery_id, status, duration_ms, outcome, excerpt, error, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        app_id,
        delivery_id,
        status,
        duration_ms,
        outcome,
        excerpt,
        error,
        now,
    )


async def endpoint_succeeded(db: Executor, endpoint_id: int) -> None:
    await db.execute(
        "UPDATE event_endpoints SET failures = 0, alerted_at = NULL WHERE id = ? AND failures > 0",
        endpoint_id,
    )


async def endpoint_failed(db: Executor, endpoint_id: int) -> int:
    """One more consecutive failure; returns the count."""
    count = await db.fetch_value(
        "UPDATE event_endpoints SET failures = failures + 1 WHERE id = ? RETURNING failures", endpoint_id
    )
    return int(count or 0)


async def mark_alerted(db: Executor, endpoint_id: int, now: int) -> bool:
    """True for the one caller that should send the alert (the first to mark it)."""
    return (
        await db.execute(
            "UPDATE event_endpoints SET alerted_at = ? WHERE id = ? AND alerted_at IS NULL", now, endpoint_id
        )
        == 1
    )


async def disable_endpoint(db: Executor, endpoint_id: int, reason: str, now: int) -> None:
    """Stop delivering to it: disabled, and what was still pending for it failed."""
    await db.execute(
        "UPDATE event_endpoints SET enabled = 0, disabled_reason = ?, updated_at = ? WHERE id = ?",
        reason,
        now,
        endpoint_id,
    )
    await db.execute(
        f"UPDATE event_deliveries SET state = '{FAILED}', finished_at = ? "
        f"WHERE endpoint_id = ? AND state = '{PENDING}'",
        now,
        endpoint_id,
    )


class AppRow(TypedDict):
    name: str
    signing_key: str | None
    account_id: int


async def app_of(db: Executor, app_id: int) -> AppRow:
    row = await db.fetch_one("SELECT name, signing_key, account_id FROM apps WHERE id = ?", app_id)
    assert row is not None  # the caller holds the application
    return cast("AppRow", row)


async def owner_email(db: Executor, account_id: int) -> str | None:
    email: str | None = await db.fetch_value("SELECT email FROM accounts WHERE id = ?", account_id)
    return email


# --- redelivery --------------------------------------------------------------------------------


async def redeliver_event(db: Executor, app_id: int, event_id: str, now: int) -> int:
    """Queue every delivery of one event again (to enabled endpoints), whatever its state."""
    return await db.execute(
        f"UPDATE event_deliveries SET state = '{PENDING}', due_at = ?, started_at = ?, finished_at = NULL "
        "WHERE app_id = ? AND event_id = (SELECT id FROM events WHERE app_id = ? AND event_id = ?) "
        "AND endpoint_id IN (SELECT id FROM event_endpoints WHERE app_id = ? AND enabled = 1)",
        now,
        now,
        app_id,
        app_id,
        event_id,
        app_id,
    )


async def redeliver_failed(db: Executor, app_id: int, since: int, now: int) -> int:
    """Queue again every failed delivery of events made since `since` (to enabled endpoints)."""
    return await db.execute(
        f"UPDATE event_deliveries SET state = '{PENDING}', due_at = ?, started_at = ?, finished_at = NULL "
        f"WHERE app_id = ? AND state = '{FAILED}' "
        "AND event_id IN (SELECT id FROM events WHERE app_id = ? AND created_at >= ?) "
        "AND endpoint_id IN (SELECT id FROM event_endpoints WHERE app_id = ? AND enabled = 1)",
        now,
        now,
        app_id,
        app_id,
        since,
        app_id,
    )


# --- reading and pruning -------------------------------------------------------------------------


async def attempts_page(db: Executor, app_id: int, *, limit: int) -> list[AttemptRow]:
    rows = await db.fetch_all(
        "SELECT t.id, t.delivery_id, e.event_id, e.name, d.endpoint_id, t.status, t.duration_ms, t.outcome, "
        "t.excerpt, t.error, t.created_at FROM event_attempts t "
        "JOIN event_deliveries d ON d.id = t.delivery_id JOIN events e ON e.id = d.event_id "
        "WHERE t.app_id = ? ORDER BY t.id DESC LIMIT ?",
        app_id,
        limit,
    )
    return cast("list[AttemptRow]", rows)


async def events_page(db: Executor, app_id: int, *, limit: int) -> list[EventRow]:
    rows = await db.fetch_all(
        "SELECT e.id, e.event_id, e.name, e.payload, e.created_at, "
        f"(SELECT COUNT(*) FROM event_deliveries d WHERE d.event_id = e.id AND d.state = '{PENDING}') "
        "AS pending, "
        f"(SELECT COUNT(*) FROM event_deliveries d WHERE d.event_id = e.id AND d.state = '{FAILED}') "
        "AS failed FROM events e WHERE e.app_id = ? ORDER BY e.id DESC LIMIT ?",
        app_id,
        limit,
    )
    return cast("list[EventRow]", rows)


async def states(db: Executor) -> dict[str, int]:
    """Deliveries by state, over every application (the metrics)."""
    rows = await db.fetch_all("SELECT state, COUNT(*) AS n FROM event_deliveries GROUP BY state")
    return {row["state"]: int(row["n"]) for row in rows}


async def outcomes(db: Executor) -> dict[str, int]:
    rows = await db.fetch_all("SELECT outcome, COUNT(*) AS n FROM event_attempts GROUP BY outcome")
    return {row["outcome"]: int(row["n"]) for row in rows}


async def oldest_pending(db: Executor) -> int | None:
    """When the oldest event still waiting for a delivery was made."""
    value = await db.fetch_value(
        "SELECT MIN(e.created_at) FROM event_deliveries d JOIN events e ON e.id = d.event_id "
        f"WHERE d.state = '{PENDING}'"
    )
    return None if value is None else int(value)


async def prune(db: Executor, before: int, batch: int) -> int:
    """Delete one batch of attempts, finished deliveries and events older than `before`; an event
    goes once it has no delivery left pending. Returns how many rows went."""
    gone = await db.execute(
        "DELETE FROM event_attempts WHERE id IN "
        "(SELECT id FROM event_attempts WHERE created_at < ? ORDER BY id LIMIT ?)",
        before,
        batch,
    )
    gone += await db.execute(
        "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < ? "
        "AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = events.id "
        f"AND d.state = '{PENDING}') "
        "ORDER BY id LIMIT ?)",
        before,
        batch,
    )
    return gone


# --- expiring and expired grants -----------------------------------------------------------------


class ExpiryRow(TypedDict):
    grant_id: int
    app_id: int
    expires_at: int
    user_id: int
    username: str
    created_by: str
    subscription: str


async def apps_wanting(db: Executor, name: str) -> list[int]:
    """The applications with an enabled endpoint that wants event `name`."""
    rows = await db.fetch_all(
        "SELECT DISTINCT app_id FROM event_endpoints WHERE enabled = 1 "
        f"AND (events LIKE '{ALL}%' OR events LIKE ?) ORDER BY app_id",
        _pattern(name),
    )
    return [int(row["app_id"]) for row in rows]


async def expiries_to_notice(
    db: Executor, *, app_id: int, kind: str, before: int, after: int, limit: int
) -> list[ExpiryRow]:
    """Running grants of application `app_id` whose expiry falls in [after, before), not yet
    noticed as `kind` for that expiry. Read through the application's subscriptions'
    (subscription_id, expires_at) index, so the grants of other applications are never walked:
    asked of every application at once, SQLite walked every grant in the window of all of them
    and dropped those of applications without an endpoint last (0.8 s in each worker every
    minute at 1,000,000 users, none of whom any endpoint wanted)."""
    rows = await db.fetch_all(
        "SELECT g.id AS grant_id, s.app_id, g.expires_at, u.id AS user_id, u.username, u.created_by, "
        "s.name AS subscription FROM subscriptions s "
        "JOIN user_subscriptions g ON g.subscription_id = s.id JOIN users u ON u.id = g.user_id "
        "WHERE s.app_id = ? AND g.expires_at < ? AND g.expires_at >= ? AND g.paused_at IS NULL "
        "AND s.paused_at IS NULL AND NOT EXISTS (SELECT 1 FROM event_notices n WHERE n.grant_id = g.id "
        "AND n.kind = ? AND n.expires_at = g.expires_at) ORDER BY g.expires_at, g.id LIMIT ?",
        app_id,
        before,
        after,
        kind,
        limit,
    )
    return cast("list[ExpiryRow]", rows)


async def notice(tx: Executor, grant_id: int, kind: str, expires_at: int) -> bool:
    """Note that this expiry was reported; False when another node did it first."""
    return (
        await tx.execute(
            "INSERT INTO event_notices (grant_id, kind, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            grant_id,
            kind,
            expires_at,
        )
        == 1
    )
