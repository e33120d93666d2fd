"""argon2id password hashing, off the event loop on a small thread pool, shared fairly; and the
check of the bcrypt hashes users imported from KeyAuth bring, until they are re-hashed.

Verifying takes tens of milliseconds by design, so it must never run on the loop (it would stall
every other request of the worker) nor inside a database transaction. The few threads are shared
by every application: when they are all busy, work waits in one queue per application and the
queues take turns, so a burst of logins at one application delays another's by about one check
per busy application, not by the whole burst. The line is bounded, and shared equally when full:
past the bound a login is refused at once (429 `busy` with Retry-After) instead of waiting
without end.
"""

from __future__ import annotations

import asyncio
import math
import re
import secrets
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import bcrypt
from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from licensegate.domain import errorcodes
from licensegate.domain.errors import RateLimited

T = TypeVar("T")

# KeyAuth's hashes (PHP's password_hash: `$2y$`, which is `$2b$` by another name), kept by users
# imported from it until their first successful check re-hashes them with argon2id.
BCRYPT_PREFIXES = ("$2y$", "$2a$", "$2b$")
# PHP's bcrypt reads at most 72 bytes of a password; so did KeyAuth when it made the hash.
_BCRYPT_MAX_BYTES = 72
_TAG = re.compile(r"<[^>]*(?:>|$)", re.DOTALL)  # a tag, or an unclosed one to the end, as strip_tags


def is_bcrypt(stored_hash: str) -> bool:
    return stored_hash.startswith(BCRYPT_PREFIXES)


def keyauth_cleaned(password: str) -> str:
    """The password as KeyAuth's input cleaning left it before hashing: trimmed, tags stripped."""
    return _TAG.sub("", password.strip(" \t\n\r\0\x0b"))


def _bcrypt_matches(stored_hash: str, password: str) -> bool:
    try:
        return bcrypt.checkpw(password.encode()[:_BCRYPT_MAX_BYTES], stored_hash.encode())
    except ValueError:  # not a hash bcrypt can read
        return False


def verify_bcrypt(stored_hash: str, password: str) -> bool:
    """A KeyAuth user's password against their bcrypt hash. KeyAuth hashed and checked the
    password after trimming it and stripping tags, so a password it accepted with extra spaces
    (or a tag) is accepted here too: the cleaned form is tried when it differs."""
    if _bcrypt_matches(stored_hash, password):
        return True
    cleaned = keyauth_cleaned(password)
    return cleaned != password and _bcrypt_matches(stored_hash, cleaned)


