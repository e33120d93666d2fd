"""Turns of periodic jobs (store/turns.py): of all the workers and nodes on one database, one
runs a job per interval, dated from the end of its last run; on SQLite and PostgreSQL, with
handles of their own as separate workers have."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.store import turns
from licensegate.store.database import Database, open_database

pytestmark = pytest.mark.anyio

EVERY = 300
NOW = 1_000_000


async def test_one_turn_per_interval_dated_from_the_end_of_the_last_run(db: Database) -> None:
    assert await turns.take(db, "sweep", NOW, EVERY)  # the first ask: due at once
    assert not await turns.take(db, "sweep", NOW, EVERY)
    assert not await turns.take(db, "sweep", NOW + EVERY - 1, EVERY)  # the run goes on
    await turns.done(db, "sweep", NOW + 60)  # it ended a minute after it began
    assert not await turns.take(db, "sweep", NOW + EVERY, EVERY)
    assert await turns.take(db, "sweep", NOW + 60 + EVERY, EVERY)
    assert not await turns.take(db, "sweep", NOW + 60 + EVERY, EVERY)


async def test_jobs_take_turns_of_their_own(db: Database) -> None:
    assert await turns.take(db, "sweep", NOW, EVERY)
    assert await turns.take(db, "other", NOW, EVERY)
    assert not await turns.take(db, "other", NOW + 1, EVERY)


async def test_a_turn_dated_ahead_of_the_clock_is_taken(db: Database) -> None:
    """A worker whose clock ran an hour fast took the turn; once that clock is set right, the
    turn is not left waiting an hour."""
    assert await turns.take(db, "sweep", NOW + 3600, EVERY)
    assert await turns.take(db, "sweep", NOW, EVERY)
    assert not await turns.take(db, "sweep", NOW + 1, EVERY)


async def test_workers_asking_at_once_get_one_turn_between_them(db: Database, db_url: str) -> None:
    """Four handles, as four workers hold, ask together at each of ten intervals: one of them
    gets each turn."""
    handles = [db, *[await open_database(db_url, pool_size=2) for _ in range(3)]]
    try:
        for interval in range(10):
            now = NOW + interval * EVERY
            taken = await asyncio.gather(*(turns.take(handle, "sweep", now, EVERY) for handle in handles))
            assert sorted(taken) == [False, False, False, True]
    finally:
        for handle in handles[1:]:
            await handle.close()
