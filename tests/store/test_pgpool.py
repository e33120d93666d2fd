"""A worker's PostgreSQL connections (store/pgpool.py): reuse, the size bound, waiting, handing
over, and what a closed connection frees. Stand-in connections; the real ones are exercised by
every PostgreSQL test."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.store.pgpool import Connections

pytestmark = pytest.mark.anyio


class FakeConnection:
    def __init__(self, number: int) -> None:
        self.number = number
        self.closed = False

    def is_closed(self) -> bool:
        return self.closed

    def terminate(self) -> None:
        self.closed = True

    async def close(self) -> None:
        self.closed = True


def pool(size: int, timeout: float = 5.0) -> tuple[Connections, list[FakeConnection]]:
    made: list[FakeConnection] = []

    async def connect() -> FakeConnection:
        made.append(FakeConnection(len(made)))
        return made[-1]

    return Connections(connect, size, timeout), made


async def test_an_idle_connection_is_reused() -> None:
    connections, made = pool(2)
    first = await connections.acquire()
    connections.release(first)
    assert await connections.acquire() is first
    assert len(made) == 1
    assert connections.use() == (1, 1, 2)


async def test_at_most_size_are_open_and_a_waiter_gets_the_next_released() -> None:
    connections, made = pool(2)
    one, two = await connections.acquire(), await connections.acquire()
    waiting = asyncio.ensure_future(connections.acquire())
    await asyncio.sleep(0)
    assert not waiting.done()
    connections.release(one)
    assert await waiting is one
    assert len(made) == 2
    connections.release(two)
    assert connections.use() == (1, 2, 2)


async def test_a_closed_connection_frees_its_place_for_a_new_one() -> None:
    connections, made = pool(1)
    one = await connections.acquire()
    waiting = asyncio.ensure_future(connections.acquire())
    await asyncio.sleep(0)
    one.terminate()
    connections.release(one)
    fresh = await waiting
    assert fresh is not one
    assert not fresh.is_closed()
    assert len(made) == 2
    assert connections.use() == (1, 1, 1)


async def test_a_closed_idle_connection_is_not_handed_out() -> None:
    connections, made = pool(1)
    one = await connections.acquire()
    connections.release(one)
    one.closed = True  # the server ended it while it was idle
    assert await connections.acquire() is not one
    assert len(made) == 2


async def test_waiting_for_a_busy_pool_is_bounded() -> None:
    connections, _made = pool(1, timeout=0.01)
    held = await connections.acquire()
    with pytest.raises(TimeoutError):
        await connections.acquire()
    connections.release(held)  # nobody waits any more: it goes back idle
    assert await connections.acquire() is held


async def test_a_failed_connect_gives_its_place_back() -> None:
    attempts = 0

    async def connect() -> FakeConnection:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise OSError("connection refused")
        return FakeConnection(attempts)

    connections = Connections(connect, 1, 5.0)
    with pytest.raises(OSError, match="refused"):
        await connections.acquire()
    assert connections.use() == (0, 0, 1)
    assert (await connections.acquire()).number == 2


async def test_close_closes_the_idle_and_refuses_new_callers() -> None:
    connections, _made = pool(2)
    one, two = await connections.acquire(), await connections.acquire()
    connections.release(one)
    await connections.close()
    assert one.is_closed()
    connections.release(two)  # in use while closing: closed when it comes back
    assert two.is_closed()
    with pytest.raises(ConnectionError):
        await connections.acquire()