class Busy(RateLimited):
    """Every hashing thread is busy and the caller's queue (or all of them) is full."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after, errorcodes.BUSY.message)
        self.error = errorcodes.BUSY.code


class FairPool:
    """Runs blocking work on `threads` threads; waiting work is queued per key, and a thread that
    comes free takes the next job of the key served longest ago. At most `limit` jobs wait: when
    the line is full, a key with fewer waiting than the key with the most takes the place of that
    key's newest job, which is refused (`Busy`); otherwise the newcomer is refused. So one key
    alone may use the whole line, and under contention each gets an equal share of it. Used from
    one event loop (one worker process)."""

    def __init__(self, threads: int, limit: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="argon2")
        self.threads = threads
        self._limit = limit
        self._running = 0
        self._queued = 0
        self._queues: dict[Hashable, deque[asyncio.Future[None]]] = {}
        self._served: dict[Hashable, int] = {}  # key -> when (a count of jobs started) it last was
        self._started = 0
        self._seconds_per_job = 0.03  # a running average, for Retry-After

    @property
    def load(self) -> tuple[int, int]:
        """Jobs running on a thread, and jobs waiting for one."""
        return self._running, self._queued

    @property
    def in_flight(self) -> int:
        """Jobs running or waiting for a thread."""
        return self._running + self._queued

    async def run(self, key: Hashable, work: Callable[..., T], *args: object) -> T:
        await self._take_turn(key)
        started = time.perf_counter()
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, work, *args)
        finally:
            self._seconds_per_job += (time.perf_counter() - started - self._seconds_per_job) / 8
            self._pass_turn()

    async def _take_turn(self, key: Hashable) -> None:
        if self._running < self.threads and not self._queued:
            self._running += 1
            self._note_served(key)
            return
        queue = self._queues.get(key)
        if self._queued >= self._limit:
            self._make_room(len(queue) if queue is not None else 0)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(turn)
        self._queued += 1
        try:
            await turn  # `_pass_turn` hands over a running place
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._pass_turn()  # handed over just as this task was cancelled: pass it on
            elif turn in queue:
                queue.remove(turn)
                self._queued -= 1
                if not queue and self._queues.get(key) is queue:
                    del self._queues[key]
            raise

    def _make_room(self, mine: int) -> None:
        """The line is full: refuse the newest job of the key with the most waiting, if that key
        holds more than the caller would after joining; else refuse the caller."""
        largest = max(self._queues, key=lambda waiting: len(self._queues[waiting]))
        queue = self._queues[largest]
        if len(queue) <= mine + 1:
            raise Busy(self._retry_after())
        evicted = queue.pop()
        self._queued -= 1
        if not queue:
            del self._queues[largest]
        if not evicted.done():
            evicted.set_exception(Busy(self._retry_after()))

    def _pass_turn(self) -> None:
        """A running place came free: give it to the next job of the key served longest ago."""
        while self._queues:
            key = min(self._queues, key=lambda waiting: self._served.get(waiting, -1))
            queue = self._queues[key]
            turn = queue.popleft()
            self._queued -= 1
            if not queue:
                del self._queues[key]
            if not turn.cancelled():
                self._note_served(key)
                turn.set_result(None)
                return
        self._running -= 1

    def _note_served(self, key: Hashable) -> None:
        self._started += 1
        self._served[key] = self._started
        if len(self._served) > 4 * (self._limit + self.threads):  # forget keys no longer waiting
            self._served = {k: v for k, v in self._served.items() if k in self._queues or v == self._started}

    def _retry_after(self) -> int:
        return max(1, math.ceil(self.in_flight / self.threads * self._seconds_per_job))

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


class Passwords:
    def __init__(
        self,
        time_cost: int,
        memory_kib: int,
        parallelism: int,
        threads: int,
        *,
        queue_limit: int = 64,
    ) -> None:
        self._hasher = PasswordHasher(
            time_cost=time_cost,
            memory_cost=memory_kib,
            parallelism=parallelism,
            type=Type.ID,
        )
        self._pool = FairPool(threads, queue_limit)
        self._dummy: str | None = None

    @property
    def load(self) -> tuple[int, int]:
        """Checks running on a hashing thread, and checks waiting for one."""
        return self._pool.load

    @property
    def threads(self) -> int:
        return self._pool.threads

    @property
    def in_flight(self) -> int:
        """Hashes and checks running or waiting for a thread (the metrics)."""
        return self._pool.in_flight

    @property
    def dummy_hash(self) -> str:
        """A hash of nothing anyone knows, verified when a username does not exist, so that
        answer takes as long as a wrong password's."""
        if self._dummy is None:
            self._dummy = self._hasher.hash(secrets.token_hex(16))
        return self._dummy

    async def hash(self, password: str, *, queue: Hashable = None) -> str:
        """`queue`: whose share of the threads this counts against; callers acting for an
        application pass its id. Raises `Busy` when that queue or all of them are full."""
        return await self._pool.run(queue, self._hasher.hash, password)

    async def verify(self, stored_hash: str, password: str, *, queue: Hashable = None) -> bool:
        """argon2id, or a KeyAuth bcrypt hash (`is_bcrypt`): the caller re-hashes that one."""
        return await self._pool.run(queue, self._verify, stored_hash, password)

    def _verify(self, stored_hash: str, password: str) -> bool:
        if is_bcrypt(stored_hash):
            return verify_bcrypt(stored_hash, password)
        try:
            return self._hasher.verify(stored_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def close(self) -> None:
        self._pool.close()
