"""A value per application kept in each worker's memory while `invalidation` is sure to hear of
changes (read through to the database otherwise): an application's custom messages, whether it
has entitlements. A change is seen at once by the worker that made it and, as soon as the
announcement arrives, by every other (`changed`); an entry is never kept longer than BACKSTOP."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from licensegate.invalidation import BACKSTOP, Invalidation
from licensegate.store.database import Executor

T = TypeVar("T")
MAX_ENTRIES = 10_000


class AppCache(Generic[T]):
    def __init__(
        self,
        invalidation: Invalidation,
        topic: str,
        load: Callable[[Executor, int], Awaitable[T]],
        keep: float = BACKSTOP,
    ) -> None:
        self._invalidation = invalidation
        self._topic = topic
        self._load = load
        self._keep = keep
        self._entries: dict[int, tuple[float, T]] = {}
        self._forgotten = 0  # counts forgets, so a read that raced one is not kept
        invalidation.register(topic, self._forget)

    def _forget(self, app_id: int | None) -> None:
        self._forgotten += 1
        if app_id is None:
            self._entries.clear()
        else:
            self._entries.pop(app_id, None)

    def kept(self, app_id: int) -> tuple[float, T] | None:
        """The application's entry (until, value) when it may be used now, without the database
        and without an await (the client API's hot path asks several caches at every call)."""
        if not self._invalidation.trusted():
            return None
        entry = self._entries.get(app_id)
        if entry is not None and entry[0] > time.monotonic():
            return entry
        return None

    async def get(self, db: Executor, app_id: int) -> T:
        if not self._invalidation.trusted():
            return await self._load(db, app_id)
        now = time.monotonic()
        entry = self._entries.get(app_id)
        if entry is not None and entry[0] > now:
            return entry[1]
        forgotten = self._forgotten
        value = await self._load(db, app_id)
        if forgotten == self._forgotten:  # no change was announced while reading
            if len(self._entries) > MAX_ENTRIES:
                self._entries.clear()
            self._entries[app_id] = (now + self._keep, value)
        return value

    async def changed(self, app_id: int) -> None:
        """The application's value changed (committed): forget it here and everywhere."""
        await self._invalidation.changed(self._topic, app_id)
