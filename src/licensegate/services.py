"""Everything a request handler needs, opened once per worker process."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path

from licensegate import keyring
from licensegate.appcache import AppCache
from licensegate.background import Background
from licensegate.clock import Clock, SystemClock
from licensegate.config import Settings
from licensegate.domain import credits, entitlements, events, namedlimits
from licensegate.domain.appkeys import DEPLOYMENT_COPY, Signers
from licensegate.domain.filestore import FileStore, open_file_store
from licensegate.domain.logins import KnownLogin
from licensegate.domain.messages import MessageCache
from licensegate.domain.openedapps import OpenedApps
from licensegate.domain.overview import LoginTally
from licensegate.domain.recheck import Rechecks
from licensegate.domain.usedkeys import UsedKeys
from licensegate.invalidation import Invalidation, LoginNotify, SharedCounter, open_invalidation
from licensegate.mailer import Mailer
from licensegate.passwords import Passwords
from licensegate.ratelimit import RateLimiter, open_rate_limiter
from licensegate.secretbox import SecretBox
from licensegate.store.database import Database, dialect_of, open_database, postgres_dsn

log = logging.getLogger("licensegate")

LOGIN_WRITES = "login-writes.counter"  # in the data folder: this machine's committed login changes


@dataclass
class Services:
    settings: Settings
    db: Database
    clock: Clock
    limiter: RateLimiter
    passwords: Passwords
    messages: MessageCache
    entitled: AppCache[bool]  # whether an application has entitlements (domain.entitlements.app_cache)
    credited: AppCache[bool]  # whether an application has credit balances (domain.credits.app_cache)
    named_limits: AppCache[namedlimits.AppLimits]  # an application's named rate limits (domain.namedlimits)
    event_wants: AppCache[frozenset[str]]  # login-path events an application wants (domain.events)
    rechecks: Rechecks[KnownLogin]  # the logged-in sessions this worker holds (domain.recheck)
    opened_apps: OpenedApps  # the applications `init` opens sessions for (domain.openedapps)
    first_use_wants: AppCache[frozenset[str]]  # a first use's events it wants (a hint: domain.logins)
    used_keys: UsedKeys  # the license keys this worker saw used (a hint: domain.usedkeys)
    invalidation: Invalidation  # tells every worker on every machine that a cached value changed
    files: FileStore  # file content: a folder (shared or not) or the database
    mailer: Mailer
    background: Background  # work done after a response (log forwarding)
    secrets: SecretBox  # seals and opens secrets at rest under the deployment key
    signers: Signers  # signs client answers (keys decrypted once per worker)
    logins: LoginTally = field(default_factory=LoginTally)  # logins counted, not yet written
    login_notify: LoginNotify | None = None  # PostgreSQL, notify mode: what vouches for held sessions
    credits_spent: int = 0  # credits this worker's `spend` calls took (for /metrics)
    # Client calls this worker's named rate limits refused, by owner (user, key), for /metrics.
    named_limit_refusals: dict[str, int] = field(default_factory=lambda: {"user": 0, "key": 0})

    @classmethod
    async def open(cls, settings: Settings, clock: Clock | None = None) -> Services:
        clock = clock or SystemClock()
        box = open_secretbox(settings)
        writes = None
        if (
            dialect_of(settings.database_url) == "postgresql"
            and settings.recheck_confirm == "notify"
            and settings.recheck_sessions > 0
        ):
            writes = SharedCounter(Path(settings.data_dir) / LOGIN_WRITES)
            writes.open()
        db = await open_database(
            settings.database_url,
            pool_size=settings.pg_pool_size,
            wal_bytes=settings.sqlite_wal_bytes,
            answer_timeout=settings.pg_timeout,
            statement_timeout=settings.pg_statement_timeout,
            login_writes=None if writes is None else writes.increment,
        )
        invalidation = open_invalidation(
            settings.database_url,
            db,
            redis_url=settings.redis_url,
            redis_prefix=settings.redis_prefix,
            redis_timeout=settings.redis_timeout_ms / 1000,
            pg_timeout=settings.pg_timeout,
        )
        notify = None
        if writes is None:
            await invalidation.start()
        else:  # both wait for their first subscription, at the same time
            notify = LoginNotify(postgres_dsn(settings.database_url), settings.pg_timeout, writes)
            await asyncio.gather(invalidation.start(), notify.start())
        return cls(
            settings=settings,
            db=db,
            clock=clock,
            limiter=open_rate_limiter(
                settings.redis_url,
                clock,
                settings.workers,
                settings.redis_prefix,
                redis_timeout=settings.redis_timeout_ms / 1000,
                redis_retry=settings.redis_retry,
            ),
            passwords=Passwords(
                settings.argon2_time_cost,
                settings.argon2_memory_kib,
                settings.argon2_parallelism,
                settings.password_threads,
                queue_limit=settings.password_queue,
            ),
            messages=MessageCache(invalidation),
            entitled=entitlements.app_cache(invalidation),
            credited=credits.app_cache(invalidation),
            named_limits=namedlimits.app_cache(invalidation),
            event_wants=events.login_cache(invalidation),
            rechecks=Rechecks(settings.recheck_sessions, notify=notify),
            opened_apps=OpenedApps(),
            login_notify=notify,
            first_use_wants=events.first_use_cache(invalidation),
            used_keys=UsedKeys(),
            invalidation=invalidation,
            files=open_file_store(db, clock, settings.data_dir, settings.files_dir),
            mailer=Mailer(settings),
            background=Background(),
            secrets=box,
            signers=Signers(box, Path(settings.data_dir) / DEPLOYMENT_COPY),
        )

    async def close(self) -> None:
        # Work still under way after responses gets one shared grace period, then is dropped.
        drain = self.settings.shutdown_drain
        await asyncio.gather(self.mailer.drain(drain), self.background.drain(drain))
        try:
            await self.logins.flush(self.db)
        except Exception:
            log.exception("the logins counted since the last write are lost (shutting down)")
        await self.limiter.close()
        await self.invalidation.close()
        if self.login_notify is not None:
            await self.login_notify.close()
        await self.db.close()
        self.passwords.close()


def open_secretbox(settings: Settings) -> SecretBox:
    """The deployment key from configuration, or the data folder's key file (made if missing)."""
    return SecretBox(keyring.load(settings.data_dir, settings.deployment_key, settings.deployment_old_keys))
