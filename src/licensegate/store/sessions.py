"""SQL for the seller's view of client sessions: listing, counting and ending them. (The client
API creates and validates sessions through `store.client_sessions`.)"""

from __future__ import annotations

from licensegate.store.database import Executor, Row

_LIVE = "app_id = ? AND expires_at > ?"


async def list_page(
    db: Executor, app_id: int, *, now: int, include_expired: bool, limit: int, offset: int
) -> list[Row]:
    """Newest first."""
    columns = "SELECT id, credential, created_at, expires_at, validated, ip FROM sessions"
    if include_expired:
        return await db.fetch_all(
            f"{columns} WHERE app_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            app_id,
            limit,
            offset,
        )
    return await db.fetch_all(
        f"{columns} WHERE {_LIVE} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
        app_id,
        now,
        limit,
        offset,
    )


async def count(db: Executor, app_id: int, *, now: int, include_expired: bool) -> int:
    total: int
    if include_expired:
        total = await db.fetch_value("SELECT COUNT(*) FROM sessions WHERE app_id = ?", app_id)
    else:
        total = await db.fetch_value(f"SELECT COUNT(*) FROM sessions WHERE {_LIVE}", app_id, now)
    return total


async def count_live(db: Executor, app_id: int, now: int) -> tuple[int, int]:
    """(unexpired sessions, unexpired validated sessions)."""
    row = await db.fetch_one(
        f"SELECT COUNT(*) AS total, COALESCE(SUM(validated), 0) AS validated FROM sessions WHERE {_LIVE}",
        app_id,
        now,
    )
    assert row is not None
    return int(row["total"]), int(row["validated"])


async def delete(db: Executor, app_id: int, session_id: str) -> Row | None:
    """End one session; returns what it was, or None when the application has no such session."""
    # fetch_all runs a RETURNING statement to completion on SQLite.
    rows = await db.fetch_all(
        "DELETE FROM sessions WHERE id = ? AND app_id = ? RETURNING credential, ip, validated",
        session_id,
        app_id,
    )
    return rows[0] if rows else None


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM sessions WHERE app_id = ?", app_id)


async def delete_by_ip(db: Executor, app_id: int, ip: str) -> int:
    return await db.execute("DELETE FROM sessions WHERE app_id = ? AND ip = ?", app_id, ip)
