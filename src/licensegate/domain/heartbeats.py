"""Heartbeats: an application may require its logged-in sessions to beat every `interval`
seconds; a session silent for interval + grace is ended, which frees its seat (domain.seats).

A login, `check` and `heartbeat` are beats. Ending silent sessions is work off the request path
(`app.end_silent_sessions`, in every worker): one conditional DELETE in batches, safe however
many nodes run it at once.
"""

from __future__ import annotations

from licensegate.store import heartbeats as store
from licensegate.store.database import Executor

MAX_SECONDS = 86_400
BATCH = 1000


async def set_policy(db: Executor, app_id: int, interval: int, grace: int) -> None:
    await store.set_policy(db, app_id, interval, grace)


async def policy(db: Executor, app_id: int) -> tuple[int, int]:
    """(interval, grace) in seconds; interval 0: no beats required."""
    return await store.policy(db, app_id)


async def beat(db: Executor, session_id: str, now: int) -> None:
    await store.beat(db, session_id, now)


async def end_silent(db: Executor, now: int) -> int:
    """End the sessions that missed their beats, every one of them (in batches); how many."""
    ended = 0
    while True:
        count = await store.end_silent(db, now, BATCH)
        ended += count
        if count < BATCH:
            return ended
