"""Which license keys this worker has seen used: a hint that picks a License Login's path on
PostgreSQL, never a decision.

A session's first License Login with a key that is still unused is best done in one statement
that reads the key and uses it (`store.logins.key_or_first_use`); with a key already used (every
start of a program but the first) that statement costs the database about five times what reading
the key costs (0.29 against 0.06 ms, bench with pg_stat_statements). A key, once used, stays used
(deleting its user leaves it used), so a key this worker saw used takes the plain read. A wrong
hint only picks the longer path: that path reads the key and decides on what it finds, so a key
marked used that is not (a database restored from a backup) is still redeemed, once.

The keys are held as 16-byte digests, not as the keys themselves, and at most `size` of them
(the oldest forgotten first).
"""

from __future__ import annotations

import hashlib

DEFAULT_SIZE = 100_000  # about 12 MB at most per worker


class UsedKeys:
    """A bounded set of (application, key) this worker has seen used."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._seen: dict[bytes, None] = {}
        self._size = size

    @staticmethod
    def _digest(app_id: int, key: str) -> bytes:
        return hashlib.blake2b(f"{app_id}:{key}".encode(), digest_size=16).digest()

    def __contains__(self, app_and_key: tuple[int, str]) -> bool:
        return self._digest(*app_and_key) in self._seen

    def __len__(self) -> int:
        return len(self._seen)

    def add(self, app_id: int, key: str) -> None:
        if self._size <= 0:
            return
        digest = self._digest(app_id, key)
        if digest in self._seen:
            return
        if len(self._seen) >= self._size:
            del self._seen[next(iter(self._seen))]  # the oldest
        self._seen[digest] = None
