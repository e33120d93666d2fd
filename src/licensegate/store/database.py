"""The interface every store module talks to, and the factory that picks an adapter by URL.

SQL is written once with `?` placeholders in the subset both SQLite and PostgreSQL understand;
the PostgreSQL adapter rewrites the placeholders to `$n`. Rows come back as plain dicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol
from urllib.parse import urlsplit

Row = dict[str, Any]


class DatabaseError(Exception):
    """The database cannot be reached or used; the message says why, in one line."""


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


class Database(Executor, Protocol):
    def transaction(self) -> AbstractAsyncContextManager[Executor]:
        """A write transaction. Use only the handle it yields inside it, and never await
        slow work (password hashing, outbound HTTP) while it is open."""
        ...

    def pinned(self) -> AbstractAsyncContextManager[Database]:
        """The same database, on one connection for the whole block: a request that runs several
        statements then takes a pooled connection once, not once per statement. Do not await slow
        work inside it (it would keep a pooled connection from others)."""
        ...

    async def close(self) -> None: ...


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


async def open_database(url: str, *, pool_size: int = 10) -> Database:
    dialect = dialect_of(url)
    if dialect == "sqlite":
        from licensegate.store.sqlite import SqliteDatabase

        return SqliteDatabase.open(sqlite_path(url))
    from licensegate.store.postgres import PostgresDatabase

    return await PostgresDatabase.open(postgres_dsn(url), pool_size=pool_size)


def least(dialect: str, *exprs: str) -> str:
    """The smallest of SQL expressions (none of them NULL): SQLite spells it MIN, PostgreSQL LEAST."""
    return f"{'MIN' if dialect == 'sqlite' else 'LEAST'}({', '.join(exprs)})"


def greatest(dialect: str, *exprs: str) -> str:
    return f"{'MAX' if dialect == 'sqlite' else 'GREATEST'}({', '.join(exprs)})"
