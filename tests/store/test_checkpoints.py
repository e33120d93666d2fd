"""SQLite's write-ahead log starts over under a steady stream of writes: the checkpointer copies
the frames writers appended meanwhile while it holds the writers' file lock, so the next writer
finds the log fully copied (store/sqlite.py, `_Checkpointer`). Without that, a log written to
without a pause grew until a truncating checkpoint held every writer for over a second."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from licensegate.store import sqlite as store_sqlite
from licensegate.store.sqlite import (
    RESTART_FRAMES,
    SqliteDatabase,
    _Checkpointer,
    holding_writers,
    open_write_lock,
)

ROW = "x" * 3000  # most of a page: about a frame a row
LIMIT = 256 * 1024  # the log file's size limit (LICENSEGATE_SQLITE_WAL_BYTES), in bytes


def _salts(path: Path) -> bytes:
    """The log header's salts: SQLite draws new ones each time the log starts over."""
    with open(f"{path}-wal", "rb") as wal:
        return wal.read(24)[16:24]


def _writer(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # as the workers' connections
    return conn


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "log.db"
    conn = _writer(path)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.close()
    return path


def _write(conn: sqlite3.Connection, rows: int) -> None:
    for _ in range(rows):
        conn.execute("INSERT INTO t (v) VALUES (?)", (ROW,))


class _Writer(threading.Thread):
    """Writes a row at a time without a pause, each under the writers' file lock (as a worker's
    writers do), noting the log header's salts after each write."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self._path = path
        self._conn = _writer(path)
        self._lock_fd = open_write_lock(str(path))
        self.salts: list[bytes] = []
        self.wrote = threading.Condition()
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            with holding_writers(self._lock_fd):
                _write(self._conn, 1)
                with self.wrote:
                    self.salts.append(_salts(self._path))
                    self.wrote.notify_all()

    def close(self) -> None:
        self.stop.set()
        self.join()
        self._conn.close()
        os.close(self._lock_fd)


class _Noting:
    """The checkpointer's connection, noting the writer's last write when it copies the rest
    (the writer is held then: nothing moves until it is done)."""

    def __init__(self, conn: sqlite3.Connection, writer: _Writer, path: Path) -> None:
        self._conn, self._writer, self._path = conn, writer, path
        self.writes_before_copy: int | None = None
        self.salts_at_copy = b""

    def execute(self, sql: str) -> Any:
        self.writes_before_copy = len(self._writer.salts)
        self.salts_at_copy = _salts(self._path)
        return self._conn.execute(sql)


def test_the_next_writer_starts_the_log_over_after_the_rest_is_copied(database: Path) -> None:
    """With a writer appending throughout, the copies alone leave the frames appended during each
    behind; once the rest is copied while the writer waits, its next write starts the log over."""
    seed = _writer(database)
    _write(seed, RESTART_FRAMES + 10)
    seed.close()
    conn = sqlite3.connect(database, isolation_level=None)
    lock_fd = open_write_lock(str(database))
    writer = _Writer(database)
    writer.start()
    try:
        _Checkpointer._catch_up(conn)
        noting = _Noting(conn, writer, database)
        _Checkpointer._copy_rest(noting, lock_fd)  # type: ignore[arg-type]
        copied_after = noting.writes_before_copy
        assert copied_after is not None
        with writer.wrote:
            # Bounded by the writer's progress, not by time: it writes again once the lock is free.
            assert writer.wrote.wait_for(lambda: len(writer.salts) > copied_after, timeout=60)
        assert writer.salts[copied_after] != noting.salts_at_copy
    finally:
        writer.close()
        os.close(lock_fd)
        conn.close()


@pytest.mark.anyio
async def test_the_checkpointer_thread_restarts_the_log_of_a_working_database(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread itself, behind a worker's writes that do not pause: the log starts over after
    it has held `RESTART_FRAMES` (and the writes go on meanwhile, all of them kept)."""
    monkeypatch.setattr(store_sqlite, "CHECKPOINT_INTERVAL", 0.01)
    db = SqliteDatabase.open(str(database))
    restarted = False
    try:
        await db.execute("INSERT INTO t (v) VALUES (?)", ROW)
        first = _salts(database)
        written = 1
        # Bounded by rows, not by time: a loaded machine runs the checkpointer later, not never.
        while written < 30 * RESTART_FRAMES:
            await db.execute("INSERT INTO t (v) VALUES (?)", ROW)
            written += 1
            if written > RESTART_FRAMES and _salts(database) != first:
                restarted = True
                break
        assert restarted
        assert await db.fetch_value("SELECT count(*) FROM t") == written
    finally:
        await db.close()


@pytest.mark.parametrize(
    ("frames", "copied", "before", "size", "emptied"),
    [
        (40, 40, 40, 2 * LIMIT, True),  # still, all copied, over the limit
        (40, 40, 30, 2 * LIMIT, False),  # written to since the last round: the writers cut it
        (40, 30, 40, 2 * LIMIT, False),  # frames still to copy: a reader holds an older state
        (40, 40, 40, LIMIT, False),  # not over the limit
        (0, 0, 0, 2 * LIMIT, True),  # an empty log in a large file
    ],
)
def test_the_log_file_is_emptied_only_once_copied_and_still(
    frames: int, copied: int, before: int, size: int, emptied: bool
) -> None:
    """A TRUNCATE checkpoint holds every writer (and, at a million users, readers too) while it
    copies and waits: run while writers went on, or with a bulk delete's frames still to copy,
    it held requests for up to half a second. Under a stream of writes the writer that starts
    the log over cuts the file to the limit itself."""
    assert store_sqlite._to_empty(frames, copied, before, size, LIMIT) is emptied


def test_a_writer_starting_the_log_over_cuts_the_file_to_the_limit(database: Path) -> None:
    """What bounds the log file while writes go on, the checkpointer emptying it only once they stop."""
    conn = _writer(database)
    conn.execute(f"PRAGMA journal_size_limit={LIMIT}")
    _write(conn, 2 * RESTART_FRAMES)
    assert os.path.getsize(f"{database}-wal") > 4 * LIMIT
    checkpointer = sqlite3.connect(database, isolation_level=None)
    frames, copied = _Checkpointer._catch_up(checkpointer)
    assert frames == copied > 2 * RESTART_FRAMES  # every frame copied
    _write(conn, 1)
    assert os.path.getsize(f"{database}-wal") <= LIMIT
    checkpointer.close()
    conn.close()
