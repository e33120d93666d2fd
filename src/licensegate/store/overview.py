"""What the application's overview reads and the counters it keeps (`daily_counts`).

Every read here is bounded by an index range rather than by the size of a table: per-day
counters by (app_id, day), tamper reports by (app_id, created_at), keys by (app_id, status, id)
and the partial index of banned ones, grants by (subscription_id, expires_at, user_id), online
sessions by (app_id, validated, expires_at).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from licensegate.store.database import Executor, Row

DAY = 86400
# Rows per counter (`slot`): a new user's transaction adds to one of them picked at random, so
# on PostgreSQL concurrent first uses rarely wait for each other's commit on the same row.
# SQLite writes one transaction at a time, so there every count goes to slot 0.
SLOTS = 64

_ADD = (
    "INSERT INTO daily_counts (app_id, day, kind, outcome, count) "
    "SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?) "
    "ON CONFLICT (app_id, day, kind, outcome, slot) DO UPDATE SET count = daily_counts.count + excluded.count"
)


async def add(db: Executor, counts: Iterable[tuple[int, int, str, str, int]]) -> None:
    """Add `(app_id, day, kind, outcome, n)` to the counters (an application deleted meanwhile
    is skipped)."""
    rows: Sequence[Sequence[object]] = [
        (app_id, day, kind, outcome, n, app_id) for app_id, day, kind, outcome, n in counts
    ]
    if rows:
        await db.execute_many(_ADD, rows)


async def bump(db: Executor, app_id: int, now: int, *kinds: str) -> None:
    """One more of each of `kinds` ('user', 'key') today, written with the change it counts (one
    statement however many)."""
    slot = random.randrange(SLOTS) if db.dialect == "postgresql" else 0  # noqa: S311 (not a secret)
    await db.execute(
        "INSERT INTO daily_counts (app_id, day, kind, outcome, count, slot) VALUES "
        + ", ".join("(?, ?, ?, '', 1, ?)" for _ in kinds)
        + " ON CONFLICT (app_id, day, kind, outcome, slot) DO UPDATE SET count = daily_counts.count + 1",
        *(value for kind in kinds for value in (app_id, now // DAY, kind, slot)),
    )


async def counted_today(db: Executor, app_id: int, day: int, kind: str) -> int:
    """The day's count of `kind` (every outcome): one primary-key range."""
    value = await db.fetch_value(
        "SELECT COALESCE(SUM(count), 0) FROM daily_counts WHERE app_id = ? AND day = ? AND kind = ?",
        app_id,
        day,
        kind,
    )
    return int(value)


async def daily(db: Executor, app_id: int, first_day: int, last_day: int) -> list[Row]:
    """The counters of days `first_day`..`last_day`: rows of day, kind, outcome, count."""
    return await db.fetch_all(
        "SELECT day, kind, outcome, SUM(count) AS count FROM daily_counts "
        "WHERE app_id = ? AND day >= ? AND day <= ? GROUP BY day, kind, outcome",
        app_id,
        first_day,
        last_day,
    )


async def tamper_per_day(db: Executor, app_id: int, since: int) -> list[Row]:
    """Tamper reports received since `since`, per UTC day: rows of day, count."""
    return await db.fetch_all(
        "SELECT created_at / 86400 AS day, COUNT(*) AS count FROM tamper_logs "
        "WHERE app_id = ? AND created_at >= ? GROUP BY created_at / 86400",
        app_id,
        since,
    )


async def key_counts(db: Executor, app_id: int) -> tuple[list[Row], list[Row]]:
    """Keys per status, and banned keys per status: two lists of rows of status, count."""
    every = await db.fetch_all(
        "SELECT status, COUNT(*) AS count FROM license_keys WHERE app_id = ? GROUP BY status", app_id
    )
    banned = await db.fetch_all(
        "SELECT status, COUNT(*) AS count FROM license_keys "
        "WHERE app_id = ? AND banned_reason IS NOT NULL GROUP BY status",
        app_id,
    )
    return every, banned


async def user_counts(db: Executor, app_id: int, now: int) -> Row:
    """users: every user; banned; with_time: users holding a grant that has not expired (paused
    ones included); banned_with_time: banned users among them."""
    row = await db.fetch_one(
        "SELECT "
        "(SELECT COUNT(*) FROM users WHERE app_id = ?) AS users, "
        "(SELECT COUNT(*) FROM users WHERE app_id = ? AND banned_reason IS NOT NULL) AS banned, "
        "(SELECT COUNT(DISTINCT g.user_id) FROM subscriptions s "
        "JOIN user_subscriptions g ON g.subscription_id = s.id "
        "WHERE s.app_id = ? AND g.expires_at > ?) AS with_time, "
        "(SELECT COUNT(*) FROM users u WHERE u.app_id = ? AND u.banned_reason IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM user_subscriptions g WHERE g.user_id = u.id AND g.expires_at > ?)) "
        "AS banned_with_time",
        app_id,
        app_id,
        app_id,
        now,
        app_id,
        now,
    )
    assert row is not None
    return row


