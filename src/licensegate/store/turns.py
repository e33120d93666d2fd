"""Turns of periodic jobs that look at a whole table: one worker of one node runs each per
interval, whichever asks first once the interval has passed (table `periodic_turns`).

A turn is one statement (an insert, or an update only when the turn is due), so two workers
(or nodes) asking at once cannot both get it, on SQLite or PostgreSQL. It is dated when taken
and again when the run ends, so a run longer than the interval is not joined by a second one; a
run that dies leaves its turn to be taken again an interval after it began. A turn dated more
than an interval ahead (a clock set back) is taken as if it were due."""

from __future__ import annotations

import math

from licensegate.store.database import Executor


async def take(db: Executor, name: str, now: int, every: float) -> bool:
    """Whether the caller runs job `name` now: True for one caller per `every` seconds (the
    first to ask after the last run ended that long ago)."""
    due_by, ahead = math.floor(now - every), math.ceil(now + every)  # whole seconds, as stored
    # The first ask makes the row; a later one dates it only when the turn is due.
    taken = await db.execute(
        "INSERT INTO periodic_turns (name, taken_at) VALUES (?, ?) ON CONFLICT (name) DO UPDATE "
        "SET taken_at = excluded.taken_at "
        "WHERE periodic_turns.taken_at <= ? OR periodic_turns.taken_at > ?",
        name,
        now,
        due_by,
        ahead,
    )
    return taken == 1


async def done(db: Executor, name: str, now: int, reached: int | None = None) -> None:
    """The run of `name` that took its turn ended now: the next is due an interval from now.
    `reached`: how far this run got, in the job's own terms (None: what was noted stays)."""
    await db.execute(
        "UPDATE periodic_turns SET taken_at = ?, reached = COALESCE(?, reached) WHERE name = ?",
        now,
        reached,
        name,
    )


async def reached(db: Executor, name: str) -> int | None:
    """How far the last finished run of `name` got (None: no run has noted it)."""
    value = await db.fetch_value("SELECT reached FROM periodic_turns WHERE name = ?", name)
    return None if value is None else int(value)
