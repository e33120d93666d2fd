"""Whether a running service holds the database, so that `licensegate restore` never replaces
the data under it.

Each `serve` holds a shared lock for as long as it runs, which the operating system or the
database server drops when the process ends however it ends (a kill -9 included): on SQLite an
`flock` of `<database>.serving` beside the database file; on PostgreSQL a session advisory lock
on one connection of its own (named `licensegate serve` in `pg_stat_activity`). `restore` takes
the same lock exclusively, without waiting: it fails while any service holds it, and a service
that starts meanwhile refuses to start until the restore is done.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from licensegate.store.database import DatabaseError, dialect_of, postgres_dsn, sqlite_path

# The advisory lock's key (any constant: advisory locks are scoped to the current database).
LOCK_KEY = 0x6C6765_5345_5256  # "lge" "SERV"
APPLICATION_NAME = "licensegate serve"


class InUse(DatabaseError):
    """The lock is taken: by a running service (for `restore`), or by a restore (for `serve`)."""


class Unreachable(DatabaseError):
    """The database cannot be reached to take the lock."""


def _lock_file(url: str) -> Path:
    return Path(sqlite_path(url) + ".serving")


@contextlib.contextmanager
def _flocked(url: str, exclusive: bool) -> Iterator[None]:
    path = _lock_file(url)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InUse(str(path)) from None
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _advisory(url: str, exclusive: bool, timeout: float) -> Iterator[None]:
    import psycopg

    try:
        conn = psycopg.connect(
            postgres_dsn(url),
            autocommit=True,
            connect_timeout=max(1, int(timeout)),
            application_name=APPLICATION_NAME if not exclusive else "licensegate restore",
        )
    except psycopg.Error as exc:
        raise Unreachable(f"cannot connect to PostgreSQL: {str(exc).strip().splitlines()[0]}") from exc
    try:
        function = "pg_try_advisory_lock" if exclusive else "pg_try_advisory_lock_shared"
        row = conn.execute(f"SELECT {function}(%s)", (LOCK_KEY,)).fetchone()
        if not row or not row[0]:
            raise InUse(_holders(conn))
        yield
    finally:
        conn.close()


def _holders(conn: object) -> str:
    """Who holds the lock, for the message: the services' addresses and process ids."""
    rows = conn.execute(  # type: ignore[attr-defined]
        "SELECT a.pid, COALESCE(host(a.client_addr), 'local'), a.application_name FROM pg_locks l "
        "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
        "AND l.objid = (%s::bigint & 4294967295)::oid AND l.database = "
        "(SELECT oid FROM pg_database WHERE datname = current_database())",
        (LOCK_KEY,),
    ).fetchall()
    return ", ".join(f"{name} from {addr} (server process {pid})" for pid, addr, name in rows) or "unknown"


def hold(url: str, *, exclusive: bool, timeout: float = 5.0) -> contextlib.AbstractContextManager[None]:
    """Hold the database's serving lock (shared: `serve`; exclusive: `restore`) until the block
    ends; `InUse` when it is taken the other way."""
    if dialect_of(url) == "sqlite":
        return _flocked(url, exclusive)
    return _advisory(url, exclusive, timeout)
