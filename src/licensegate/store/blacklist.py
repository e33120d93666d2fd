"""SQL for the HWID and IP blacklist."""

from __future__ import annotations

from collections.abc import Iterable

from licensegate.store.database import Executor


async def add(db: Executor, app_id: int, kind: str, value: str, reason: str | None, now: int) -> int:
    return await db.execute(
        "INSERT INTO blacklist (app_id, kind, value, reason, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (app_id, kind, value) DO NOTHING",
        app_id,
        kind,
        value,
        reason,
        now,
    )


async def remove(db: Executor, app_id: int, kind: str, values: Iterable[str]) -> int:
    removed = 0
    for value in values:
        removed += await db.execute(
            "DELETE FROM blacklist WHERE app_id = ? AND kind = ? AND value = ?", app_id, kind, value
        )
    return removed
