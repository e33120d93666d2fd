"""Signing in to the dashboard: the password, then (when the account has one) the second factor.

Every failure reads the same ("wrong username or password"), whatever the reason: no such
account, a wrong password, an account disabled or without a password, so an answer never tells
whether a username exists; an unknown username costs the same argon2 work as a wrong password.
Attempts are counted per username and per address, so neither guessing one account's password
from many addresses nor many accounts' from one address gets far.

Every attempt on an existing account is kept in its sign-in history (the newest 1,000), which
its owner reads on the account page: signed in, wrong password, wrong second step, locked out
(too many attempts), disabled. An unknown username has no history to write to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from licensegate.domain import errorcodes
from licensegate.domain.accounts import Account, from_row
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.passwords import Passwords
from licensegate.ratelimit import RateLimiter
from licensegate.store import accounts as store
from licensegate.store import signinhistory as history_store
from licensegate.store.database import Executor
from licensegate.store.signinhistory import Attempt

T = TypeVar("T")
FAILED = errorcodes.SIGNIN_FAILED.message
WRONG_CODE = errorcodes.WRONG_CODE.message


@dataclass(frozen=True, slots=True)
class Throttle:
    per_account: int
    per_address: int
    window: int

    async def count(self, limiter: RateLimiter, account_key: str, ip: str | None) -> None:
        """Count one attempt; refuse when the account or the address has had too many."""
        _refuse(
            max([await limiter.hit(key, limit, self.window) for key, limit in self._keys(account_key, ip)])
        )

    async def check(self, limiter: RateLimiter, account_key: str, ip: str | None) -> None:
        """Refuse, without counting, when the account or the address has no attempts left."""
        _refuse(
            max([await limiter.peek(key, limit, self.window) for key, limit in self._keys(account_key, ip)])
        )

    async def count_failure(self, limiter: RateLimiter, account_key: str, ip: str | None) -> None:
        """Count a failed attempt (its answer stays the failure's own)."""
        for key, limit in self._keys(account_key, ip):
            await limiter.hit(key, limit, self.window)

    def _keys(self, account_key: str, ip: str | None) -> list[tuple[str, int]]:
        keys = [(f"dashboard-signin:{account_key}", self.per_account)]
        if ip:
            keys.append((f"dashboard-signin-ip:{ip}", self.per_address))
        return keys


def _refuse(wait: int) -> None:
    if wait:
        minutes = max(1, (wait + 59) // 60)
        raise RateLimited(wait, f"Too many sign-in attempts. Wait {minutes} minute(s) and try again.")


# What an attempt's history row says, by its stored result.
RESULTS = {
    "signed_in": "Signed in",
    "wrong_password": "Wrong password",
    "wrong_code": "Wrong second step",
    "locked_out": "Locked out (too many attempts)",
    "disabled": "Refused: account disabled",
}
HISTORY_PAGE = 25
MAX_USER_AGENT = 512


@dataclass(frozen=True, slots=True)
class Origin:
    """Where an attempt came from, as its history row keeps it."""

    ip: str | None
    user_agent: str | None
    now: int


async def _record(db: Executor, account_id: int, result: str, origin: Origin) -> None:
    await history_store.record(
        db,
        account_id,
        at=origin.now,
        ip=origin.ip,
        user_agent=(origin.user_agent or "")[:MAX_USER_AGENT] or None,
        result=result,
    )


async def _record_locked_out(db: Executor, account_id: int, origin: Origin, window: int) -> None:
    """Once per lock-out: refused attempts are not counted any further, so a flood of them would
    otherwise write a row each; one row says the account is being locked out from there."""
    if not await history_store.repeated(db, account_id, "locked_out", origin.ip, since=origin.now - window):
        await _record(db, account_id, "locked_out", origin)


async def check_password(
    db: Executor,
    passwords: Passwords,
    limiter: RateLimiter,
    throttle: Throttle,
    *,
    username: str,
    password: str,
    origin: Origin,
) -> Account:
    username = username.strip()
    known = 0 < len(username) <= 64
    try:
        await throttle.count(limiter, "user:" + username.lower(), origin.ip)
    except RateLimited:
        row = await store.find_for_signin(db, username) if known else None
        if row is not None:
            await _record_locked_out(db, row["id"], origin, throttle.window)
        raise
    row = await store.find_for_signin(db, username) if known else None
    stored = row["password_hash"] if row is not None else None
    matches = await passwords.verify(stored or passwords.dummy_hash, password[:1024])
    account = from_row(row) if row is not None and stored is not None and matches else None
    if account is None:
        if row is not None:
            await _record(db, row["id"], "disabled" if matches and stored else "wrong_password", origin)
        raise errorcodes.SIGNIN_FAILED()
    return account


async def count_code_attempt(
    limiter: RateLimiter, throttle: Throttle, account: Account, ip: str | None
) -> None:
    """Second-factor codes are guessable (a million TOTP codes), so they are throttled as
    passwords are, per account and per address."""
    await throttle.count(limiter, f"account:{account.id}", ip)


async def confirm(
    limiter: RateLimiter,
    throttle: Throttle,
    account: Account,
    ip: str | None,
    check: Callable[[], Awaitable[T]],
) -> T:
    """A signed-in account confirming its password or a code before a change to how it signs in:
    refused while the account or its address has no sign-in attempts left, and counted against
    them only when `check` refuses. Guesses stay throttled as at sign-in, but a run of security
    changes (each confirmed) never uses up the budget and locks the owner out."""
    key = f"account:{account.id}"
    await throttle.check(limiter, key, ip)
    try:
        return await check()
    except Refusal:
        await throttle.count_failure(limiter, key, ip)
        raise


async def check_second_step(
    db: Executor,
    limiter: RateLimiter,
    throttle: Throttle,
    account: Account,
    verify: Callable[[], Awaitable[bool]],
    origin: Origin,
) -> bool:
    """The second step of a sign-in (`verify` checks the code or security key): counted, and
    kept in the history when it fails; the caller records the success with `signed_in`."""
    try:
        await count_code_attempt(limiter, throttle, account, origin.ip)
    except RateLimited:
        await _record_locked_out(db, account.id, origin, throttle.window)
        raise
    try:
        ok = await verify()
    except Refusal:
        await _record(db, account.id, "wrong_code", origin)
        raise
    if not ok:
        await _record(db, account.id, "wrong_code", origin)
    return ok


async def signed_in(db: Executor, account: Account, origin: Origin) -> None:
    await store.signed_in(db, account.id, origin.now)
    await _record(db, account.id, "signed_in", origin)


async def history(
    db: Executor, account_id: int, *, before: int | None = None, size: int = HISTORY_PAGE
) -> tuple[list[Attempt], int | None]:
    """A page of the account's sign-in attempts, newest first, and the id to ask for the next
    (older) page with, or None when this is the oldest."""
    rows = await history_store.page(db, account_id, before=before, size=size)
    older = rows[size - 1]["id"] if len(rows) > size else None
    return rows[:size], older
