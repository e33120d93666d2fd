"""SQL for heartbeats: an application's beat setting, a session's beat, ending silent sessions."""

from __future__ import annotations

from licensegate.store.database import Executor


async def set_policy(db: Executor, app_id: int, interval: int, grace: int) -> None:
    await db.execute(
        "UPDATE apps SET heartbeat_interval = ?, heartbeat_grace = ? WHERE id = ?", interval, grace, app_id
    )


async def policy(db: Executor, app_id: int) -> tuple[int, int]:
    row = await db.fetch_one("SELECT heartbeat_interval, heartbeat_grace FROM apps WHERE id = ?", app_id)
    return (0, 0) if row is None else (row["heartbeat_interval"], row["heartbeat_grace"])


async def beat(db: Executor, session_id: str, now: int | None, state: str | None) -> None:
    """One UPDATE: the beat's time and/or what its answer held (a column given None is kept)."""
    sets: list[str] = []
    args: list[int | str] = []
    if now is not None:
        sets.append("last_beat_at = ?")
        args.append(now)
    if state is not None:
        sets.append("beat_state = ?")
        args.append(state)
    await db.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", *args, session_id)


async def end_silent(db: Executor, now: int, batch: int) -> int:
    """End up to `batch` logged-in sessions of applications that want beats whose last beat is
    older than interval + grace. One conditional DELETE: several nodes may run it at once, each
    row goes once."""
    # Applications outside (CROSS JOIN keeps SQLite's order), each one's logged-in sessions
    # through (app_id, validated, ...). SQLite had scanned every session of every application,
    # every few seconds in every worker: 133 ms with its event loop held at 1,200,000 sessions.
    return await db.execute(
        "DELETE FROM sessions WHERE id IN (SELECT s.id FROM apps a CROSS JOIN sessions s "
        "WHERE a.heartbeat_interval > 0 AND s.app_id = a.id AND s.validated = 1 "
        "AND COALESCE(s.last_beat_at, s.created_at) < ? - a.heartbeat_interval - a.heartbeat_grace LIMIT ?)",
        now,
        batch,
    )
