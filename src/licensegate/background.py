"""Work done after a response, never slowing it: each job runs as an asyncio task of the worker
process, retried after the given delays when an attempt fails (log forwarding, say).

The holder keeps a reference to every task it started (the event loop keeps only weak ones), caps
how many may wait at once, and `drain`s them at shutdown. A job lives in one process only: if the
process stops before `drain` lets it finish, the job is lost, which suits best-effort work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

log = logging.getLogger("licensegate.background")

RETRY_DELAYS = (0.0, 2.0, 10.0)  # the first attempt at once, then after 2 s and 10 s more
MAX_PENDING = 1000
DRAIN_SECONDS = 15.0

Attempt = Callable[[], Awaitable[None]]


class AttemptFailed(Exception):
    """An attempt did not succeed; its text is safe to log (no URL, no secret)."""


class Background:
    def __init__(self, max_pending: int = MAX_PENDING) -> None:
        self._max_pending = max_pending
        self._pending: set[asyncio.Task[None]] = set()
        # How jobs went, for the metrics: done, failed (an attempt), given_up, dropped.
        self.outcomes: dict[str, int] = {"done": 0, "failed": 0, "given_up": 0, "dropped": 0}

    @property
    def pending(self) -> int:
        return len(self._pending)

    def run_later(self, attempt: Attempt, *, what: str, delays: Sequence[float] = RETRY_DELAYS) -> bool:
        """Start `attempt()` in the background, again after each further delay while it fails
        (raises). `what` names the job in log lines; it must hold no secret. Returns False (and
        logs it) when too many jobs are waiting already: the job is dropped, not queued."""
        if len(self._pending) >= self._max_pending:
            log.warning("dropped %s: %d background jobs are waiting already", what, len(self._pending))
            self.outcomes["dropped"] += 1
            return False
        task = asyncio.get_running_loop().create_task(self._run(attempt, what, tuple(delays)))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return True

    async def _run(self, attempt: Attempt, what: str, delays: tuple[float, ...]) -> None:
        for number, delay in enumerate(delays, start=1):
            if delay:
                await asyncio.sleep(delay)
            try:
                await attempt()
                self.outcomes["done"] += 1
                return
            except AttemptFailed as exc:
                reason = str(exc)
            except Exception as exc:  # a fault in the job: its text might hold a URL, so not shown
                reason = f"unexpected {type(exc).__name__}"
            log.warning("%s failed (attempt %d of %d): %s", what, number, len(delays), reason)
            self.outcomes["failed"] += 1
        self.outcomes["given_up"] += 1
        log.error("gave up on %s after %d attempts", what, len(delays))

    async def drain(self, within: float = DRAIN_SECONDS) -> None:
        """Wait up to `within` seconds for the jobs under way (at shutdown, and in tests), then
        cancel what is left."""
        if not self._pending:
            return
        _, unfinished = await asyncio.wait(set(self._pending), timeout=within)
        if unfinished:
            log.warning("cancelled %d background jobs still unfinished at shutdown", len(unfinished))
            for task in unfinished:
                task.cancel()
            await asyncio.gather(*unfinished, return_exceptions=True)