async def expiries_per_day(db: Executor, app_id: int, since: int, until: int) -> list[Row]:
    """Running grants (not paused) expiring in [since, until), per UTC day: rows of day, count."""
    return await db.fetch_all(
        "SELECT g.expires_at / 86400 AS day, COUNT(*) AS count FROM subscriptions s "
        "JOIN user_subscriptions g ON g.subscription_id = s.id "
        "WHERE s.app_id = ? AND g.expires_at >= ? AND g.expires_at < ? AND g.paused_at IS NULL "
        "GROUP BY g.expires_at / 86400",
        app_id,
        since,
        until,
    )


async def online(db: Executor, app_id: int, now: int, cap: int) -> Row:
    """sessions: the unexpired logged-in sessions, counted up to `cap` + 1; users: the distinct
    users among those counted. Read from the (app_id, validated, expires_at, user_id) index alone,
    and never more than `cap` + 1 of its entries: an application with a million programs running
    is not counted whole every time its overview refreshes."""
    row = await db.fetch_one(
        "SELECT COUNT(DISTINCT user_id) AS users, COUNT(*) AS sessions FROM (SELECT user_id FROM sessions "
        "WHERE app_id = ? AND validated = 1 AND expires_at > ? LIMIT ?) AS live",
        app_id,
        now,
        cap + 1,
    )
    assert row is not None
    return row


async def machines_online(db: Executor, app_id: int, now: int, cap: int) -> int:
    """The distinct HWIDs among the same logged-in sessions `online` counts (at most `cap` + 1
    of them: each is a row read, the HWID not being in the index)."""
    value = await db.fetch_value(
        "SELECT COUNT(DISTINCT hwid) FROM (SELECT hwid FROM sessions "
        "WHERE app_id = ? AND validated = 1 AND expires_at > ? LIMIT ?) AS live",
        app_id,
        now,
        cap + 1,
    )
    return int(value or 0)


# --- snapshots of a large application's counts (overview_snapshots) ---------------------------


async def snapshot(db: Executor, app_id: int) -> Row | None:
    """The application's snapshot: computed_at, size, figures (JSON), viewed_at, claimed_at."""
    return await db.fetch_one(
        "SELECT computed_at, size, figures, viewed_at, claimed_at FROM overview_snapshots WHERE app_id = ?",
        app_id,
    )


async def save_snapshot(db: Executor, app_id: int, computed_at: int, size: int, figures: str) -> None:
    """Keep these figures unless newer ones are there already (an application deleted meanwhile
    is skipped)."""
    await db.execute(
        "INSERT INTO overview_snapshots (app_id, computed_at, size, figures, viewed_at, claimed_at) "
        "SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?) "
        "ON CONFLICT (app_id) DO UPDATE SET computed_at = excluded.computed_at, size = excluded.size, "
        "figures = excluded.figures WHERE overview_snapshots.computed_at <= excluded.computed_at",
        app_id,
        computed_at,
        size,
        figures,
        computed_at,
        computed_at,
        app_id,
    )


async def drop_snapshot(db: Executor, app_id: int) -> None:
    await db.execute("DELETE FROM overview_snapshots WHERE app_id = ?", app_id)


async def mark_viewed(db: Executor, app_id: int, now: int, every: int) -> None:
    """Note that the overview was looked at, at most once every `every` seconds."""
    await db.execute(
        "UPDATE overview_snapshots SET viewed_at = ? WHERE app_id = ? AND viewed_at <= ?",
        now,
        app_id,
        now - every,
    )


async def due(db: Executor, viewed_since: int, older_than: int, limit: int) -> list[int]:
    """Applications viewed since `viewed_since` whose snapshot was computed (and last claimed)
    at or before `older_than`, the oldest first."""
    rows = await db.fetch_all(
        "SELECT app_id FROM overview_snapshots WHERE viewed_at >= ? AND computed_at <= ? "
        "AND claimed_at <= ? ORDER BY computed_at LIMIT ?",
        viewed_since,
        older_than,
        older_than,
        limit,
    )
    return [int(row["app_id"]) for row in rows]


async def claim(db: Executor, app_id: int, now: int, older_than: int) -> bool:
    """Take the refresh of this snapshot, unless another worker took it (or made it) since
    `older_than`."""
    changed = await db.execute(
        "UPDATE overview_snapshots SET claimed_at = ? "
        "WHERE app_id = ? AND computed_at <= ? AND claimed_at <= ?",
        now,
        app_id,
        older_than,
        older_than,
    )
    return changed == 1
