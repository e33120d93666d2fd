"""Heartbeats: an application may require its logged-in sessions to beat every `interval`
seconds; a session silent for interval + grace is ended, which frees its seat (domain.seats).

A login, `check` and `heartbeat` are beats. Ending silent sessions is work off the request path
(`app.end_silent_sessions`, in every worker): one conditional DELETE in batches, safe however
many nodes run it at once.

A heartbeat also answers what changed since the session's last login or heartbeat: the session
row keeps what that answer held (`beat_state`: the entitlement codes and the credit balance),
written in the beat's own statement and only when it changed. A ban or a pause ends the
session; the program's next call is refused `session_not_found` saying why
(`domain.sessions.identify`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field

from licensegate.store import heartbeats as store
from licensegate.store.database import Executor

MAX_SECONDS = 86_400
BATCH = 250  # sessions a statement ends (on SQLite, the event loop waits for each)
ENTITLEMENTS = "entitlements"
CREDITS = "credits"


async def set_policy(db: Executor, app_id: int, interval: int, grace: int) -> None:
    await store.set_policy(db, app_id, interval, grace)


async def policy(db: Executor, app_id: int) -> tuple[int, int]:
    """(interval, grace) in seconds; interval 0: no beats required."""
    return await store.policy(db, app_id)


async def beat(db: Executor, session_id: str, now: int | None, state: str | None = None) -> None:
    """Record a beat at `now` and/or what the answer held (`state`); None: leave it as it is."""
    if now is not None or state is not None:
        await store.beat(db, session_id, now, state)


@dataclass(frozen=True, slots=True)
class Changes:
    """What a heartbeat answers changed since the session's previous login or heartbeat."""

    state: str  # what this answer holds, as the session row keeps it
    changed: list[str] = field(default_factory=list)  # ENTITLEMENTS, CREDITS
    added: list[str] = field(default_factory=list)  # entitlement codes
    removed: list[str] = field(default_factory=list)


def state_of(codes: list[str], balance: int | None) -> str:
    return json.dumps({"e": sorted(codes), "c": balance}, separators=(",", ":"))


def changes(previous: str | None, codes: list[str], balance: int | None) -> Changes:
    """Compare this answer with the previous one (None: nothing to compare with, nothing changed)."""
    state = state_of(codes, balance)
    if previous is None or previous == state:
        return Changes(state)
    before = json.loads(previous)
    held = set(before.get("e") or ())
    added = sorted(set(codes) - held)
    removed = sorted(held - set(codes))
    changed = [ENTITLEMENTS] if added or removed else []
    if before.get("c") != balance:
        changed.append(CREDITS)
    return Changes(state, changed, added, removed)


async def end_silent(db: Executor, now: int) -> int:
    """End the sessions that missed their beats, every one of them (in batches); how many."""
    ended = 0
    while True:
        count = await store.end_silent(db, now, BATCH)
        ended += count
        if count < BATCH:
            return ended
        await asyncio.sleep(0)  # the requests waiting meanwhile go first
