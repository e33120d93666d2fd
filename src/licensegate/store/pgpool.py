"""A worker's PostgreSQL connections: an idle one is handed out and taken back without a task,
a timer or a round trip.

asyncpg's own pool wraps every acquire in `wait_for` (a task and a timer) and every release in
`shield` (another task) plus a reset; for a request that runs one short statement, that was more
CPU than the statement itself. Here an idle connection is taken from a list at once; only when
all `size` are busy does a caller wait (bounded by `timeout`) for one to come back. Handlers never
SET, LISTEN or hold advisory locks across a release, so a connection needs no reset.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

Connect = Callable[[], Awaitable[Any]]


class Connections:
    def __init__(self, connect: Connect, size: int, timeout: float) -> None:
        self._connect = connect
        self._size = size
        self._timeout = timeout
        self._idle: list[Any] = []
        self._opened = 0  # connections open or being opened, idle or in use
        self._waiters: deque[asyncio.Future[Any]] = deque()
        self._closing = False

    async def acquire(self) -> Any:
        """An open connection; raises TimeoutError when none frees up within the timeout, and
        whatever connecting raises (the caller maps both to an outage)."""
        if self._closing:
            raise ConnectionError("the database is closing")
        while self._idle:
            conn = self._idle.pop()
            if not conn.is_closed():
                return conn
            self._opened -= 1
        if self._opened >= self._size:
            waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                conn = await asyncio.wait_for(waiter, self._timeout)
            except BaseException:
                if waiter.done() and not waiter.cancelled() and waiter.result() is not None:
                    self.release(waiter.result())  # handed over just as the wait ended
                else:
                    waiter.cancel()
                raise
            if conn is not None:
                return conn
            # None: a connection was closed instead of released, so there is room to open one.
        self._opened += 1
        try:
            return await self._connect()
        except BaseException:
            self._opened -= 1
            self._hand_over(None)
            raise

    def release(self, conn: Any) -> None:
        """Give a connection back (a closed or terminated one frees its place)."""
        if conn.is_closed() or self._closing:
            self._opened -= 1
            if not conn.is_closed():
                conn.terminate()
            self._hand_over(None)
            return
        if not self._hand_over(conn):
            self._idle.append(conn)

    def _hand_over(self, conn: Any) -> bool:
        """Give `conn` (or, with None, the room to open one) to the oldest waiter, if any."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return True
        return False

    def use(self) -> tuple[int, int, int]:
        """(in use, open, most that may be open)."""
        return self._opened - len(self._idle), self._opened, self._size

    async def close(self) -> None:
        """Close the idle connections (each within the timeout); one in use is closed when it
        comes back."""
        self._closing = True
        idle, self._idle = self._idle, []
        for conn in idle:
            self._opened -= 1
            try:
                await asyncio.wait_for(conn.close(), self._timeout)
            except Exception:
                conn.terminate()
        for waiter in self._waiters:
            waiter.cancel()
