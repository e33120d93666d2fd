"""Pacing requests to KeyAuth's seller API, on a clock the test moves (no real waiting)."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.domain.keyauthimport.pacing import DEFAULT_PACE, Pace, Pacer, parse_pace, retry_after_seconds


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_thirty_requests_in_any_thirty_seconds() -> None:
    clock = FakeTime()
    pacer = Pacer(parse_pace(DEFAULT_PACE), sleep=clock.sleep, monotonic=clock.monotonic)

    async def go() -> None:
        for _ in range(30):
            await pacer.wait_turn()
            clock.now += 0.5
        assert clock.slept == []  # the first 30 go at once
        await pacer.wait_turn()  # the 31st waits until the first is 30 s old
        assert clock.slept == [15.0]
        assert clock.now == 1030.0
        await pacer.wait_turn()  # the 32nd until the second is
        assert clock.slept == [15.0, 0.5]

    asyncio.run(go())


def test_a_429_waits_as_retry_after_asks() -> None:
    clock = FakeTime()
    pacer = Pacer(Pace(30, 30), sleep=clock.sleep, monotonic=clock.monotonic)

    async def go() -> None:
        assert await pacer.back_off("7", 1) == 7.0
        assert await pacer.back_off(None, 1) == 30.0  # no Retry-After: one window, doubling
        assert await pacer.back_off(None, 3) == 120.0
        assert await pacer.back_off(None, 12) == 600.0  # at most ten minutes

    asyncio.run(go())
    assert clock.slept == [7.0, 30.0, 120.0, 600.0]


def test_retry_after_as_a_date() -> None:
    assert retry_after_seconds("Fri, 27 Nov 2026 23:00:30 GMT", 1795820400.0) == 30.0
    assert retry_after_seconds("Fri, 27 Nov 2026 22:00:00 GMT", 1795820400.0) == 0.0
    assert retry_after_seconds("soon", 0.0) is None


def test_parse_pace() -> None:
    assert parse_pace("30/30") == Pace(30, 30.0)
    assert parse_pace("100/0") == Pace(100, 0.0)
    for bad in ("0/30", "x/1", "5/-1"):
        with pytest.raises(ValueError, match="--pace"):
            parse_pace(bad)
