"""Telling every worker process, on every machine, that a cached value changed.

A worker keeps a few things in memory (an application's custom messages, `domain/messages.py`).
When one of them changes, the worker that changed it calls `Invalidation.changed(topic, key)`
after the change is committed: its own copy is dropped at once, and every other worker is told:

- PostgreSQL with Redis (`LICENSEGATE_REDIS_URL`): Redis pub/sub on `<prefix>:invalidate`.
- PostgreSQL without Redis: `NOTIFY licensegate_invalidate`; each worker `LISTEN`s on a connection
  of its own (not one of the pool's).
- SQLite (one machine): a counter in a small shared file beside the database
  (`<database>.generation`), mapped into every worker's memory; a change increments it, and a
  worker that sees it moved drops everything it cached (reading it costs nanoseconds).

A worker trusts its cache only while it is sure to hear of changes: until its subscription is
confirmed, and whenever the connection carrying it is lost, it reads through to the database
(and drops everything cached) until it has subscribed again. A change whose announcement is lost
on the way (the announcing worker died between its commit and the announcement, or could not
reach Redis) is still seen within `BACKSTOP` seconds, the longest any entry is kept.

Held sessions (domain/recheck.py) are told otherwise on PostgreSQL: the database itself announces
each change of their login data (`LoginNotify`, on a LISTEN connection of its own, Redis or not),
and the workers of one machine share a counter of the machine's committed login changes
(`SharedCounter`, the same kind of file as SQLite's counter, in the data folder).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import mmap
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from licensegate.store.database import Database, DatabaseUnavailable, dialect_of, postgres_dsn, sqlite_path

log = logging.getLogger("licensegate.invalidation")

BACKSTOP = 60.0  # seconds a cached value is kept at most, whatever is heard
CHANNEL = "licensegate_invalidate"  # PostgreSQL's channel; Redis's is "<prefix>:invalidate"
RETRY = 1.0  # seconds between attempts to subscribe again after a lost connection

Forget = Callable[[int | None], None]  # drop one key's entry (None: every entry)


class Invalidation(Protocol):
    def register(self, topic: str, forget: Forget) -> None:
        """Call `forget` when `topic` changes anywhere (with its key), or everything must go."""
        ...

    def trusted(self) -> bool:
        """Whether cached values may be used now (changes elsewhere would be heard)."""
        ...

    async def changed(self, topic: str, key: int) -> None:
        """A committed change: forget it here and tell every other worker."""
        ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class _Topics:
    """The caches registered in this worker, by topic."""

    def __init__(self) -> None:
        self._forgets: dict[str, list[Forget]] = {}

    def register(self, topic: str, forget: Forget) -> None:
        self._forgets.setdefault(topic, []).append(forget)

    def forget(self, topic: str, key: int | None) -> None:
        for forget in self._forgets.get(topic, ()):
            forget(key)

    def forget_everything(self) -> None:
        for forgets in self._forgets.values():
            for forget in forgets:
                forget(None)

    def heard(self, payload: str) -> None:
        """A message `<topic>:<key>` from another worker (anything else is ignored)."""
        topic, _, key = payload.partition(":")
        if key.isdigit():
            self.forget(topic, int(key))


# --- SQLite: one machine, a shared counter ---------------------------------------------------------

_COUNTER = struct.Struct("<Q")


class SharedCounter:
    """A counter in a small file every process of this machine maps into memory: reading it costs
    nanoseconds, an increment a lock held for nanoseconds."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._map: mmap.mmap | None = None
        self._fd: int | None = None

    def open(self) -> bool:
        """Map the file (made if missing); False, with a warning, where it cannot be."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:  # a read-only folder (a full disk): nothing is cached
            log.warning("cannot open %s (%s): nothing is cached in this worker", self.path, exc)
            return False
        try:
            # Blocks really allocated (not a hole): touching a mapped hole on a full disk would
            # kill the process with SIGBUS, where this fails with ENOSPC.
            os.posix_fallocate(fd, 0, mmap.PAGESIZE)
            self._map = mmap.mmap(fd, mmap.PAGESIZE)
        except OSError as exc:
            os.close(fd)
            log.warning("cannot map %s (%s): nothing is cached in this worker", self.path, exc)
            return False
        self._fd = fd
        return True

    def value(self) -> int:
        """The count (-1: not open)."""
        if self._map is None:
            return -1
        value: int = _COUNTER.unpack_from(self._map, 0)[0]
        return value

    def increment(self) -> None:
        if self._map is None or self._fd is None:
            return
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # increments are not lost (the lock is held for nanoseconds)
        try:
            _COUNTER.pack_into(self._map, 0, self.value() + 1)
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class FileCounter(_Topics):
    """A generation counter in a file every worker of this machine maps into memory."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._counter = SharedCounter(path)
        self._seen = 0

    async def start(self) -> None:
        if self._counter.open():
            self._seen = self._counter.value()

    def trusted(self) -> bool:
        current = self._counter.value()
        if current < 0:
            return False
        if current != self._seen:
            self._seen = current
            self.forget_everything()
        return True

    async def changed(self, topic: str, key: int) -> None:
        self.forget(topic, key)
        self._counter.increment()

    async def close(self) -> None:
        self._counter.close()


