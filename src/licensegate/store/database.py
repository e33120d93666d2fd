"""The interface every store module talks to, and the factory that picks an adapter by URL.

SQL is written once with `?` placeholders in the subset both SQLite and PostgreSQL understand;
the PostgreSQL adapter rewrites the placeholders to `$n`. Rows come back as plain dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol
from urllib.parse import urlsplit

Row = dict[str, Any]


class DatabaseError(Exception):
    """The database cannot be reached or used; the message says why, in one line."""


class DatabaseUnavailable(DatabaseError):
    """The database did not answer in time, or cannot be reached or written now (down, frozen,
    overloaded, disk full): a passing condition, answered 503 with Retry-After, never 500."""

    retry_after = 5  # seconds a caller is asked to wait before trying again


class UniqueViolation(Exception):
    """A write collided with a unique constraint (both adapters raise this one type), e.g. two
    concurrent requests creating the same username. On PostgreSQL the transaction is aborted."""


class Executor(Protocol):
    """Something that runs SQL: the database itself (autocommit) or an open transaction."""

    dialect: str  # "sqlite" or "postgresql", for the rare statement that must differ

    async def fetch_one(self, sql: str, *args: Any) -> Row | None: ...

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]: ...

    async def fetch_value(self, sql: str, *args: Any) -> Any: ...

    async def execute(self, sql: str, *args: Any) -> int:
        """Run a statement; return the number of rows it changed."""
        ...

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    async def execute_long(self, sql: str, *args: Any) -> int:
        """`execute` for a statement that may change very many rows (PostgreSQL's bulk deletes,
        store/bulk.py): it may run for the whole statement timeout, where other statements get
        a short wait for their answer."""
        ...


class Database(Executor, Protocol):
    read_only: str | None  # why every write fails (a SQLite database on a full disk), else None

    def transaction(self) -> AbstractAsyncContextManager[Executor]:
        """A write transaction. Use only the handle it yields inside it, and never await
        slow work (password hashing, outbound HTTP) while it is open."""
        ...

    def pool_use(self) -> tuple[int, int, int]:
        """Connections in use, open, and the most there may be (a metric)."""
        ...

    def reading_apart(self) -> AbstractAsyncContextManager[Executor]:
        """For reads that take long (counting a million index entries): on SQLite a read-only
        connection of their own whose statements run on a thread, so that the worker's event loop
        and its connection keep serving others meanwhile; on PostgreSQL the database itself
        (its statements never hold up the event loop). Only for reads: SQLite's refuses writes."""
        ...

    def pinned(self) -> AbstractAsyncContextManager[Database]:
        """The same database, on one connection for the whole block: a request that runs several
        statements then takes a pooled connection once, not once per statement. Do not await slow
        work inside it (it would keep a pooled connection from others)."""
        ...

    async def close(self) -> None: ...


class Itself:
    """`pinned()` of a database that is one connection already: the database itself, through
    one object made once (an `asynccontextmanager` makes a generator and a wrapper at every call,
    about 3 us of every client call)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    async def __aenter__(self) -> Database:
        return self._db

    async def __aexit__(self, *_exc: object) -> None:
        return None


def dialect_of(url: str) -> str:
    scheme = urlsplit(url).scheme.split("+", 1)[0]
    if scheme == "sqlite":
        return "sqlite"
    if scheme in ("postgresql", "postgres"):
        return "postgresql"
    raise DatabaseError(f"unsupported database URL scheme {scheme!r}: use sqlite:///path or postgresql://...")


def sqlite_path(url: str) -> str:
    """`sqlite:///relative.db` and `sqlite:////absolute.db`, as SQLAlchemy spells them."""
    if not url.startswith("sqlite:///"):
        raise DatabaseError("a SQLite URL looks like sqlite:///path/to/file.db")
    path = url[len("sqlite:///") :]
    if not path:
        raise DatabaseError("the SQLite URL names no file")
    return path


def postgres_dsn(url: str) -> str:
    """asyncpg wants a plain postgresql:// URL, without a SQLAlchemy driver suffix."""
    parts = urlsplit(url)
    return url.replace(parts.scheme, "postgresql", 1)


async def open_database(
    url: str,
    *,
    pool_size: int = 10,
    wal_bytes: int = 64 * 1024 * 1024,
    answer_timeout: float = 5.0,
    statement_timeout: float = 30.0,
    login_writes: Callable[[], None] | None = None,
) -> Database:
    """`wal_bytes` is for SQLite; the pool size, the timeouts (seconds: to wait for a connection
    or an answer, and the server-side statement timeout) and `login_writes` (called after each
    committed statement that may have changed a login) for PostgreSQL."""
    dialect = dialect_of(url)
    if dialect == "sqlite":
        from licensegate.store.sqlite import SqliteDatabase

        return SqliteDatabase.open(sqlite_path(url), wal_bytes)
    from licensegate.store.postgres import PostgresDatabase, Waits

    return await PostgresDatabase.open(
        postgres_dsn(url),
        pool_size=pool_size,
        waits=Waits(answer_timeout, statement_timeout),
        login_writes=login_writes,
    )


def least(dialect: str, *exprs: str) -> str:
    """The smallest of SQL expressions (none of them NULL): SQLite spells it MIN, PostgreSQL LEAST."""
    return f"{'MIN' if dialect == 'sqlite' else 'LEAST'}({', '.join(exprs)})"


def greatest(dialect: str, *exprs: str) -> str:
    return f"{'MAX' if dialect == 'sqlite' else 'GREATEST'}({', '.join(exprs)})"
