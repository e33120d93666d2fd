"""SQLite through the standard library, called inline on the event loop.

Indexed statements take tens of microseconds, so hopping to a thread would cost more than the
query (see docs/design.md). One connection per worker process; an asyncio lock keeps one
coroutine's transaction from interleaving with another's statements on that connection.

Writers of all worker processes take an OS file lock (`<database>.writelock`) around each write.
Without it, two processes writing at once meet SQLite's busy handler, which sleeps in steps of
1, 2, 5, 10... milliseconds, on the event loop; with it, a waiting writer wakes the moment the
other commits. The lock is tried without blocking; only when another process holds it does the
writer wait, on a thread, so the event loop keeps serving other requests meanwhile (a long
statement elsewhere, or the checkpointer truncating the log, can hold it for a while).

Writes outside a transaction that find the locks taken wait for them together and are then
committed in one transaction (a group commit, `SqliteDatabase._write`), each statement still
atomic and failing alone; a worker's burst of `init`s pays one lock, one commit and one write of
the pages they share instead of one each, which tripled `init`'s rate on two workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import operator
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from licensegate import private
from licensegate.store.database import (
    DatabaseError,
    DatabaseUnavailable,
    Executor,
    Itself,
    Row,
    UniqueViolation,
)

log = logging.getLogger("licensegate.store")

BUSY_TIMEOUT_MS = 5000
# Seconds after a write found the database held by another program during which this worker's
# writes try once without waiting: SQLite's busy wait blocks the event loop, and a worker whose
# background tasks and requests each waited the whole timeout in turn froze for several of them.
HURRY_AFTER_BUSY = 1.0
T = TypeVar("T")


_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")


@lru_cache(maxsize=4096)
def _writes(sql: str) -> bool:
    return sql.lstrip().split(None, 1)[0].upper() in _WRITES


def open_write_lock(path: str) -> int:
    """A descriptor of the lock file every writer of the database at `path` takes (made 0600)."""
    return os.open(f"{path}.writelock", os.O_RDWR | os.O_CREAT, 0o600)


@contextlib.contextmanager
def holding_writers(lock_fd: int) -> Iterator[None]:
    """Waits for the writers' lock (`open_write_lock`'s descriptor), then holds every worker's
    writes until the block ends. The workers wait for it on a thread, not in SQLite's busy
    handler, which sleeps on their event loops."""
    fcntl.flock(lock_fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(lock_fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def writers_held(path: str) -> Iterator[None]:
    """For another program (a tool, a test): `holding_writers` on the database at `path`."""
    fd = open_write_lock(path)
    try:
        with holding_writers(fd):
            yield
    finally:
        os.close(fd)


class _WriteLock:
    """An exclusive lock shared by every process that opens the same database file.

    Taken by one task of this process at a time (callers hold the database's asyncio lock)."""

    def __init__(self, path: str | None) -> None:
        """`path` None: nothing to lock (an in-memory or read-only database)."""
        self._fd = open_write_lock(path) if path is not None else -1
        self._waiter: ThreadPoolExecutor | None = None
        # A wait on the thread whose task was cancelled: whoever acquires next takes it over, and
        # if nobody has by the time it is granted, it is released at once.
        self._abandoned: asyncio.Future[None] | None = None

    def try_acquire(self) -> bool:
        """Take it if no process holds it (and no wait of this one is under way), without waiting."""
        if self._fd < 0:
            return True
        if self._abandoned is not None:
            return False
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        waiting = self._abandoned
        if waiting is not None:
            self._abandoned = None  # ours once granted
        else:
            # Another process is writing: wait for it off the event loop.
            if self._waiter is None:
                self._waiter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-writelock")
            waiting = asyncio.get_running_loop().run_in_executor(self._waiter, _lock_blocking, self._fd)
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            self._abandoned = waiting
            waiting.add_done_callback(self._release_if_abandoned)
            raise

    def _release_if_abandoned(self, waiting: asyncio.Future[None]) -> None:
        if self._abandoned is waiting:
            self._abandoned = None
            if not waiting.cancelled() and waiting.exception() is None:
                self.release()

    def release(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._waiter is not None:
            self._waiter.shutdown(wait=False, cancel_futures=True)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _lock_blocking(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_EX)


def _dict_row(cursor: sqlite3.Cursor, row: tuple[Any, ...]) -> Row:
    # Built in C (no Python step per column): the hot path reads rows of fifty-odd columns.
    return dict(zip(map(_COLUMN_NAME, cursor.description), row, strict=True))


_COLUMN_NAME = operator.itemgetter(0)


CHECKPOINT_INTERVAL = 0.25  # seconds
# Past this many frames in the log (4 MiB of 4 KiB pages) the checkpointer has it start over.
RESTART_FRAMES = 1024
CATCH_UP_FRAMES = 64  # few enough to copy while writers wait
CATCH_UP_PASSES = 4  # copies without the lock before taking it anyway
SETTLE_INTERVAL = 1.0  # seconds between tries to finish the settings of a database opened locked
CACHE_KIB = 64 * 1024  # page cache per connection
MMAP_BYTES = 256 * 1024 * 1024
WAL_LIMIT_BYTES = 64 * 1024 * 1024  # the default of LICENSEGATE_SQLITE_WAL_BYTES
TRUNCATE_BUSY_MS = 1000  # how long a truncating checkpoint waits for readers before trying later


def _to_empty(frames: int, copied: int, before: int, size: int, limit: int) -> bool:
    """Whether the checkpointer empties the log file now: over the limit, every frame in it
    copied, and nothing appended since the last round (`before`: the frames it held then)."""
    return size > limit and frames == copied == before


class _Checkpointer:
    """Copies the write-ahead log into the database file from a background thread, and keeps the
    log short.

    SQLite otherwise checkpoints inside whichever commit makes the log long enough: on the event
    loop, with an fsync, a few milliseconds stolen from one unlucky request. The worker
    connections therefore never checkpoint themselves (wal_autocheckpoint=0); this thread does it
    on its own connection. A PASSIVE checkpoint never waits for readers or writers.

    A log only starts over from its beginning when a writer finds every frame of it copied; under
    a steady stream of writes a checkpoint never catches up with the writers by itself (they
    append while it copies), so the log grew by tens of megabytes a second, and emptying it then
    held every writer for over a second. So once the log holds `RESTART_FRAMES`, this thread
    copies again at once until the frames appended meanwhile are few, then copies the rest while
    it holds the writers' file lock (those frames and two fsyncs; 13-75 ms measured on a loaded
    two-core machine, where this thread also waits for the GIL). The next writer then finds the
    log fully copied and starts it over. Writers wait for that lock as for any writer, off their
    event loops.

    The log file never shrinks by itself: after one large transaction it stays that large (until
    a clean stop). A writer that starts the log over cuts the file to `journal_size_limit`, which
    bounds it under a stream of writes; after the last write nobody does, so once the file is
    over the limit, every frame of it copied and nothing appended for a round, this thread runs
    a TRUNCATE checkpoint, which empties it. That checkpoint blocks writers while it runs, so it
    first takes the writers' file lock too. It waits for the log to be copied and still: at a
    million users a TRUNCATE run while writers went on (or with a bulk delete's 120 MB of frames
    still to copy) held requests, reads included, for up to half a second at a time.
    """

    def __init__(self, path: str, wal_limit: int) -> None:
        self._path = path
        self._wal_limit = wal_limit
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, timeout=TRUNCATE_BUSY_MS / 1000, isolation_level=None)
            lock_fd = open_write_lock(self._path)
        except (sqlite3.Error, OSError):
            return
        try:
            before = -1  # the log's frames at the last round
            while not self._stop.wait(CHECKPOINT_INTERVAL):
                with contextlib.suppress(sqlite3.Error, OSError):  # busy now: the next round will do it
                    frames, copied = self._catch_up(conn)
                    if frames >= RESTART_FRAMES and frames != before:  # written to since
                        self._copy_rest(conn, lock_fd)
                    elif _to_empty(frames, copied, before, self._log_size(), self._wal_limit):
                        self._truncate(conn, lock_fd)
                    before = frames
            with contextlib.suppress(sqlite3.Error):
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            conn.close()
            os.close(lock_fd)

    def _log_size(self) -> int:
        return os.path.getsize(f"{self._path}-wal")

    @staticmethod
    def _catch_up(conn: sqlite3.Connection) -> tuple[int, int]:
        """Copy the log without holding writers, again while writers appended more than a few
        frames during the last copy: the frames in the log at the last copy's start, and how
        many of them are in the database file now."""
        frames = copied = 0
        for _ in range(CATCH_UP_PASSES):
            _busy, log, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            appended, frames = log - frames, log
            if appended < CATCH_UP_FRAMES or log < RESTART_FRAMES:
                break
        return frames, copied

    @staticmethod
    def _copy_rest(conn: sqlite3.Connection, lock_fd: int) -> None:
        _Checkpointer._holding_writers(conn, lock_fd, "PASSIVE")

    @staticmethod
    def _truncate(conn: sqlite3.Connection, lock_fd: int) -> None:
        _Checkpointer._holding_writers(conn, lock_fd, "TRUNCATE")

    @staticmethod
    def _holding_writers(conn: sqlite3.Connection, lock_fd: int, mode: str) -> None:
        with holding_writers(lock_fd):
            conn.execute(f"PRAGMA wal_checkpoint({mode})")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def connect(path: str, wal_limit: int = WAL_LIMIT_BYTES) -> sqlite3.Connection:
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
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        # Memory-mapped reads make re-reading pages cheap after another worker process has written.
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        if path != ":memory:":
            conn.execute("PRAGMA wal_autocheckpoint=0")  # the _Checkpointer thread does it
            conn.execute(f"PRAGMA journal_size_limit={wal_limit}")  # the log file's size after a restart
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.Error as exc:
        raise DatabaseError(f"cannot open SQLite database {path!r}: {exc}") from exc
    try:
        _file_settings(conn)
    except sqlite3.Error as exc:
        conn.close()
        if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _LOCKED_CODES:
            raise DatabaseUnavailable(f"SQLite database {path!r} is locked: {exc}") from exc
        raise DatabaseError(f"cannot open SQLite database {path!r}: {exc}") from exc
    return conn


# Busy, locked: another program holds the database now (a passing condition).
_LOCKED_CODES = frozenset({5, 6})


def _file_settings(conn: sqlite3.Connection) -> None:
    """The settings that read the database file, so wait for its lock (the others do not)."""
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    # SQLite's default page cache is 2 MB; a lookup that misses it asks the OS.
    conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")


def connect_unsettled(path: str, wal_limit: int = WAL_LIMIT_BYTES) -> sqlite3.Connection:
    """A connection to a database another program holds locked: without the settings that read
    the file (`SqliteDatabase.settle` applies them once it is free). It works meanwhile as SQLite's
    defaults do (the file is in WAL mode already, as every start and migration leaves it)."""
    try:
        conn = sqlite3.connect(
            path,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
            cached_statements=512,
        )
        conn.row_factory = _dict_row
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute(f"PRAGMA journal_size_limit={wal_limit}")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.Error as exc:
        raise DatabaseError(f"cannot open SQLite database {path!r}: {exc}") from exc
    return conn


# Why a database that exists cannot be opened for writing: I/O error (SQLite cannot size its
# shared-memory file on a full disk), disk full, cannot open (no space for a new file), read-only.
_NO_WRITING_CODES = frozenset({8, 10, 13, 14})


def connect_or_read_only(
    path: str, wal_limit: int = WAL_LIMIT_BYTES
) -> tuple[sqlite3.Connection, str | None]:
    """A connection, and why it is read-only when it is (else None).

    On a full disk (or a read-only file system) SQLite cannot create the shared-memory index its
    write-ahead log needs, so even reading fails. The database is then opened immutable: read
    straight from the file, no locks, no log; every write fails as a read-only database (503).
    That is right only if no committed transaction waits in the log (a clean stop empties it);
    otherwise reading the file alone would serve stale data, so the start is refused."""
    try:
        return connect(path, wal_limit), None
    except DatabaseError as exc:
        cause = exc.__cause__
        code = getattr(cause, "sqlite_errorcode", 0) & 0xFF
        if path == ":memory:" or code not in _NO_WRITING_CODES or not Path(path).is_file():
            raise
        reason = f"{cause}"
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise DatabaseError(
            f"cannot open SQLite database {path!r} ({reason}), and its write-ahead log {wal} holds "
            "transactions not yet in the database file: free disk space (or make it writable) first"
        )
    try:
        conn = sqlite3.connect(
            f"{Path(path).resolve().as_uri()}?immutable=1",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            cached_statements=512,
        )
        conn.row_factory = _dict_row
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.Error as exc:
        raise DatabaseError(f"cannot open SQLite database {path!r}: {reason}; read-only: {exc}") from exc
    return conn, reason


# SQLite's primary result codes of a database that cannot be used now (busy past the timeout,
# locked, disk I/O error or full, cannot open, read-only file, out of memory): a passing
# condition, not a bug in a statement.
_OUTAGE_CODES = frozenset({5, 6, 7, 8, 10, 13, 14, 15})


def _outage_or(exc: sqlite3.OperationalError) -> Exception:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in _OUTAGE_CODES:
        return DatabaseUnavailable(f"SQLite cannot be used now: {exc}")
    return exc


class _Runner:
    """Runs statements on the connection; shared by the database and its transactions."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def _fetch_one(self, sql: str, args: Sequence[Any]) -> Row | None:
        try:
            row: Row | None = self._conn.execute(sql, args).fetchone()
        except sqlite3.OperationalError as exc:
            raise _outage_or(exc) from exc
        return row

    def _fetch_all(self, sql: str, args: Sequence[Any]) -> list[Row]:
        try:
            return self._conn.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            raise _outage_or(exc) from exc

    def _fetch_value(self, sql: str, args: Sequence[Any]) -> Any:
        try:
            row = self._conn.execute(sql, args).fetchone()
        except sqlite3.IntegrityError as exc:  # INSERT ... RETURNING
            if "UNIQUE" in str(exc):
                raise UniqueViolation(str(exc)) from exc
            raise
        except sqlite3.OperationalError as exc:
            raise _outage_or(exc) from exc
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
        except sqlite3.OperationalError as exc:
            raise _outage_or(exc) from exc

    def _execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        try:
            self._conn.executemany(sql, rows)
        except sqlite3.OperationalError as exc:
            raise _outage_or(exc) from exc

    def _control(self, sql: str) -> None:
        """BEGIN, COMMIT or ROLLBACK."""
        try:
            self._conn.execute(sql)
        except sqlite3.OperationalError as exc:
            raise _outage_or(exc) from exc


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

    async def execute_long(self, sql: str, *args: Any) -> int:
        return self._execute(sql, args)


class _ReaderApart(_Runner):
    """A read-only connection whose statements run on a thread (`SqliteDatabase.reading_apart`):
    SQLite lets go of the GIL while it steps, so the event loop keeps serving."""

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        return await asyncio.to_thread(self._fetch_one, sql, args)

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        return await asyncio.to_thread(self._fetch_all, sql, args)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        return await asyncio.to_thread(self._fetch_value, sql, args)

    async def execute(self, sql: str, *args: Any) -> int:
        raise DatabaseError("a connection for reading apart does not write")

    async def execute_long(self, sql: str, *args: Any) -> int:
        raise DatabaseError("a connection for reading apart does not write")

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise DatabaseError("a connection for reading apart does not write")


def _connect_reader(path: str) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(
            f"{Path(path).resolve().as_uri()}?mode=ro",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        conn.row_factory = _dict_row
        conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    except sqlite3.OperationalError as exc:
        raise _outage_or(exc) from exc
    return conn


@dataclass(frozen=True, slots=True)
class _Queued:
    """A write waiting for the next group commit, and its caller's answer."""

    run: Callable[[str, Sequence[Any]], Any]
    sql: str
    args: Sequence[Any]
    done: asyncio.Future[Any]


def _fail(group: Sequence[_Queued], exc: Exception) -> None:
    """Answer every caller of a group that did not commit with the fault (one exception object
    each: a raised exception collects its own traceback)."""
    for item in group:
        if item.done.done():
            continue
        try:
            own = type(exc)(*exc.args)
        except Exception:
            own = DatabaseError(str(exc))
        own.__cause__ = exc
        item.done.set_exception(own)


class SqliteDatabase(_Runner):
    def __init__(
        self,
        conn: sqlite3.Connection,
        path: str = ":memory:",
        wal_limit: int = WAL_LIMIT_BYTES,
        read_only: str | None = None,
    ) -> None:
        super().__init__(conn)
        self.read_only = read_only  # why every write fails, when it does
        self._path = path
        self._lock = asyncio.Lock()
        writes = path != ":memory:" and read_only is None
        self._writing = _WriteLock(path if writes else None)
        self._checkpointer = _Checkpointer(path, wal_limit) if writes else None
        self._owner: asyncio.Task[Any] | None = None
        self._settling: asyncio.Task[None] | None = None
        self._busy_at = -HURRY_AFTER_BUSY  # when a write last found the database held (monotonic)
        self._itself = Itself(self)
        # Writes outside a transaction waiting for the next group commit (`_write`), and the
        # task that gathers and commits them.
        self._queued: list[_Queued] = []
        self._committer: asyncio.Task[None] | None = None

    async def settle(self) -> None:
        """Apply the settings a locked file kept `open` from applying, once it is free: tried
        every second without waiting for the lock (on the event loop, between transactions)."""
        while True:
            await asyncio.sleep(SETTLE_INTERVAL)
            if self._lock.locked():
                continue
            self._conn.execute("PRAGMA busy_timeout=0")
            try:
                _file_settings(self._conn)
            except sqlite3.Error:
                continue
            finally:
                self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            log.warning("SQLite database %s is free again: settings applied", self._path)
            return

    @classmethod
    def open(cls, path: str, wal_limit: int = WAL_LIMIT_BYTES) -> SqliteDatabase:
        try:
            conn, read_only = connect_or_read_only(path, wal_limit)
        except DatabaseUnavailable as exc:
            # Another program holds the database: start anyway (requests that need it answer 503
            # until it is free) rather than fail the worker, and finish the settings later.
            log.warning("%s; serving anyway: requests that need it answer 503 until it is free", exc)
            db = cls(connect_unsettled(path, wal_limit), path, wal_limit)
            db._settling = asyncio.get_running_loop().create_task(db.settle())
            return db
        if read_only is not None:
            log.warning(
                "SQLite database %s opened read-only (%s): reads are served, writes answer 503 "
                "until the service is restarted with space to write",
                path,
                read_only,
            )
        return cls(conn, path, wal_limit, read_only)

    def _check_not_inside_own_transaction(self) -> None:
        # Calling the database (not the transaction handle) from inside a transaction would wait
        # for a lock its own task holds.
        if self._owner is not None and self._owner is asyncio.current_task():
            raise RuntimeError("use the transaction handle inside a transaction")

    async def _run(self, run: Callable[[str, Sequence[Any]], T], sql: str, args: Sequence[Any]) -> T:
        self._check_not_inside_own_transaction()
        if _writes(sql):
            return await self._write(run, sql, args)
        async with self._lock:
            return run(sql, args)

    async def _write(self, run: Callable[[str, Sequence[Any]], T], sql: str, args: Sequence[Any]) -> T:
        """A write outside a transaction, committed with the others this worker queued by the time
        the write locks are free (a group commit): in order, each statement atomic as on its own
        (a failing one is undone alone and fails alone), the caller answered once the group has
        committed. Under a burst of `init`s, one lock, one commit and one write of the log's
        shared pages serve many sessions instead of one each."""
        if not self._queued and not self._lock.locked() and self._writing.try_acquire():
            # Nothing to group with and the locks free: at once (nothing awaits until it is done,
            # so no other task can come between, as `_reads_at_once` says).
            try:
                with self._waiting_rule():
                    return run(sql, args)
            finally:
                self._writing.release()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()
        self._queued.append(_Queued(run, sql, args, done))
        if self._committer is None or self._committer.done():
            self._committer = loop.create_task(self._commit_queued())
        result: T = await done
        return result

    async def _commit_queued(self) -> None:
        """Take the locks, then commit every write queued by then (more queue meanwhile: the next
        task commits those)."""
        async with self._lock:
            try:
                await self._writing.acquire()
            except BaseException as exc:
                self._committer = None
                _fail(
                    self._take_queued(), exc if isinstance(exc, Exception) else DatabaseUnavailable(str(exc))
                )
                raise
            self._committer = None  # writes queued from now on wait for the next group
            try:
                # Every caller is answered, the fault included; a fault that means the database
                # is held elsewhere still tells `_waiting_rule` so.
                with contextlib.suppress(Exception), self._waiting_rule():
                    self._commit_group(self._take_queued())
            finally:
                self._writing.release()

    def _take_queued(self) -> list[_Queued]:
        queued, self._queued = self._queued, []
        return [item for item in queued if not item.done.done()]  # a cancelled caller's write is not made

    def _commit_group(self, group: list[_Queued]) -> None:
        """Run the statements in one transaction and answer their callers. What fails the whole
        transaction (the disk full, an I/O error) fails every caller, then raises."""
        if not group:
            return
        if len(group) == 1:  # nothing to share: the statement commits on its own
            item = group[0]
            try:
                item.done.set_result(item.run(item.sql, item.args))
            except Exception as exc:
                item.done.set_exception(exc)
                if isinstance(exc, DatabaseUnavailable):
                    raise
            return
        outcomes: list[tuple[_Queued, Any, Exception | None]] = []
        try:
            self._control("BEGIN IMMEDIATE")
            for item in group:
                try:
                    outcomes.append((item, item.run(item.sql, item.args), None))
                except Exception as exc:
                    if not self._conn.in_transaction:  # SQLite rolled the whole transaction back
                        raise
                    outcomes.append((item, None, exc))
            self._control("COMMIT")
        except Exception as exc:
            if self._conn.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
            _fail(group, exc)
            raise
        for item, value, failure in outcomes:
            if failure is None:
                item.done.set_result(value)
            else:
                item.done.set_exception(failure)

    @contextlib.contextmanager
    def _waiting_rule(self) -> Iterator[None]:
        """A write waits up to the busy timeout for another program's lock, unless a write found
        the database held within the last HURRY_AFTER_BUSY seconds: then it tries once, so one
        outage costs a worker one timeout, not one per write queued behind it."""
        hurry = time.monotonic() - self._busy_at < HURRY_AFTER_BUSY
        if hurry:
            self._conn.execute("PRAGMA busy_timeout=0")
        try:
            yield
        except DatabaseUnavailable:
            self._busy_at = time.monotonic()
            raise
        finally:
            if hurry:
                self._conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def _reads_at_once(self, sql: str) -> bool:
        # A read while no task holds the connection runs at once: nothing awaits between this
        # check and the statement, so no transaction can open in between (the common case on
        # the client API's hot path, which saves the lock's two awaits per statement).
        return not self._lock.locked() and not _writes(sql)

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        if self._reads_at_once(sql):
            return self._fetch_one(sql, args)
        return await self._run(self._fetch_one, sql, args)

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        if self._reads_at_once(sql):
            return self._fetch_all(sql, args)
        return await self._run(self._fetch_all, sql, args)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        if self._reads_at_once(sql):
            return self._fetch_value(sql, args)
        return await self._run(self._fetch_value, sql, args)

    async def execute(self, sql: str, *args: Any) -> int:
        return await self._run(self._execute, sql, args)

    async def execute_long(self, sql: str, *args: Any) -> int:
        return await self._run(self._execute, sql, args)  # callers batch on SQLite (store/bulk.py)

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.transaction() as tx:
            await tx.execute_many(sql, rows)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Executor]:
        self._check_not_inside_own_transaction()
        async with self._lock:
            # The file lock queues this process's writers behind other processes' without
            # sleeping; IMMEDIATE still takes SQLite's write lock up front, for writers that do
            # not take the file lock (another program opening the file).
            await self._writing.acquire()
            self._owner = asyncio.current_task()
            try:
                with self._waiting_rule():
                    self._control("BEGIN IMMEDIATE")
                    try:
                        yield SqliteTransaction(self._conn)
                        self._control("COMMIT")
                    except BaseException:
                        if self._conn.in_transaction:  # SQLite may have rolled back already
                            with contextlib.suppress(sqlite3.Error):
                                self._conn.execute("ROLLBACK")
                        raise
            finally:
                self._owner = None
                self._writing.release()

    def pinned(self) -> Itself:
        return self._itself  # one connection per process already

    @asynccontextmanager
    async def reading_apart(self) -> AsyncIterator[Executor]:
        if self._path == ":memory:" or self.read_only is not None:
            yield self  # no second connection sees this database (or none can take the locks)
            return
        conn = await asyncio.to_thread(_connect_reader, self._path)
        try:
            yield _ReaderApart(conn)
        finally:
            conn.close()

    def pool_use(self) -> tuple[int, int, int]:
        """The worker's one connection, in use while a transaction holds it."""
        return int(self._lock.locked()), 1, 1

    async def close(self) -> None:
        if self._settling is not None:
            self._settling.cancel()
        if self._committer is not None and not self._committer.done():
            with contextlib.suppress(Exception):  # its callers are answered either way
                await asyncio.wait_for(self._committer, BUSY_TIMEOUT_MS / 1000)
        if self._checkpointer is not None:
            self._checkpointer.stop()
        self._conn.close()
        self._writing.close()
