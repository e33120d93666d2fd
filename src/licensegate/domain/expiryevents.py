"""`subscription.expiring_soon` and `subscription.expired`: found by a background scan (no change
happens when time runs out), each sent once per grant and expiry. A grant extended later runs
out at another time, so it is noticed again. Only applications with an endpoint that wants the
event are looked at."""

from __future__ import annotations

from licensegate.domain import events
from licensegate.store import events as store
from licensegate.store.database import Database

BATCH = 500
EXPIRED_LOOKBACK = 2 * 86400  # an expiry older than this when first seen is not reported


async def scan(db: Database, now: int, *, days: int, batches: int = 20) -> int:
    """Report what is due; returns how many events were written. The reads run apart from the
    worker's connection (`Database.reading_apart`), application by application."""
    written = 0
    async with db.reading_apart() as reader:
        for kind, name, before, after in (
            ("expiring_soon", "subscription.expiring_soon", now + days * 86400, now + 1),
            ("expired", "subscription.expired", now + 1, now - EXPIRED_LOOKBACK),
        ):
            for app_id in await store.apps_wanting(reader, name):
                for _batch in range(batches):
                    rows = await store.expiries_to_notice(
                        reader, app_id=app_id, kind=kind, before=before, after=after, limit=BATCH
                    )
                    written += await _notice(db, name, kind, rows, now)
                    if len(rows) < BATCH:
                        break
    return written


async def _notice(db: Database, name: str, kind: str, rows: list[store.ExpiryRow], now: int) -> int:
    """Write the event of each expiry not noticed meanwhile by another worker or node."""
    written = 0
    for row in rows:
        async with db.transaction() as tx:
            if await store.notice(tx, row["grant_id"], kind, row["expires_at"]):
                written += await events.record(
                    tx,
                    row["app_id"],
                    name,
                    now,
                    {
                        "user": events.user_ref(row["user_id"], row["username"], row["created_by"]),
                        "subscription": row["subscription"],
                        "expires_at": row["expires_at"],
                    },
                )
    return written
