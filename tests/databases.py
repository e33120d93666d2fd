"""Test databases: a migrated template per test process, copied (SQLite) or emptied (PostgreSQL)
for every test. A PostgreSQL that cannot be reached fails the run; it never skips."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import asyncpg

from licensegate.store import migrate
from licensegate.store.schema import metadata

POSTGRES_ADMIN_URL = os.environ.get(
    "LICENSEGATE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
FLAVOURS = ("sqlite", "postgres")


def unique_name(prefix: str) -> str:
    """A database name no other test process uses, even of another concurrent run."""
    return f"{prefix}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"


def postgres_url(database: str) -> str:
    base, _, _ = POSTGRES_ADMIN_URL.rpartition("/")
    return f"{base}/{database}"


async def _admin() -> asyncpg.Connection:
    try:
        return await asyncpg.connect(POSTGRES_ADMIN_URL)
    except (OSError, asyncpg.PostgresError) as exc:
        raise RuntimeError(
            f"PostgreSQL is required for the test suite and is not reachable at {POSTGRES_ADMIN_URL}: {exc}"
        ) from exc


async def create_postgres_database(name: str) -> str:
    """Drop and recreate `name`, migrate it, and return its URL."""
    conn = await _admin()
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = postgres_url(name)
    migrate.upgrade(url)
    return url


def create_sqlite_template(folder: Path) -> Path:
    path = folder / "template.db"
    migrate.upgrade(f"sqlite:///{path}")
    return path


def sqlite_copy(template: Path, target: Path) -> str:
    shutil.copyfile(template, target)
    return f"sqlite:///{target}"


async def drop_stale_databases() -> None:
    """Drop test databases whose test process has ended. Dropping one forces a PostgreSQL
    checkpoint (seconds on a busy machine), so a run leaves its databases and the next run, or
    the next machine, clears them."""
    conn = await _admin()
    try:
        rows = await conn.fetch("SELECT datname FROM pg_database WHERE datname ~ '^lg(test|live)_.*_[0-9]+$'")
        for row in rows:
            pid = int(row["datname"].rsplit("_", 1)[1])
            if pid != os.getpid() and not _alive(pid):
                await conn.execute(f'DROP DATABASE IF EXISTS "{row["datname"]}" WITH (FORCE)')
    finally:
        await conn.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_TABLES = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)


async def empty_postgres(url: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(f"TRUNCATE {_TABLES} RESTART IDENTITY CASCADE")
    finally:
        await conn.close()
