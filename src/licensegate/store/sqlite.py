"""SQLite through the standard library, called inline on the event loop.

Indexed statements take tens of microseconds, so hopping to a thread would cost more than the
query (see DESIGN.md). One connection per worker process; a lock keeps one coroutine's
transaction from interleaving with another's statements on that connection.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from licensegate.store.database import Database, DatabaseError, Executor, Row, UniqueViolation

BUSY_TIMEOUT_MS = 5000


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {col[0]: value for col, value in zip(cursor.description, row, strict=True)}


def connect(path: str) -> sqlite3.Connection:
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(
            path,
            isolation_level=None,  # we issue BEGIN/COMMIT ourselves
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
            cached_statements=512,
        )
        conn.row_factory = _dict_row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.Error as exc:
        raise DatabaseError(f"cannot open SQLite database {path!r}: {exc}") from exc
    return conn


class _Runner:
    """Runs statements on the connection; shared by the database and its transactions."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _fetch_one(self, sql: str, args: Sequence[Any]) -> Row | None:
        row: Row | None = self._conn.execute(sql, args).fetchone()
        return row

    def _fetch_all(self, sql: str, args: Sequence[Any]) -> list[Row]:
        return self._conn.execute(sql, args).fetchall()

    def _fetch_value(self, sql: str, args: Sequence[Any]) -> Any:
        try:
            row = self._conn.execute(sql, args).fetchone()
        except sqlite3.IntegrityError as exc:  # INSERT ... RETURNING
            if "UNIQUE" in str(exc):
                raise UniqueViolation(str(exc)) from exc
            raise
        if row is None:
            return None
        return next(iter(row.values()))

    def _execute(self, sql: str, args: Sequence[Any]) -> int:
        try:
            return self._conn.execute(sql, args).rowcount
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                raise UniqueViolation(str(exc)) from exc
            raise

    def _execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._conn.executemany(sql, rows)


class SqliteTransaction(_Runner):
    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        return self._fetch_one(sql, args)

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        return self._fetch_all(sql, args)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        return self._fetch_value(sql, args)

    async def execute(self, sql: str, *args: Any) -> int:
        return self._execute(sql, args)

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._execute_many(sql, rows)


class SqliteDatabase(_Runner):
    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[Any] | None = None

    @classmethod
    def open(cls, path: str) -> SqliteDatabase:
        return cls(connect(path))

    def _check_not_inside_own_transaction(self) -> None:
        # Calling the database (not the transaction handle) from inside a transaction would wait
        # for a lock its own task holds.
        if self._owner is not None and self._owner is asyncio.current_task():
            raise RuntimeError("use the transaction handle inside a transaction")

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        self._check_not_inside_own_transaction()
        async with self._lock:
            return self._fetch_one(sql, args)

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        self._check_not_inside_own_transaction()
        async with self._lock:
            return self._fetch_all(sql, args)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        self._check_not_inside_own_transaction()
        async with self._lock:
            return self._fetch_value(sql, args)

    async def execute(self, sql: str, *args: Any) -> int:
        self._check_not_inside_own_transaction()
        async with self._lock:
            return self._execute(sql, args)

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._check_not_inside_own_transaction()
        async with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._execute_many(sql, rows)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Executor]:
        self._check_not_inside_own_transaction()
        async with self._lock:
            self._owner = asyncio.current_task()
            # IMMEDIATE takes the write lock up front, so two processes never both read and then
            # fail to upgrade; the busy timeout queues them instead.
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield SqliteTransaction(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._owner = None

    @asynccontextmanager
    async def pinned(self) -> AsyncIterator[Database]:
        yield self  # one connection per process already

    async def close(self) -> None:
        self._conn.close()
