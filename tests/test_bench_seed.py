"""bench/seed.py's `quiet`: a rewind waits until the server has finished what wrk sent last."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from bench import seed as seeding

from licensegate.store.postgres import to_postgres


def test_an_idle_database_is_quiet(db_url: str) -> None:
    assert seeding.quiet(db_url, still=0.2, most=30.0) is True


@pytest.mark.anyio
async def test_a_transaction_left_open_keeps_postgres_busy(postgres_test_url: str) -> None:
    held = await asyncpg.connect(postgres_test_url)
    try:
        async with held.transaction():
            await held.fetchval(to_postgres("SELECT 1"))  # 'idle in transaction' from now on
            assert await asyncio.to_thread(seeding.quiet, postgres_test_url, 0.2, 1.0) is False
        assert await asyncio.to_thread(seeding.quiet, postgres_test_url, 0.2, 30.0) is True
    finally:
        await held.close()
