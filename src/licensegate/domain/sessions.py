"""Client sessions as the application owner sees them: list, count and end them. Sessions are
created and validated by the client API; an unexpired session with `validated` 1 is a user
online."""

from __future__ import annotations

from typing import Any

from licensegate.domain.blacklists import parse_ip
from licensegate.domain.errors import NotFound
from licensegate.store import sessions as store
from licensegate.store.database import Executor


async def list_page(
    db: Executor, app_id: int, *, now: int, include_expired: bool, limit: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    """One page of sessions, newest first, and the total number (unexpired only, unless
    `include_expired`)."""
    rows = await store.list_page(
        db, app_id, now=now, include_expired=include_expired, limit=limit, offset=offset
    )
    sessions = [
        {
            "id": row["id"],
            "credential": row["credential"],
            "created": row["created_at"],
            "expiry": row["expires_at"],
            "validated": 1 if row["validated"] else 0,
            "ip": row["ip"],
        }
        for row in rows
    ]
    return sessions, await store.count(db, app_id, now=now, include_expired=include_expired)


async def count_live(db: Executor, app_id: int, now: int) -> tuple[int, int]:
    """(unexpired sessions, of which validated: the users online)."""
    return await store.count_live(db, app_id, now)


async def kill(db: Executor, app_id: int, session_id: str) -> dict[str, Any]:
    """End one session; returns what it was (credential, ip, validated)."""
    row = await store.delete(db, app_id, session_id)
    if row is None:
        raise NotFound("No session with this id exists for the application.", "session_not_found")
    return {"credential": row["credential"], "ip": row["ip"], "validated": 1 if row["validated"] else 0}


async def kill_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)


async def kill_by_ip(db: Executor, app_id: int, ip: str) -> tuple[str, int]:
    """End every session from this address (compared in canonical form); returns the canonical
    address and how many sessions ended."""
    canonical = parse_ip(ip)
    return canonical, await store.delete_by_ip(db, app_id, canonical)
