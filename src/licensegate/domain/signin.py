"""Signing in to the dashboard: the password, then (when the account has one) the second factor.

Every failure reads the same ("wrong username or password"), whatever the reason: no such
account, a wrong password, an account disabled or without a password, so an answer never tells
whether a username exists; an unknown username costs the same argon2 work as a wrong password.
Attempts are counted per username and per address, so neither guessing one account's password
from many addresses nor many accounts' from one address gets far.
"""

from __future__ import annotations

from dataclasses import dataclass

from licensegate.domain import errorcodes
from licensegate.domain.accounts import Account, from_row
from licensegate.domain.errors import RateLimited
from licensegate.passwords import Passwords
from licensegate.ratelimit import RateLimiter
from licensegate.store import accounts as store
from licensegate.store.database import Executor

FAILED = errorcodes.SIGNIN_FAILED.message
WRONG_CODE = errorcodes.WRONG_CODE.message


@dataclass(frozen=True, slots=True)
class Throttle:
    per_account: int
    per_address: int
    window: int

    async def count(self, limiter: RateLimiter, account_key: str, ip: str | None) -> None:
        """Count one attempt; refuse when the account or the address has had too many."""
        waits = [await limiter.hit(f"dashboard-signin:{account_key}", self.per_account, self.window)]
        if ip:
            waits.append(await limiter.hit(f"dashboard-signin-ip:{ip}", self.per_address, self.window))
        wait = max(waits)
        if wait:
            minutes = max(1, (wait + 59) // 60)
            raise RateLimited(wait, f"Too many sign-in attempts. Wait {minutes} minute(s) and try again.")


async def check_password(
    db: Executor,
    passwords: Passwords,
    limiter: RateLimiter,
    throttle: Throttle,
    *,
    username: str,
    password: str,
    ip: str | None,
) -> Account:
    username = username.strip()
    await throttle.count(limiter, "user:" + username.lower(), ip)
    row = await store.find_for_signin(db, username) if 0 < len(username) <= 64 else None
    stored = row["password_hash"] if row is not None else None
    matches = await passwords.verify(stored or passwords.dummy_hash, password[:1024])
    account = from_row(row) if row is not None and stored is not None and matches else None
    if account is None:
        raise errorcodes.SIGNIN_FAILED()
    return account


async def count_code_attempt(
    limiter: RateLimiter, throttle: Throttle, account: Account, ip: str | None
) -> None:
    """Second-factor codes are guessable (a million TOTP codes), so they are throttled as
    passwords are, per account and per address."""
    await throttle.count(limiter, f"account:{account.id}", ip)


async def signed_in(db: Executor, account: Account, now: int) -> None:
    await store.signed_in(db, account.id, now)
