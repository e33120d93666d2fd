"""PostgreSQL through asyncpg: a pool per worker process, raw SQL, prepared statements cached."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import asyncpg

from licensegate.store import database
from licensegate.store.database import Database, Executor, Itself, Row
from licensegate.store.loginversions import may_change_logins
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


LoginWrites = Callable[[], None]  # told after a committed statement that may have changed a login


class _PgRunner:
    dialect = "postgresql"
    read_only: str | None = None

    def __init__(self, conn: Any, waits: Waits, login_writes: LoginWrites | None = None) -> None:
        self._conn = conn
        self._waits = waits
        self._login_writes = login_writes
        self._in_transaction = False
        self._changed_logins = False  # in this transaction, by a statement `may_change_logins`

    def _ran(self, sql: str) -> None:
        """After a statement, answered or not (a lost answer may hide a commit): this machine's
        workers are told of a login change before the answer that follows it goes out."""
        if self._login_writes is not None and may_change_logins(sql):
            if self._in_transaction:
                self._changed_logins = True
            else:
                self._login_writes()

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        try:
            rec = await self._conn.fetchrow(to_postgres(sql), *args)
        except asyncpg.UniqueViolationError as exc:  # a write with RETURNING, or a CTE's
            raise database.UniqueViolation(str(exc)) from exc
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc
        finally:
            self._ran(sql)
        return dict(rec) if rec is not None else None

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        try:
            return [dict(r) for r in await self._conn.fetch(to_postgres(sql), *args)]
        except asyncpg.UniqueViolationError as exc:  # a write with RETURNING, or a CTE's
            raise database.UniqueViolation(str(exc)) from exc
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc
        finally:
            self._ran(sql)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        try:
            return await self._conn.fetchval(to_postgres(sql), *args)
        except asyncpg.UniqueViolationError as exc:  # INSERT ... RETURNING
            raise database.UniqueViolation(str(exc)) from exc
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc
        finally:
            self._ran(sql)

    async def execute(self, sql: str, *args: Any) -> int:
        try:
            return _rowcount(await self._conn.execute(to_postgres(sql), *args))
        except asyncpg.UniqueViolationError as exc:
            raise database.UniqueViolation(str(exc)) from exc
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc
        finally:
            self._ran(sql)

    async def execute_long(self, sql: str, *args: Any) -> int:
        try:
            return _rowcount(
                await self._conn.execute(to_postgres(sql), *args, timeout=self._waits.long_answer)
            )
        except _OUTAGE as exc:
            raise _unavailable(exc) from exc
        finally:
            self._ran(sql)


class PostgresDatabase:
    """Each autocommit call takes a pooled connection for itself; `pinned()` and `transaction()`
    hold one for a block. Waiting for a free connection is bounded like any answer."""

    dialect = "postgresql"
    read_only: str | None = None

    def __init__(
        self, connections: Connections, waits: Waits, login_writes: LoginWrites | None = None
    ) -> None:
        self._connections = connections
        self._waits = waits
        self._login_writes = login_writes

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        pool_size: int = 10,
        waits: Waits | None = None,
        login_writes: LoginWrites | None = None,
    ) -> PostgresDatabase:
        """No connection is made here: a worker starts (and answers 503 until PostgreSQL is back)
        when the database is down or frozen; the first statement connects. `login_writes`: called
        after each committed statement that may have changed a login (`may_change_logins`)."""
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

        return cls(Connections(connect, pool_size, waits.answer), waits, login_writes)

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
            yield PinnedPostgres(conn, self._waits, self._login_writes)
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
        outer, self._in_transaction = self._in_transaction, True
        committing = False
        try:
            try:
                yield self
            except BaseException:
                with contextlib.suppress(Exception):  # a broken connection has rolled back already
                    await transaction.rollback()
                raise
            committing = True
            try:
                await transaction.commit()
            except _OUTAGE as exc:
                raise _unavailable(exc) from exc
        finally:
            self._in_transaction = outer
            if not outer and self._changed_logins:
                self._changed_logins = False
                if committing and self._login_writes is not None:
                    self._login_writes()

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        async with self.transaction():
            try:
                await self._conn.executemany(to_postgres(sql), rows, timeout=self._waits.long_answer)
            except _OUTAGE as exc:
                raise _unavailable(exc) from exc
            finally:
                self._ran(sql)

    def pool_use(self) -> tuple[int, int, int]:
        return 1, 1, 1  # this block's one connection

    def pinned(self) -> Itself:
        return Itself(self)

    @asynccontextmanager
    async def reading_apart(self) -> AsyncIterator[Executor]:
        yield self

    async def close(self) -> None:
        return None  # the pool owns the connection
