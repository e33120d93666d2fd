"""Test databases: a migrated template per test process, copied (SQLite) or emptied (PostgreSQL)
for every test. A PostgreSQL that cannot be reached fails the run; it never skips.

PostgreSQL databases are reused rather than dropped: dropping one forces a checkpoint of the
whole server (seconds on a busy machine). A test process takes over a database an ended test
process left behind when it was made from the same migrations (a fingerprint in the database's
comment says so), renaming it to its own name, and empties it; it creates one only when none is
free. Databases of other migrations are dropped only when too many are left lying about.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from licensegate.metrics import process_alive
from licensegate.store import migrate
from licensegate.store.schema import metadata

POSTGRES_ADMIN_URL = os.environ.get(
    "LICENSEGATE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
FLAVOURS = ("sqlite", "postgres")
# Names of test databases: lgtest_* (in-process tests) or lglive_* (live servers), ending in the
# process id of the test process that uses them.
TEST_DATABASE = re.compile(r"^lg(test|live)_.*_([0-9]+)$")
MAX_FOREIGN_IDLE = 12  # idle databases of other migrations kept for other checkouts to reuse

Connection = psycopg.Connection[tuple[object, ...]]


def unique_name(prefix: str) -> str:
    """A database name no other test process uses, even of another concurrent run."""
    return f"{prefix}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"


def postgres_url(database: str) -> str:
    base, _, _ = POSTGRES_ADMIN_URL.rpartition("/")
    return f"{base}/{database}"


@contextmanager
def _admin() -> Iterator[Connection]:
    try:
        conn: Connection = psycopg.connect(POSTGRES_ADMIN_URL, autocommit=True)
    except psycopg.Error as exc:
        raise RuntimeError(
            f"PostgreSQL is required for the test suite and is not reachable at {POSTGRES_ADMIN_URL}: {exc}"
        ) from exc
    with conn:
        yield conn


def schema_fingerprint() -> str:
    """Which migrations made a database: a digest of every migration file."""
    digest = hashlib.sha256()
    for path in sorted((migrate.MIGRATIONS_DIR / "versions").glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"licensegate test database {digest.hexdigest()[:16]}"


def create_postgres_database(name: str, *, durable: bool = True) -> str:
    """Drop and recreate `name`, migrate it, and return its URL. A database that need not be
    `durable` does not wait for the WAL to reach the disk at each commit: it need not outlive a
    crash of the PostgreSQL server (test databases; never a benchmark's)."""
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
        if not durable:
            conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    url = postgres_url(name)
    migrate.upgrade(url)
    return url


def drop_database(name: str) -> None:
    """Drop a database made by `create_postgres_database` that no one needs any more."""
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def claim_database(name: str) -> str:
    """An empty, migrated test database called `name`: an ended test process's database of the
    same migrations if there is one, else a new one."""
    fingerprint = schema_fingerprint()
    with _admin() as conn:
        idle = _idle_databases(conn)
        for candidate, comment in idle:
            if comment == fingerprint and _rename(conn, candidate, name):
                url = postgres_url(name)
                empty_postgres(url)
                return url
        foreign = [candidate for candidate, comment in idle if comment != fingerprint]
        for candidate in foreign[: max(0, len(foreign) - MAX_FOREIGN_IDLE)]:
            conn.execute(f'DROP DATABASE IF EXISTS "{candidate}" WITH (FORCE)')
    url = create_postgres_database(name, durable=False)
    with _admin() as conn:
        conn.execute(f"COMMENT ON DATABASE \"{name}\" IS '{fingerprint}'")
    return url


def _idle_databases(conn: Connection) -> list[tuple[str, str | None]]:
    """Test databases whose test process has ended (oldest first), with their comments."""
    rows = conn.execute(
        "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database ORDER BY oid"
    ).fetchall()
    idle: list[tuple[str, str | None]] = []
    for name, comment in rows:
        found = TEST_DATABASE.match(str(name))
        if found and not process_alive(int(found[2])):
            idle.append((str(name), None if comment is None else str(comment)))
    return idle


def _rename(conn: Connection, old: str, new: str) -> bool:
    """Take over `old`; False when another process took it first, is dropping it (we do not wait
    for that) or something still uses it."""
    try:
        conn.execute("SET lock_timeout = '200ms'")
        conn.execute(f'ALTER DATABASE "{old}" RENAME TO "{new}"')
    except psycopg.Error:
        return False
    finally:
        conn.execute("RESET lock_timeout")
    return True


def create_sqlite_template(folder: Path) -> Path:
    path = folder / "template.db"
    migrate.upgrade(f"sqlite:///{path}")
    return path


def sqlite_copy(template: Path, target: Path) -> str:
    shutil.copyfile(template, target)
    return f"sqlite:///{target}"


# Children before parents, then every sequence that has moved back to 1: in one round trip, as one
# transaction. DELETE costs about nothing on the many tables a test leaves empty; TRUNCATE would
# replace every table's files and cost far more.
EMPTY_POSTGRES = "; ".join(
    [
        *(f'DELETE FROM "{table.name}"' for table in reversed(metadata.sorted_tables)),
        "SELECT setval(format('%I.%I', schemaname, sequencename), 1, false) FROM pg_sequences"
        " WHERE schemaname = current_schema() AND last_value IS NOT NULL",
    ]
)

_connections: dict[str, Connection] = {}


def _kept_connection(url: str) -> Connection:
    """This process's connection to the test database at `url` (opened if it has none open)."""
    conn = _connections.get(url)
    if conn is None or conn.closed:
        conn = _connections[url] = psycopg.connect(url, autocommit=True)
    return conn


def empty_postgres(url: str) -> None:
    """Empty every table of the test database at `url`, over a connection kept for the process."""
    _kept_connection(url).execute(EMPTY_POSTGRES)


_free_live: list[str] = []
_live_made = 0


def take_live_database() -> str:
    """A migrated, empty PostgreSQL database for a live server, reused from an earlier server of
    this test process when one is free."""
    global _live_made
    if _free_live:
        return _free_live.pop()
    _live_made += 1
    return claim_database(unique_name(f"lglive_{_live_made}"))


def give_back_live_database(url: str) -> None:
    """Empty a live server's database (after the server stopped) for the next one."""
    end_other_sessions(url)
    empty_postgres(url)
    _free_live.append(url)


def end_other_sessions(url: str, timeout: float = 10.0) -> None:
    """End every other session on the database at `url` and wait until they are gone. A server's
    session can outlive its process for a moment (a COMMIT sent just before a worker exited, or
    was killed, is finished by the database afterwards), and a DELETE whose snapshot came first
    leaves the rows it adds to the next test: a clean-clone CI run once had a restore refuse its
    "empty" database so."""
    conn = _kept_connection(url)
    others = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    conn.execute(f"SELECT pg_terminate_backend(pid) FROM ({others}) AS other")
    deadline = time.monotonic() + timeout
    while conn.execute(others).fetchone() is not None:
        if time.monotonic() > deadline:
            raise AssertionError(f"sessions on {url} did not end within {timeout} s")
        time.sleep(0.02)
