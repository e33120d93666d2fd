"""The one source of time. Tests replace it with a clock they can move."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> int:
        """Current Unix time in whole seconds."""
        ...


class SystemClock:
    def now(self) -> int:
        return int(time.time())


class MovableClock:
    """A clock that stands still until told to move."""

    def __init__(self, start: int = 1_800_000_000) -> None:
        self._now = start

    def now(self) -> int:
        return self._now

    def advance(self, seconds: int) -> None:
        self._now += seconds

    def set(self, value: int) -> None:
        self._now = value