# --- many machines: a subscription that may be lost ------------------------------------------------


class _Subscribed(_Topics):
    """A listener that keeps itself subscribed; the cache is trusted only while it is."""

    what = "the invalidation channel"

    def __init__(self) -> None:
        super().__init__()
        self._subscribed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    def trusted(self) -> bool:
        return self._subscribed.is_set()

    def _lost(self, reason: str) -> None:
        if self._subscribed.is_set():
            log.warning("lost %s (%s): reading through to the database until it is back", self.what, reason)
        self._subscribed.clear()
        self.forget_everything()

    def _confirmed(self) -> None:
        self.forget_everything()  # whatever changed while we were not listening
        self._subscribed.set()

    async def start(self, wait: float = 2.0) -> None:
        """Start listening; wait up to `wait` seconds for the first subscription (a worker serves
        either way, reading through to the database until it is subscribed)."""
        self._task = asyncio.create_task(self._keep_listening())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._subscribed.wait(), wait)

    async def _keep_listening(self) -> None:
        while not self._closing:
            try:
                await self._listen()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._lost(str(exc) or type(exc).__name__)
            else:
                self._lost("the connection ended")
            if not self._closing:
                await asyncio.sleep(RETRY)

    async def _listen(self) -> None:
        """Subscribe, call `_confirmed`, then pass every message to `heard` until the connection
        fails (raise) or ends (return)."""
        raise NotImplementedError

    async def close(self) -> None:
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._subscribed.clear()


class _PostgresListen(_Subscribed):
    """LISTEN to one channel on a connection of this worker's own (not one of the pool's)."""

    what = "PostgreSQL's LISTEN connection"
    channel = CHANNEL

    def __init__(self, dsn: str, timeout: float) -> None:
        super().__init__()
        self._dsn = dsn
        self._timeout = timeout
        self.backend_pid: int | None = None  # the listening connection's server process (diagnostics)

    async def _listen(self) -> None:
        import asyncpg

        ended = asyncio.get_running_loop().create_future()

        def on_notify(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
            self.heard(payload)

        def on_end(_conn: Any) -> None:
            if not ended.done():
                ended.set_result(None)

        conn = await asyncpg.connect(self._dsn, timeout=self._timeout)
        self.backend_pid = conn.get_server_pid()
        try:
            conn.add_termination_listener(on_end)
            await conn.add_listener(self.channel, on_notify)
            self._confirmed()
            # A connection cut without a FIN is found by a query that does not answer.
            while not ended.done():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(ended), timeout=5.0)
                if not ended.done():
                    await conn.fetchval("SELECT 1", timeout=self._timeout)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), timeout=self._timeout)


class PostgresNotify(_PostgresListen):
    """LISTEN on a connection of this worker's own; NOTIFY through the pool."""

    def __init__(self, dsn: str, db: Database, timeout: float) -> None:
        super().__init__(dsn, timeout)
        self._db = db

    async def changed(self, topic: str, key: int) -> None:
        self.forget(topic, key)
        try:
            await self._db.execute("SELECT pg_notify(?, ?)", CHANNEL, f"{topic}:{key}")
        except DatabaseUnavailable as exc:  # the change is committed: say so, do not fail it
            _not_told(topic, key, exc)


# --- PostgreSQL: what the database announces of login changes -------------------------------------

LOGIN_CHANNEL = "licensegate_login"  # migration 0060's triggers: `a<id>`, `u<id>`, `s<session>`, `*`
MAX_HEARD = 100_000  # applications, users and sessions remembered as changed; beyond: everything


