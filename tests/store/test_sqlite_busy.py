"""SQLite held by another program: one outage costs a worker one busy timeout, not one per write
queued behind it (SQLite's busy wait blocks the event loop; a worker whose background tasks and
requests each waited the whole timeout in turn used to freeze for three of them)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from licensegate.store import sqlite as sqlite_store
from licensegate.store.database import DatabaseUnavailable, open_database

pytestmark = pytest.mark.anyio


async def test_writes_right_after_a_busy_one_try_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_MS", 200)  # the outage's first write waits this long
    path = tmp_path / "held.db"
    db = await open_database(f"sqlite:///{path}")
    assert isinstance(db, sqlite_store.SqliteDatabase)
    waits: list[int] = []  # the busy timeout each write ran with
    execute = sqlite_store._Runner._execute

    def watched(self: sqlite_store._Runner, sql: str, args: Sequence[Any]) -> int:
        waits.append(next(iter(self._conn.execute("PRAGMA busy_timeout").fetchone().values())))
        return execute(self, sql, args)

    monkeypatch.setattr(sqlite_store._Runner, "_execute", watched)
    try:
        await db.execute("CREATE TABLE t (x INTEGER)")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # another program holding the write lock
        try:
            for _ in range(3):
                with pytest.raises(DatabaseUnavailable):
                    await db.execute("INSERT INTO t VALUES (1)")
            with pytest.raises(DatabaseUnavailable):
                async with db.transaction() as tx:
                    await tx.execute("INSERT INTO t VALUES (2)")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert waits[1:4] == [200, 0, 0]  # the first waited; those right after it did not
        db._busy_at -= sqlite_store.HURRY_AFTER_BUSY  # as if the window had passed
        await db.execute("INSERT INTO t VALUES (3)")
        assert waits[-1] == 200  # waiting again, and the pragma put back
        async with db.transaction() as tx:
            await tx.execute("INSERT INTO t VALUES (4)")
        assert await db.fetch_all("SELECT x FROM t ORDER BY x") == [{"x": 3}, {"x": 4}]
    finally:
        await db.close()
