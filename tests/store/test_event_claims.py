"""Claiming due event deliveries (store/events.claim): every worker polls for them every second or
so, so a poll that finds nothing due must not need what writers need, on SQLite (the writers'
file lock) or PostgreSQL (a lock that stops writers of the table)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

from licensegate.store import events
from licensegate.store.database import Database, postgres_dsn
from licensegate.store.sqlite import writers_held

pytestmark = pytest.mark.anyio

NOW = 1_000_000
# Only a claim that waits for the writers fails it; one that does not returns at once.
BOUND = 30


@asynccontextmanager
async def writers_held_off(db_url: str) -> AsyncIterator[None]:
    """Another program holding what a writer of event deliveries waits for, until the end."""
    if db_url.startswith("sqlite"):
        with writers_held(db_url.removeprefix("sqlite:///")):
            yield
    else:
        conn = await asyncpg.connect(postgres_dsn(db_url))
        try:
            async with conn.transaction():
                # Stops UPDATE, INSERT and DELETE of the table; reads go on.
                await conn.execute("LOCK TABLE event_deliveries IN EXCLUSIVE MODE")
                yield
        finally:
            await conn.close()


async def test_a_poll_with_nothing_due_does_not_wait_for_the_writers(db: Database, db_url: str) -> None:
    async with writers_held_off(db_url):
        claimed = await asyncio.wait_for(events.claim(db, now=NOW, lease_until=NOW + 60, limit=10), BOUND)
    assert claimed == []
