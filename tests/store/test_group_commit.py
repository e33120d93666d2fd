"""Writes made at once outside transactions: each lands or fails on its own, on both databases;
on SQLite, where they are committed together (a group commit), a caller is answered success only
for a write that committed, and a caller that gave up before its group ran wrote nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from licensegate.store.database import Database, DatabaseUnavailable, UniqueViolation, open_database
from licensegate.store.sqlite import SqliteDatabase
from tests import databases

pytestmark = pytest.mark.anyio
INSERT = "INSERT INTO accounts (username, role, created_at) VALUES (?, 'seller', 1)"


@pytest.fixture
async def sqlite_db(sqlite_template: Path, tmp_path: Path) -> AsyncIterator[SqliteDatabase]:
    database = await open_database(databases.sqlite_copy(sqlite_template, tmp_path / "group.db"))
    assert isinstance(database, SqliteDatabase)
    yield database
    await database.close()


async def usernames(db: Database) -> set[str]:
    return {row["username"] for row in await db.fetch_all("SELECT username FROM accounts")}


async def test_writes_at_once_each_land_and_a_duplicate_fails_alone(db: Database) -> None:
    names = [f"user{n}" for n in range(40)] + ["user7", "user19"]  # two duplicates among them
    answers = await asyncio.gather(*(db.execute(INSERT, name) for name in names), return_exceptions=True)
    assert sum(1 for a in answers if a == 1) == 40
    failed = [a for a in answers if isinstance(a, BaseException)]
    assert len(failed) == 2
    assert all(isinstance(a, UniqueViolation) for a in failed)
    assert await usernames(db) == {f"user{n}" for n in range(40)}
    counts = await asyncio.gather(
        db.execute("UPDATE accounts SET disabled = 1 WHERE username LIKE 'user1%'"),
        db.execute("UPDATE accounts SET disabled = 1 WHERE username = 'nobody'"),
        db.fetch_value(f"{INSERT} RETURNING username", "returned"),
    )
    assert list(counts) == [11, 0, "returned"]


async def locked(db: SqliteDatabase, holder: asyncio.Task[None]) -> None:
    """Until `holder` holds the database's connection in its transaction."""
    while not db._lock.locked():
        assert not holder.done(), holder
        await asyncio.sleep(0)


async def queued(db: SqliteDatabase, count: int) -> None:
    """Until `count` writes wait for their group (each task queues its write at its first step)."""
    while len(db._queued) < count:  # noqa: ASYNC110 (no event to wait for: the queue is the state)
        await asyncio.sleep(0)


async def test_writes_queued_behind_a_transaction_commit_together_after_it(sqlite_db: SqliteDatabase) -> None:
    release = asyncio.Event()

    async def long_transaction() -> None:
        async with sqlite_db.transaction() as tx:
            await tx.execute(INSERT, "first")
            await release.wait()

    holder = asyncio.create_task(long_transaction())
    await locked(sqlite_db, holder)
    writers = [asyncio.create_task(sqlite_db.execute(INSERT, name)) for name in ("a", "b", "first", "c", "d")]
    await queued(sqlite_db, 5)
    writers[3].cancel()  # gives up before its group runs: "c" is never written
    release.set()
    await holder
    answers = await asyncio.gather(*writers, return_exceptions=True)
    assert [answers[0], answers[1], answers[4]] == [1, 1, 1]
    assert isinstance(answers[2], UniqueViolation)  # "first" committed before it: fails alone
    assert isinstance(answers[3], asyncio.CancelledError)
    assert await usernames(sqlite_db) == {"first", "a", "b", "d"}


async def test_a_full_disk_in_a_group_fails_every_write_it_undid(sqlite_db: SqliteDatabase) -> None:
    """SQLITE_FULL rolls the whole transaction back: the small write that ran before it in the
    group (it fitted in a page the database had) is undone too, so its caller must not hear
    success. Every caller is answered; exactly the writes answered success are in the database."""
    await sqlite_db.execute(INSERT, "before")
    pages = await sqlite_db.fetch_value("PRAGMA page_count")
    release = asyncio.Event()

    async def hold_the_connection() -> None:
        async with sqlite_db.transaction():
            await release.wait()

    holder = asyncio.create_task(hold_the_connection())
    await locked(sqlite_db, holder)
    names = ["small", *(f"{n:02d}" + "x" * 3000 for n in range(5))]  # the large ones need new pages
    writers = [asyncio.create_task(sqlite_db.execute(INSERT, name)) for name in names]
    await queued(sqlite_db, len(names))
    sqlite_db._conn.execute(f"PRAGMA max_page_count={pages}")  # the database may not grow
    release.set()
    await holder
    answers = await asyncio.gather(*writers, return_exceptions=True)
    assert all(isinstance(a, DatabaseUnavailable) for a in answers), answers
    sqlite_db._conn.execute("PRAGMA max_page_count=1073741823")
    assert await usernames(sqlite_db) == {"before"}
    assert await sqlite_db.execute(INSERT, "small") == 1  # it fits: the connection still writes
    assert await usernames(sqlite_db) == {"before", "small"}
