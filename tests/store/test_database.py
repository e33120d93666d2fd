"""The two database adapters behave alike: rows, row counts, transactions, placeholders."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from licensegate.store.database import (
    Database,
    DatabaseError,
    DatabaseUnavailable,
    Executor,
    UniqueViolation,
    dialect_of,
    open_database,
    sqlite_path,
)
from licensegate.store.postgres import to_postgres

pytestmark = pytest.mark.anyio


async def add_account(db: Executor, name: str) -> int:
    account_id: int = await db.fetch_value(
        "INSERT INTO accounts (username, role, created_at) VALUES (?, 'seller', 1) RETURNING id", name
    )
    return account_id


async def test_rows_are_dicts_and_values_come_back(db: Database) -> None:
    account_id = await add_account(db, "ann")
    row = await db.fetch_one("SELECT id, username, disabled FROM accounts WHERE id = ?", account_id)
    assert row == {"id": account_id, "username": "ann", "disabled": 0}
    assert await db.fetch_one("SELECT id FROM accounts WHERE username = ?", "nobody") is None
    assert await db.fetch_value("SELECT username FROM accounts WHERE id = ?", account_id) == "ann"
    assert await db.fetch_value("SELECT username FROM accounts WHERE id = ?", -1) is None


async def test_execute_returns_the_number_of_changed_rows(db: Database) -> None:
    await add_account(db, "a")
    await add_account(db, "b")
    assert await db.execute("UPDATE accounts SET disabled = 1") == 2
    assert await db.execute("UPDATE accounts SET disabled = 1 WHERE username = ?", "zzz") == 0
    assert await db.execute("DELETE FROM accounts WHERE username = ?", "a") == 1


async def test_execute_many_inserts_every_row(db: Database) -> None:
    await db.execute_many(
        "INSERT INTO accounts (username, role, created_at) VALUES (?, 'seller', ?)",
        [("x", 1), ("y", 2), ("z", 3)],
    )
    rows = await db.fetch_all("SELECT username FROM accounts ORDER BY username")
    assert [r["username"] for r in rows] == ["x", "y", "z"]


async def insert_then_fail(db: Database) -> None:
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO accounts (username, role, created_at) VALUES ('t', 'seller', 1)")
        raise RuntimeError("boom")


async def test_a_failed_transaction_leaves_nothing_behind(db: Database) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        await insert_then_fail(db)
    assert await db.fetch_value("SELECT COUNT(*) FROM accounts") == 0
    async with db.transaction() as tx:
        await tx.execute("INSERT INTO accounts (username, role, created_at) VALUES ('t', 'seller', 1)")
    assert await db.fetch_value("SELECT COUNT(*) FROM accounts") == 1


async def test_transactions_of_concurrent_tasks_do_not_interleave(db: Database) -> None:
    """A read-modify-write in a transaction is not lost when many tasks run it at once."""
    account_id = await add_account(db, "counter")

    async def bump() -> None:
        async with db.transaction() as tx:
            # PostgreSQL needs the row lock; SQLite's BEGIN IMMEDIATE already serialises writers.
            lock = " FOR UPDATE" if db.dialect == "postgresql" else ""
            value = await tx.fetch_value(f"SELECT disabled FROM accounts WHERE id = ?{lock}", account_id)
            await asyncio.sleep(0)
            await tx.execute("UPDATE accounts SET disabled = ? WHERE id = ?", value + 1, account_id)

    await asyncio.gather(*(bump() for _ in range(20)))
    assert await db.fetch_value("SELECT disabled FROM accounts WHERE id = ?", account_id) == 20


async def test_unique_violations_raise_one_type_on_both_databases(db: Database) -> None:
    await add_account(db, "dup")
    with pytest.raises(UniqueViolation):
        await add_account(db, "dup")
    with pytest.raises(UniqueViolation):
        await db.execute("INSERT INTO accounts (username, role, created_at) VALUES ('dup', 'seller', 1)")
    await db.execute("UPDATE accounts SET disabled = 1 WHERE username = 'dup'")  # the connection still works


async def test_using_sqlite_inside_its_own_transaction_is_caught(tmp_path: Path) -> None:
    # Only the single-connection SQLite adapter could deadlock this way.
    db = await open_database(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        with pytest.raises(RuntimeError, match="transaction handle"):
            async with db.transaction():
                await db.fetch_value("SELECT 1")
    finally:
        await db.close()


def test_placeholders_are_rewritten_for_postgres() -> None:
    assert to_postgres("SELECT ? , ? FROM t WHERE a = ?") == "SELECT $1 , $2 FROM t WHERE a = $3"


def test_urls_are_recognised() -> None:
    assert dialect_of("sqlite:///x.db") == "sqlite"
    assert dialect_of("postgresql://u@h/db") == "postgresql"
    assert dialect_of("postgres://u@h/db") == "postgresql"
    assert dialect_of("postgresql+asyncpg://u@h/db") == "postgresql"
    assert sqlite_path("sqlite:////abs/x.db") == "/abs/x.db"
    with pytest.raises(DatabaseError, match="unsupported"):
        dialect_of("mysql://x")
    with pytest.raises(DatabaseError):
        sqlite_path("sqlite:///")


async def test_unreachable_postgres_is_a_clear_error_at_first_use() -> None:
    # Opening makes no connection (a worker starts while PostgreSQL is down); a statement says why.
    db = await open_database("postgresql://postgres@127.0.0.1:1/none", answer_timeout=2)
    try:
        with pytest.raises(DatabaseUnavailable, match="PostgreSQL is unavailable"):
            await db.fetch_value("SELECT 1")
    finally:
        await db.close()


async def set_then_fail(db: Database, account_id: int) -> None:
    async with db.transaction() as tx:
        await tx.execute("UPDATE accounts SET disabled = 2 WHERE id = ?", account_id)
        raise RuntimeError("boom")


async def test_a_pinned_block_reads_writes_and_runs_transactions(db: Database) -> None:
    async with db.pinned() as pinned:
        assert pinned.dialect == db.dialect
        account_id = await add_account(pinned, "pinned")
        async with pinned.transaction() as tx:
            await tx.execute("UPDATE accounts SET disabled = 1 WHERE id = ?", account_id)
        assert await pinned.fetch_value("SELECT disabled FROM accounts WHERE id = ?", account_id) == 1
        with pytest.raises(RuntimeError, match="boom"):
            await set_then_fail(pinned, account_id)
        async with pinned.pinned() as again:  # nesting is harmless
            assert await again.fetch_value("SELECT disabled FROM accounts WHERE id = ?", account_id) == 1
    assert await db.fetch_value("SELECT disabled FROM accounts WHERE id = ?", account_id) == 1


async def test_pinned_blocks_of_concurrent_requests_do_not_interfere(db: Database) -> None:
    async def request(name: str) -> int:
        async with db.pinned() as pinned:
            account_id = await add_account(pinned, name)
            await asyncio.sleep(0)
            value: int = await pinned.fetch_value("SELECT id FROM accounts WHERE username = ?", name)
            assert value == account_id
            return value

    ids = await asyncio.gather(*(request(f"user{i}") for i in range(8)))
    assert len(set(ids)) == 8


async def test_sqlite_checkpoints_in_the_background(tmp_path: Path) -> None:
    path = tmp_path / "wal.db"
    db = await open_database(f"sqlite:///{path}")
    try:
        await db.execute("CREATE TABLE t (x TEXT)")
        for i in range(2000):
            await db.execute("INSERT INTO t (x) VALUES (?)", "x" * 200 + str(i))
        wal = path.with_name("wal.db-wal")
        await asyncio.sleep(1.5)  # a checkpoint round
        # The log has been copied into the database file: a new connection that reads only the
        # file (the log ignored) sees every row.
        import sqlite3

        snapshot = tmp_path / "copy.db"
        snapshot.write_bytes(path.read_bytes())
        with sqlite3.connect(snapshot) as copy:
            assert copy.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 2000
        assert wal.exists()
    finally:
        await db.close()


async def test_reading_apart_sees_committed_rows_and_only_reads(db: Database) -> None:
    account_id = await add_account(db, "ann")
    async with db.reading_apart() as reader:
        row = await reader.fetch_one("SELECT username FROM accounts WHERE id = ?", account_id)
        assert row == {"username": "ann"}
        assert await reader.fetch_all("SELECT id FROM accounts WHERE id = ?", account_id) == [
            {"id": account_id}
        ]
        assert await reader.fetch_value("SELECT COUNT(*) FROM accounts") == 1
        if db.dialect == "sqlite":
            with pytest.raises(DatabaseError):
                await reader.execute("DELETE FROM accounts")
    await add_account(db, "bob")
    async with db.reading_apart() as reader:
        assert await reader.fetch_value("SELECT COUNT(*) FROM accounts") == 2


async def test_sqlite_reading_apart_leaves_the_event_loop_free(tmp_path: Path) -> None:
    db = await open_database(f"sqlite:///{tmp_path / 'apart.db'}")
    try:
        started, done = asyncio.Event(), asyncio.Event()
        ticks = 0

        async def long_read() -> None:
            async with db.reading_apart() as reader:
                started.set()
                await reader.fetch_value(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000000) "
                    "SELECT COUNT(*) FROM n"
                )
            done.set()

        async def tick() -> None:
            nonlocal ticks
            await started.wait()
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0)

        await asyncio.gather(long_read(), tick())
        assert ticks > 0  # other work ran while the statement did (inline, none could)
    finally:
        await db.close()
