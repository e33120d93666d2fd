"""PostgreSQL through asyncpg: a pool per worker process, raw SQL, prepared statements cached."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import asyncpg

from licensegate.store import database
from licensegate.store.database import Database, Executor, Row
from licensegate.store.pgpool import Connections

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


# What a database that is down, frozen, overloaded or unreachable raises (a statement timeout
# included): the request is answered 503, not 500.
_OUTAGE = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.OperatorInterventionError,
    asyncpg.InsufficientResourcesError,
)


def _unavailable(exc: BaseException) -> database.DatabaseUnavailable:
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return database.DatabaseUnavailable(f"PostgreSQL is unavailable: {reason}")


@dataclass(frozen=True, slots=True)
class Waits:
    """How long this side waits for PostgreSQL, in seconds. The server enforces the statement
    timeout itself; the client-side limits catch a server that cannot answer at all (frozen,
    cut off), which no server-side setting can."""

    answer: float = 5.0  # a connection from the pool, a new connection, each statement's answer
    statement: float = 30.0  # PostgreSQL's statement_timeout; a long statement's answer (+2 s)

    @property
    def long_answer(self) -> float:
        return self.statement + 2


class _PgRunner:
    dialect = "postgresql"
    read_only: str | None = None

    def __init__(self, conn: Any, waits: Waits) -> None:
        self._conn = conn
        self._waits = waits

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        try:
            rec = await self._conn.fetchrow(to_postgres(sql), *args)
        except asyncpg.UniqueViolationError as exc:  # a write with RETURNING, or a CTE's
            raise database.UniqueViolation(str(exc)) from exc
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc
        return dict(rec) if rec is not None else None

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        try:
            return [dict(r) for r in await self._conn.fetch(to_postgres(sql), *args)]
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        try:
            return await self._conn.fetchval(to_postgres(sql), *args)
        except asyncpg.UniqueViolationError as exc:  # INSERT ... RETURNING
            raise database.UniqueViolation(str(exc)) from exc
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc

    async def execute(self, sql: str, *args: Any) -> int:
        try:
            return _rowcount(await self._conn.execute(to_postgres(sql), *args))
        except asyncpg.UniqueViolationError as exc:
            raise database.UniqueViolation(str(exc)) from exc
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc

    async def execute_long(self, sql: str, *args: Any) -> int:
        try:
            return _rowcount(
                await self._conn.execute(to_postgres(sql), *args, timeout=self._waits.long_answer)
            )
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc


class PostgresDatabase:
    """Each autocommit call takes a pooled connection for itself; `pinned()` and `transaction()`
    hold one for a block. Waiting for a free connection is bounded like any answer."""

    dialect = "postgresql"
    read_only: str | None = None

    def __init__(self, connections: Connections, waits: Waits) -> None:
        self._connections = connections
        self._waits = waits

    @classmethod
    async def open(cls, dsn: str, *, pool_size: int = 10, waits: Waits | None = None) -> PostgresDatabase:
        """No connection is made here: a worker starts (and answers 503 until PostgreSQL is back)
        when the database is down or frozen; the first statement connects."""
        waits = waits or Waits()

        async def connect() -> Any:
            return await asyncpg.connect(
                dsn,
                timeout=waits.answer,
                # asyncpg arms one timer per statement for this; the server's statement timeout
                # alone cannot help when the server itself does not answer.
                command_timeout=waits.answer,
                server_settings={"statement_timeout": f"{int(waits.statement * 1000)}ms"},
            )

        return cls(Connections(connect, pool_size, waits.answer), waits)

    async def _acquire(self) -> Any:
        try:
            return await self._connections.acquire()
        except (*_OUTAGE, asyncpg.InterfaceError, ConnectionError) as exc:
            raise _unavailable(exc) from exc

    def _release(self, conn: Any) -> None:
        self._connections.release(conn)

    @asynccontextmanager
    async def reading_apart(self) -> AsyncIterator[Executor]:
        yield self

    @asynccontextmanager
    async def pinned(self) -> AsyncIterator[Database]:
        conn = await self._acquire()
        try:
            yield PinnedPostgres(conn, self._waits)
        except (database.DatabaseUnavailable, asyncio.CancelledError):
            # Its statement may still be waiting on a server that does not answer (or was cut off
            # mid-answer): a graceful release would wait for the cancellation to be acknowledged.
            conn.terminate()
            raise
        finally:
            if not conn.is_closed() and conn.is_in_transaction():
                conn.terminate()  # a rollback that failed: never hand that state on
            self._release(conn)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Executor]:
        async with self.pinned() as db, db.transaction() as tx:
            yield tx

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        async with self.pinned() as db:
            return await db.fetch_one(sql, *args)

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        async with self.pinned() as db:
            return await db.fetch_all(sql, *args)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        async with self.pinned() as db:
            return await db.fetch_value(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        async with self.pinned() as db:
            return await db.execute(sql, *args)

    async def execute_long(self, sql: str, *args: Any) -> int:
        async with self.pinned() as db:
            return await db.execute_long(sql, *args)

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.pinned() as db:
            await db.execute_many(sql, rows)

    def pool_use(self) -> tuple[int, int, int]:
        return self._connections.use()

    async def close(self) -> None:
        await self._connections.close()


class PinnedPostgres(_PgRunner):
    """One pooled connection, used for every statement of a request."""

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Executor]:
        transaction = self._conn.transaction()
        try:
            await transaction.start()
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc
        try:
            yield self
        except BaseException:
            with contextlib.suppress(Exception):  # a broken connection has rolled back already
                await transaction.rollback()
            raise
        try:
            await transaction.commit()
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.transaction():
            try:
                await self._conn.executemany(to_postgres(sql), rows, timeout=self._waits.long_answer)
            except _OUTAGE as exc:
                raise _unavailable(exc) from exc

    def pool_use(self) -> tuple[int, int, int]:
        return 1, 1, 1  # this block's one connection

    @asynccontextmanager
    async def pinned(self) -> AsyncIterator[Database]:
        yield self

    @asynccontextmanager
    async def reading_apart(self) -> AsyncIterator[Executor]:
        yield self

    async def close(self) -> None:
        return None  # the pool owns the connection
