"""argon2id password hashing, off the event loop on a small thread pool.

Verifying takes tens of milliseconds by design, so it must never run on the loop (it would stall
every other request of the worker) nor inside a database transaction.
"""

from __future__ import annotations

import asyncio
import secrets
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError


class Passwords:
    def __init__(self, time_cost: int, memory_kib: int, parallelism: int, threads: int) -> None:
        self._hasher = PasswordHasher(
            time_cost=time_cost,
            memory_cost=memory_kib,
            parallelism=parallelism,
            type=Type.ID,
        )
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="argon2")
        self._dummy: str | None = None

    @property
    def dummy_hash(self) -> str:
        """A hash of nothing anyone knows, verified when a username does not exist, so that
        answer takes as long as a wrong password's."""
        if self._dummy is None:
            self._dummy = self._hasher.hash(secrets.token_hex(16))
        return self._dummy

    async def hash(self, password: str) -> str:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._hasher.hash, password)

    async def verify(self, stored_hash: str, password: str) -> bool:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._verify, stored_hash, password)

    def _verify(self, stored_hash: str, password: str) -> bool:
        try:
            return self._hasher.verify(stored_hash, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
