"""SQLite through the standard library, called inline on the event loop.

Indexed statements take tens of microseconds, so hopping to a thread would cost more than the
query (see docs/design.md). One connection per worker process; an asyncio lock keeps one
coroutine's transaction from interleaving with another's statements on that connection.

Writers of all worker processes take an OS file lock (`<database>.writelock`) around each write.
Without it, two processes writing at once meet SQLite's busy handler, which sleeps in steps of
1, 2, 5, 10... milliseconds, on the event loop; with it, a waiting writer wakes the moment the
other commits. Writes are short and never await slow work, so the wait is microseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from licensegate import private
from licensegate.store.database import Database, DatabaseError, Executor, Row, UniqueViolation

BUSY_TIMEOUT_MS = 5000


_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")


@lru_cache(maxsize=4096)
def _writes(sql: str) -> bool:
    return sql.lstrip().split(None, 1)[0].upper() in _WRITES


class _WriteLock:
    """An exclusive lock shared by every process that opens the same database file."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(f"{path}.writelock", os.O_RDWR | os.O_CREAT, 0o600) if path != ":memory:" else -1

    def __enter__(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *_exc: object) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    return {col[0]: value for col, value in zip(cursor.description, row, strict=True)}


CHECKPOINT_INTERVAL = 1.0  # seconds
CACHE_KIB = 64 * 1024  # page cache per connection
MMAP_BYTES = 256 * 1024 * 1024


class _Checkpointer:
    """Copies the write-ahead log into the database file from a background thread.

    SQLite otherwise checkpoints inside whichever commit makes the log long enough: on the event
    loop, with an fsync, a few milliseconds stolen from one unlucky request. The worker
    connections therefore never checkpoint themselves (wal_autocheckpoint=0); this thread does it
    every second on its own connection. A PASSIVE checkpoint never waits for readers or writers.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error:
            return
        try:
            while not self._stop.wait(CHECKPOINT_INTERVAL):
                with contextlib.suppress(sqlite3.Error):  # busy now: the next round will do it
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            with contextlib.suppress(sqlite3.Error):
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def connect(path: str) -> sqlite3.Connection:
    if path != ":memory:":
        private.touch(Path(path))  # 0600: SQLite gives its -wal and -shm files the same mode
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
        # SQLite's default page cache is 2 MB; a lookup that misses it asks the OS. Memory-mapped
        # reads also make re-reading pages cheap after another worker process has written.
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        if path != ":memory:":
            conn.execute("PRAGMA wal_autocheckpoint=0")  # the _Checkpointer thread does it
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
    def __init__(self, conn: sqlite3.Connection, path: str = ":memory:") -> None:
        super().__init__(conn)
        self._lock = asyncio.Lock()
        self._writing = _WriteLock(path)
        self._checkpointer = _Checkpointer(path) if path != ":memory:" else None
        self._owner: asyncio.Task[Any] | None = None

    @classmethod
    def open(cls, path: str) -> SqliteDatabase:
        return cls(connect(path), path)

    def _check_not_inside_own_transaction(self) -> None:
        # Calling the database (not the transaction handle) from inside a transaction would wait
        # for a lock its own task holds.
        if self._owner is not None and self._owner is asyncio.current_task():
            raise RuntimeError("use the transaction handle inside a transaction")

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        self._check_not_inside_own_transaction()
        async with self._lock:
            if _writes(sql):
                with self._writing:
                    return self._fetch_one(sql, args)
            return self._fetch_one(sql, args)

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        self._check_not_inside_own_transaction()
        async with self._lock:
            if _writes(sql):
                with self._writing:
                    return self._fetch_all(sql, args)
            return self._fetch_all(sql, args)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        self._check_not_inside_own_transaction()
        async with self._lock:
            if _writes(sql):
                with self._writing:
                    return self._fetch_value(sql, args)
            return self._fetch_value(sql, args)

    async def execute(self, sql: str, *args: Any) -> int:
        self._check_not_inside_own_transaction()
        async with self._lock:
            if _writes(sql):
                with self._writing:
                    return self._execute(sql, args)
            return self._execute(sql, args)

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._check_not_inside_own_transaction()
        async with self._lock:
            with self._writing:
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
            # The file lock queues this process's writers behind other processes' without
            # sleeping; IMMEDIATE still takes SQLite's write lock up front, for writers that do
            # not take the file lock (another program opening the file).
            with self._writing:
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
        if self._checkpointer is not None:
            self._checkpointer.stop()
        self._conn.close()
        self._writing.close()
