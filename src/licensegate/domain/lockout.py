"""Sign-in lock-out of an application's users (password Login), across addresses.

Wrong passwords in a row, from any address, lock the user's password sign-in for a while; each
further lock-out in a row lasts twice as long as the one before, up to a ceiling. Why it cannot be
used to keep the real user out for good:

- a lock-out always ends (at most `LICENSEGATE_LOGIN_LOCK_MAX`), and a right password afterwards
  clears the count and the doubling;
- during a lock-out, an attempt from one of the user's own HWIDs, or from the address of their
  last login, is still checked (and a right password clears the lock): an attacker elsewhere locks
  out only other attackers, never the user on their own machine;
- the application's owner lifts it at once (seller type `unlockuser`; `userdata` shows it).

An unknown username is refused the same way after as many failures (counted by the rate limiter),
so a lock-out does not tell an attacker that a username exists.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from licensegate.config import Settings
from licensegate.domain.errors import RateLimited
from licensegate.domain.messages import Messages
from licensegate.ratelimit import RateLimiter
from licensegate.store import logins as store
from licensegate.store.database import DatabaseUnavailable, Executor
from licensegate.store.logins import UserRow


@dataclass(frozen=True, slots=True)
class Policy:
    failures: int  # wrong passwords in a row that lock
    first: int  # seconds the first lock-out in a row lasts
    longest: int  # seconds no lock-out exceeds

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        return cls(settings.login_lock_failures, settings.login_lock_seconds, settings.login_lock_max)

    def duration(self, earlier: int) -> int:
        """How long a lock-out lasts after `earlier` lock-outs in a row."""
        return min(self.longest, self.first << min(earlier, 32))


@dataclass(frozen=True, slots=True)
class Guard:
    """What a password sign-in needs to count failures and refuse locked users."""

    policy: Policy
    limiter: RateLimiter

    async def refuse_locked(self, user: UserRow, own_device: bool, ip: str, msg: Messages, now: int) -> None:
        """Refuse (429 `rate_limited`, `Retry-After` to the lock's end) while the user is locked,
        unless the attempt comes from one of their devices (`own_device`: its HWID is one of
        theirs) or their last login's address."""
        until = user["locked_until"]
        if until is None or until <= now:
            return
        if own_device or (user["last_ip"] is not None and user["last_ip"] == ip):
            return
        raise RateLimited(until - now, msg("ratelimited"))

    async def failed(self, db: Executor, user: UserRow, now: int) -> None:
        """Count a wrong password; the one that reaches the policy's count locks the user. A
        database that can be read but not written (a full disk) still answers the wrong password
        as such; the count resumes when writes do."""
        with contextlib.suppress(DatabaseUnavailable):
            failures, lockouts = await store.count_failed_login(db, user["user_id"])
            if failures >= self.policy.failures:
                await store.lock(
                    db, user["user_id"], now + self.policy.duration(lockouts), self.policy.failures
                )

    async def succeeded(self, db: Executor, user: UserRow) -> None:
        """A right password: the count, the lock and the doubling start over."""
        if user["failed_logins"] or user["lockouts"] or user["locked_until"] is not None:
            await store.clear_lockout(db, user["user_id"])

    def _unknown(self, app_id: int, username: str) -> str:
        return f"login-unknown:{app_id}:{username}"

    async def refuse_unknown(self, app_id: int, username: str, msg: Messages) -> None:
        """An unknown username past as many failures is refused as a locked user would be."""
        retry_after = await self.limiter.peek(
            self._unknown(app_id, username), self.policy.failures, self.policy.first
        )
        if retry_after:
            raise RateLimited(retry_after, msg("ratelimited"))

    async def unknown_failed(self, app_id: int, username: str) -> None:
        await self.limiter.hit(self._unknown(app_id, username), self.policy.failures, self.policy.first)
