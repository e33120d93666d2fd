"""Pacing requests to KeyAuth's seller API: at most `requests` in any `seconds` (KeyAuth documents
30 in 30 s and answers a breach with a long block), and waiting out a 429 as its Retry-After asks.

Time and sleeping are passed in, so the rules are tested without waiting."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Sleep = Callable[[float], Awaitable[None]]
Monotonic = Callable[[], float]

# KeyAuth's documented limit for its cloud API: 30 requests within 30 seconds.
DEFAULT_PACE = "30/30"
# Waiting after a 429 that names no Retry-After: start at one window, double, stop at 10 minutes.
MAX_BACKOFF = 600.0


@dataclass(frozen=True, slots=True)
class Pace:
    requests: int
    seconds: float

    def __str__(self) -> str:
        return f"{self.requests}/{self.seconds:g}"


def parse_pace(text: str) -> Pace:
    """`N/S`: at most N requests in any S seconds (N >= 1, S >= 0; S = 0 means unpaced)."""
    count, slash, window = text.strip().partition("/")
    try:
        pace = Pace(int(count), float(window if slash else "1"))
    except ValueError:
        raise ValueError(f"--pace must look like 30/30 (requests/seconds), not {text!r}") from None
    if pace.requests < 1 or pace.seconds < 0:
        raise ValueError(f"--pace must allow at least 1 request in 0 or more seconds, not {text!r}")
    return pace


class Pacer:
    """A sliding window: a request waits until fewer than `requests` were sent in the last
    `seconds`."""

    def __init__(
        self, pace: Pace, *, sleep: Sleep = asyncio.sleep, monotonic: Monotonic = time.monotonic
    ) -> None:
        self.pace = pace
        self._sleep = sleep
        self._monotonic = monotonic
        self._sent: deque[float] = deque()

    async def wait_turn(self) -> None:
        if self.pace.seconds > 0 and len(self._sent) >= self.pace.requests:
            ready = self._sent[0] + self.pace.seconds
            delay = ready - self._monotonic()
            if delay > 0:
                await self._sleep(delay)
        self._sent.append(self._monotonic())
        while len(self._sent) > self.pace.requests:
            self._sent.popleft()

    async def back_off(self, retry_after: str | None, attempt: int) -> float:
        """Wait after a 429: what Retry-After asks (seconds or an HTTP date), else one window
        doubled per attempt. Returns the seconds waited. The window starts again afterwards."""
        delay = retry_after_seconds(retry_after, time.time())
        if delay is None:
            delay = min(MAX_BACKOFF, max(self.pace.seconds, 1.0) * 2 ** (attempt - 1))
        if delay > 0:
            await self._sleep(delay)
        self._sent.clear()
        return delay


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds a Retry-After header asks for (delta-seconds or an HTTP date), None when absent or
    unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)
