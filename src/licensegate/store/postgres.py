"""PostgreSQL through asyncpg: a pool per worker process, raw SQL, prepared statements cached."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import lru_cache
from typing import Any

import asyncpg

from licensegate.store.database import Database, DatabaseError, Executor, Row, UniqueViolation

_PLACEHOLDER = re.compile(r"\?")


@lru_cache(maxsize=4096)
def to_postgres(sql: str) -> str:
    """Rewrite `?` placeholders to `$1, $2, ...`. Our SQL never has `?` inside a literal."""
    counter = iter(range(1, 10_000))
    return _PLACEHOLDER.sub(lambda _m: f"${next(counter)}", sql)


def _rowcount(status: str) -> int:
    # asyncpg returns the command tag, e.g. "UPDATE 3" or "INSERT 0 1".
    tail = status.rsplit(" ", 1)[-1]
    return int(tail) if tail.isdigit() else 0


async def _no_reset(_conn: asyncpg.Connection) -> None:
    # Handlers never SET, LISTEN or hold advisory locks across a release, so the pool's default
    # reset query is a wasted round trip on every request.
    return None


class _PgRunner:
    dialect = "postgresql"

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        rec = await self._conn.fetchrow(to_postgres(sql), *args)
        return dict(rec) if rec is not None else None

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        return [dict(r) for r in await self._conn.fetch(to_postgres(sql), *args)]

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        try:
            return await self._conn.fetchval(to_postgres(sql), *args)
        except asyncpg.UniqueViolationError as exc:  # INSERT ... RETURNING
            raise UniqueViolation(str(exc)) from exc

    async def execute(self, sql: str, *args: Any) -> int:
        try:
            return _rowcount(await self._conn.execute(to_postgres(sql), *args))
        except asyncpg.UniqueViolationError as exc:
            raise UniqueViolation(str(exc)) from exc

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._conn.executemany(to_postgres(sql), rows)


class PostgresDatabase(_PgRunner):
    """Autocommit calls go through the pool; `transaction()` pins one connection."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        super().__init__(pool)
        self._pool = pool

    @classmethod
    async def open(cls, dsn: str, *, pool_size: int = 10) -> PostgresDatabase:
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=1,
                max_size=pool_size,
                reset=_no_reset,
                # Enforced by the server: a client-side timeout would arm a timer for every query.
                server_settings={"statement_timeout": "30s"},
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise DatabaseError(f"cannot connect to PostgreSQL: {exc}") from exc
        return cls(pool)

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.executemany(to_postgres(sql), rows)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Executor]:
        async with self._pool.acquire() as conn, conn.transaction():
            yield _PgRunner(conn)

    @asynccontextmanager
    async def pinned(self) -> AsyncIterator[Database]:
        async with self._pool.acquire() as conn:
            yield PinnedPostgres(conn)

    async def close(self) -> None:
        await self._pool.close()


class PinnedPostgres(_PgRunner):
    """One pooled connection, used for every statement of a request."""

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Executor]:
        async with self._conn.transaction():
            yield self

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self._conn.transaction():
            await self._conn.executemany(to_postgres(sql), rows)

    @asynccontextmanager
    async def pinned(self) -> AsyncIterator[Database]:
        yield self

    async def close(self) -> None:
        return None  # the pool owns the connection
