"""Overlapping pauses of a user, a subscription and the application: whatever order they start
and end in, a grant gets back exactly the time its clock was stopped, once."""

from __future__ import annotations

import itertools

import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.helpers import Seller

pytestmark = pytest.mark.anyio

LEVELS = {
    "user": ("pauseuser", "unpauseuser", {"username": "pia"}),
    "subscription": ("pausesub", "unpausesub", {"subscription": "default"}),
    "app": ("pauseapp", "unpauseapp", {}),
}


async def expiry(services: Services) -> int:
    value: int = await services.db.fetch_value("SELECT expires_at FROM user_subscriptions")
    return value


# Each plan: (level, pause time, unpause time); the grant's clock is stopped on the union of the
# intervals, which is what it must get back.
PLANS = [
    [("user", 10, 100), ("app", 50, 200)],
    [("app", 10, 100), ("user", 50, 80)],
    [("user", 10, 100), ("app", 50, 80)],
    [("app", 10, 80), ("user", 50, 100)],
    [("subscription", 10, 100), ("app", 50, 200)],
    [("app", 10, 100), ("subscription", 50, 80)],
    [("subscription", 10, 60), ("app", 20, 30)],
    [("user", 10, 300), ("subscription", 20, 100), ("app", 30, 200)],
    [("user", 5, 150), ("app", 40, 120), ("subscription", 60, 90)],
    [("app", 5, 150), ("user", 40, 120), ("subscription", 60, 200)],
]


def stopped_seconds(plan: list[tuple[str, int, int]]) -> int:
    stopped: set[int] = set()
    for _, start, end in plan:
        stopped.update(range(start, end))
    return len(stopped)


@pytest.mark.parametrize(
    "plan", PLANS, ids=[" ".join(f"{level}[{a},{b})" for level, a, b in p) for p in PLANS]
)
async def test_every_stopped_second_is_given_back_once(
    seller: Seller, services: Services, clock: MovableClock, plan: list[tuple[str, int, int]]
) -> None:
    start = clock.now()
    await seller.ok("adduser", user="pia", sub="default", expiry=1)
    initial = await expiry(services)
    events = sorted(
        itertools.chain.from_iterable(
            [(a, 1, level, "pause"), (b, 0, level, "unpause")] for level, a, b in plan
        )
    )
    for at, _, level, what in events:
        clock.set(start + at)
        pause, unpause, params = LEVELS[level]
        await seller.ok(pause if what == "pause" else unpause, **params)
    assert await expiry(services) == initial + stopped_seconds(plan)