class LoginNotify(_PostgresListen):
    """When a worker may trust what it holds of a session without reading its login versions
    (domain/recheck.py, notify mode, PostgreSQL only).

    The database announces every moved login version and every deleted application, user or
    session (migration 0060); this worker counts what it hears (`generation`) and remembers, per
    application, user and session, the generation it last heard of a change. A holder takes a
    `stamp()` before it reads the versions it trusts; later, the entry is `unchanged` while this
    worker is subscribed, nothing it depends on was heard of since the stamp, and no statement
    that may change a login was committed on this machine since (`writes`, a counter in a file
    shared by the machine's workers, which the PostgreSQL adapter increments before the answer
    that follows the commit goes out). So a change made through this machine is seen by its next
    call at once; one made elsewhere once its announcement arrives (measured: bench/login_notify.py,
    docs/design.md). Losing the connection trusts nothing until subscribed again; subscribing
    again moves the generation past every stamp taken before it, so everything is read again."""

    what = "PostgreSQL's LISTEN connection for login changes"
    channel = LOGIN_CHANNEL

    def __init__(self, dsn: str, timeout: float, writes: SharedCounter) -> None:
        super().__init__(dsn, timeout)
        self.writes = writes
        self.generation = 0
        self._everything_at = 0
        self._apps: dict[int, int] = {}
        self._users: dict[int, int] = {}
        self._sessions: dict[str, int] = {}

    def stamp(self) -> tuple[int, int]:
        """What to keep with versions about to be read: (generation, this machine's writes)."""
        return self.generation, self.writes.value()

    def unchanged(self, heard: int, writes: int, app_id: int, user_id: int, session_id: str) -> bool:
        """Whether versions read after `stamp()` returned (heard, writes) are still those of the
        database for this application, user and session."""
        if writes < 0 or writes != self.writes.value() or not self._subscribed.is_set():
            return False
        if heard == self.generation:
            return True
        return (
            heard >= self._everything_at
            and self._apps.get(app_id, 0) <= heard
            and self._users.get(user_id, 0) <= heard
            and self._sessions.get(session_id, 0) <= heard
        )

    def session_changed_at(self, session_id: str) -> int:
        """The generation a change of this session was last heard at (0: none remembered)."""
        return self._sessions.get(session_id, 0)

    def heard(self, payload: str) -> None:
        self.generation += 1
        kind, key = payload[:1], payload[1:]
        if kind == "a" and key.isdigit():
            self._apps[int(key)] = self.generation
        elif kind == "u" and key.isdigit():
            self._users[int(key)] = self.generation
        elif kind == "s" and key:
            self._sessions[key] = self.generation
        else:  # `*`, or a payload this version does not know: anything may have changed
            self._everything()
            return
        if len(self._apps) + len(self._users) + len(self._sessions) > MAX_HEARD:
            self._everything()

    def _everything(self) -> None:
        self._everything_at = self.generation
        self._apps.clear()
        self._users.clear()
        self._sessions.clear()

    def _confirmed(self) -> None:
        self.generation += 1  # whatever changed while we were not listening
        self._everything()
        super()._confirmed()

    async def start(self, wait: float = 2.0) -> None:
        if self.writes.value() < 0:
            self.writes.open()
        await super().start(wait)

    async def close(self) -> None:
        await super().close()
        self.writes.close()


class RedisPubSub(_Subscribed):
    what = "the Redis invalidation subscription"

    def __init__(self, url: str, prefix: str, timeout: float) -> None:
        super().__init__()
        import redis.asyncio as redis

        self._channel = f"{prefix}:invalidate"
        self._timeout = timeout
        self._redis: Any = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
        )
        self._listener: Any = redis.Redis.from_url(
            url, socket_connect_timeout=timeout, decode_responses=True, health_check_interval=5
        )

    async def _listen(self) -> None:
        pubsub = self._listener.pubsub()
        try:
            await pubsub.subscribe(self._channel)
            while True:
                message = await pubsub.get_message(timeout=5.0)
                if message is None:
                    await pubsub.ping()  # a connection cut without a FIN fails here
                    continue
                if message["type"] == "subscribe":
                    self._confirmed()
                elif message["type"] == "message":
                    self.heard(str(message["data"]))
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def changed(self, topic: str, key: int) -> None:
        self.forget(topic, key)
        try:
            await self._redis.publish(self._channel, f"{topic}:{key}")
        except Exception as exc:
            _not_told(topic, key, exc)

    async def close(self) -> None:
        await super().close()
        for client in (self._redis, self._listener):
            with contextlib.suppress(Exception):
                await client.aclose()


def _not_told(topic: str, key: int, exc: Exception) -> None:
    log.warning(
        "cannot tell other workers that %s %d changed (%s); they see it within %g s",
        topic,
        key,
        exc,
        BACKSTOP,
    )


def open_invalidation(
    database_url: str,
    db: Database,
    *,
    redis_url: str | None,
    redis_prefix: str,
    redis_timeout: float,
    pg_timeout: float,
) -> Invalidation:
    """SQLite: the shared counter. PostgreSQL: Redis pub/sub when Redis is configured, else
    LISTEN/NOTIFY."""
    if dialect_of(database_url) == "sqlite":
        return FileCounter(Path(sqlite_path(database_url) + ".generation"))
    if redis_url:
        return RedisPubSub(redis_url, redis_prefix, redis_timeout)
    return PostgresNotify(postgres_dsn(database_url), db, pg_timeout)
