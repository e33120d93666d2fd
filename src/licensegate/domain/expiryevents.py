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
    """Report what is due; returns how many events were written."""
    written = 0
    for kind, name, before, after in (
        ("expiring_soon", "subscription.expiring_soon", now + days * 86400, now + 1),
        ("expired", "subscription.expired", now + 1, now - EXPIRED_LOOKBACK),
    ):
        for _batch in range(batches):
            rows = await store.expiries_to_notice(
                db, kind=kind, name=name, before=before, after=after, limit=BATCH
            )
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
            if len(rows) < BATCH:
                break
    return written
