"""Usage credits: a balance a user (or a key) spends, call by call, with an optional refill.

The seller sets a balance on a user or on a key; a client logged in with that key spends the
key's balance, any other session of the user the user's. `spend` takes a cost (default 1) with
one conditional UPDATE (`balance >= cost`), so concurrent spends never take the balance below
zero and each sees what the previous one left. A refill (an amount per day, week or month at a
UTC time; weeks start on Monday, months on the 1st) tops the balance up to its amount: credits
the seller added beyond it are kept. Refills are applied when the balance is read or spent: the
last boundary applied is stored, and a conditional UPDATE applies a newer one once, however many
readers race and however many boundaries passed (topping up twice is topping up once).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from licensegate.appcache import AppCache
from licensegate.domain import errorcodes, events
from licensegate.domain import licenses as license_rules
from licensegate.domain import users as user_rules
from licensegate.domain.errors import ErrorCode
from licensegate.domain.messages import Messages
from licensegate.domain.permissions import Scope
from licensegate.invalidation import Invalidation
from licensegate.store import credits as store
from licensegate.store.credits import CreditRow as CreditRow
from licensegate.store.credits import Owner as Owner
from licensegate.store.database import Database, Executor

PERIODS = ("day", "week", "month")
MAXIMUM = 10**12  # a balance never goes above this (far beyond any real use; fits BIGINT sums)
MAX_COST = 1_000_000
_DAY = 86_400
_WEEK = 7 * _DAY
_MONDAY = 4 * _DAY  # 1970-01-05, the first Monday after the epoch (a Thursday)
_TIME = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


@dataclass(frozen=True, slots=True)
class Target:
    """Whose balance: a user or a key, and how the audit log names it."""

    owner: Owner
    owner_id: int
    label: str  # `user:alice`, `key:ABC-...` (as the user page's timeline looks audit entries up)
    created_by: str | None = None  # a user's (events mask a License Login's user: events.user_ref)


async def target(
    db: Executor,
    scope: Scope,
    *,
    user: str | None,
    key: str | None,
    neither: ErrorCode = errorcodes.CREDIT_TARGET,
) -> Target:
    """The one user or key named (exactly one must be: else `neither`, the caller's own code)."""
    if (user is None) == (key is None):
        raise neither()
    if key is not None:
        row = await license_rules.get(db, scope, key)
        return Target("key", row["id"], f"key:{key}")
    assert user is not None
    found = await user_rules.find_named(db, scope.app_id, user, reseller_id=scope.reseller_id)
    if found is None:
        raise errorcodes.USER_NOT_FOUND(username=user)
    return Target("user", found["id"], f"user:{found['username']}", found["created_by"])


def parse_time(text: str) -> int:
    """`HH:MM` (UTC) as the minute of the day."""
    match = _TIME.fullmatch(text.strip())
    if match is None:
        raise errorcodes.INVALID_REFILL(param="at")
    return int(match.group(1)) * 60 + int(match.group(2))


def time_text(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def last_boundary(period: str, minute: int, now: int) -> int:
    """The latest refill time at or before `now` of a refill every `period` at `minute` (UTC)."""
    offset = minute * 60
    if period == "day":
        return (now - offset) // _DAY * _DAY + offset
    if period == "week":
        return (now - _MONDAY - offset) // _WEEK * _WEEK + _MONDAY + offset
    moment = datetime.fromtimestamp(now, UTC)
    year, month = moment.year, moment.month
    boundary = calendar.timegm((year, month, 1, 0, 0, 0)) + offset
    if boundary > now:
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
        boundary = calendar.timegm((year, month, 1, 0, 0, 0)) + offset
    return boundary


def next_boundary(period: str, minute: int, now: int) -> int:
    """The first refill time after `now`."""
    last = last_boundary(period, minute, now)
    if period == "day":
        return last + _DAY
    if period == "week":
        return last + _WEEK
    moment = datetime.fromtimestamp(last, UTC)
    year, month = (moment.year, moment.month + 1) if moment.month < 12 else (moment.year + 1, 1)
    return calendar.timegm((year, month, 1, 0, 0, 0)) + minute * 60


async def current(db: Executor, row: CreditRow, now: int) -> CreditRow:
    """The balance with the refill due by `now` applied (once, whoever applies it)."""
    amount, period = row["refill_amount"], row["refill_period"]
    if amount is None or period is None:
        return row
    boundary = last_boundary(period, row["refill_minute"], now)
    if boundary <= row["refilled_at"]:
        return row
    after = await store.refill(db, row["id"], amount, boundary)
    if after is None:  # another reader applied it: read what it left
        fresh = await store.get_by_id(db, row["id"])
        return fresh if fresh is not None else row
    return {**row, "balance": after, "refilled_at": boundary}


async def find(db: Executor, to: Target, now: int) -> CreditRow | None:
    """The owner's balance with any refill due applied; None when none is set."""
    row = await store.get(db, to.owner, to.owner_id)
    return None if row is None else await current(db, row, now)


async def show(db: Executor, to: Target, now: int) -> CreditRow:
    row = await find(db, to, now)
    if row is None:
        raise errorcodes.CREDITS_NOT_SET(target=to.label)
    return row


CHANGED = "credits.changed"
SPENT = "credits.spent"


async def _changed(
    tx: Executor, app_id: int, to: Target, change: str, row: CreditRow | None, now: int, **more: object
) -> None:
    """`credits.changed`, in the transaction of the seller's change."""
    name = to.label.split(":", 1)[1]
    who = (
        {"user": events.user_ref(to.owner_id, name, to.created_by)}
        if to.owner == "user"
        else {"key": events.key_ref(name, id=to.owner_id)}
    )
    data = {**who, "change": change, "balance": None if row is None else row["balance"], **more}
    await events.record(tx, app_id, CHANGED, now, data, license_key=name if to.owner == "key" else None)


async def set_balance(db: Database, app_id: int, to: Target, balance: int, now: int) -> CreditRow:
    """Create the balance or set it to `balance` (a refill rule already set stays)."""
    async with db.transaction() as tx:
        await store.set_balance(tx, app_id, to.owner, to.owner_id, balance, now)
        row = await show(tx, to, now)
        await _changed(tx, app_id, to, "set", row, now)
    return row


async def add(db: Database, app_id: int, to: Target, amount: int, now: int) -> CreditRow:
    """Add `amount` (negative: take it), refused when the balance would leave 0..MAXIMUM."""
    async with db.transaction() as tx:
        row = await show(tx, to, now)
        after = await store.add(tx, row["id"], amount, MAXIMUM)
        if after is None:
            raise errorcodes.CREDITS_OUT_OF_RANGE(maximum=MAXIMUM, param="amount")
        row = {**row, "balance": after}
        await _changed(tx, app_id, to, "add", row, now, amount=amount)
    return row


async def set_refill(
    db: Database,
    app_id: int,
    to: Target,
    *,
    amount: int | None,
    period: str | None,
    at: str | None,
    now: int,
) -> CreditRow:
    """Set the refill rule (period `none` or absent: no refill); the first refill is the first
    boundary after now (the seller sets today's balance with `setcredits`)."""
    async with db.transaction() as tx:
        row = await show(tx, to, now)
        if period in (None, "none"):
            await store.set_refill(tx, row["id"], None, None, 0, now)
        else:
            if amount is None:
                raise errorcodes.INVALID_REFILL(param="amount")
            minute = parse_time(at) if at is not None else 0
            await store.set_refill(tx, row["id"], amount, period, minute, now)
        row = await show(tx, to, now)
        await _changed(tx, app_id, to, "refill", row, now, refill=refill_of(row, now))
    return row


async def delete(db: Database, app_id: int, to: Target, now: int) -> bool:
    async with db.transaction() as tx:
        removed = await store.delete(tx, to.owner, to.owner_id)
        if removed:
            await _changed(tx, app_id, to, "removed", None, now)
    return removed


async def of_session(
    db: Executor, app_id: int, user_id: int, credential: str | None, now: int
) -> CreditRow | None:
    """The balance a session spends (its key's, else its user's), refills applied; None: none set."""
    row = await store.for_session(db, app_id, user_id, credential)
    return None if row is None else await current(db, row, now)


async def spend(
    db: Database,
    app_id: int,
    user_id: int,
    credential: str | None,
    cost: int,
    msg: Messages,
    now: int,
    *,
    report: bool = False,
) -> int:
    """Spend `cost` credits of the session's balance; what is left. Refused, spending nothing,
    when the balance holds less (`credits_exhausted`) or there is none (`no_credits`). With
    `report` (an endpoint wants `credits.spent`, opt-in: a spend per API call is many events)
    the spend and its event share a transaction; otherwise it is one conditional UPDATE."""
    if not report:
        return await _spend(db, app_id, user_id, credential, cost, msg, now)
    async with db.transaction() as tx:
        left = await _spend(tx, app_id, user_id, credential, cost, msg, now)
        await events.record(
            tx,
            app_id,
            SPENT,
            now,
            {"user": events.user_ref(user_id, None, None), "cost": cost, "balance": left},
        )
    return left


async def _spend(
    db: Executor, app_id: int, user_id: int, credential: str | None, cost: int, msg: Messages, now: int
) -> int:
    row = await of_session(db, app_id, user_id, credential, now)
    if row is None:
        raise errorcodes.NO_CREDITS()
    left = await store.spend(db, row["id"], cost)
    if left is None:
        balance = await store.get_by_id(db, row["id"])
        held = balance["balance"] if balance is not None else 0
        raise errorcodes.CREDITS_EXHAUSTED(msg("nocredits", balance=str(held)), extra={"balance": held})
    return left


def refill_of(row: CreditRow, now: int) -> dict[str, object] | None:
    """The refill rule as answers show it, with the time of the next refill; None without one."""
    amount, period = row["refill_amount"], row["refill_period"]
    if amount is None or period is None:
        return None
    minute = row["refill_minute"]
    return {
        "amount": amount,
        "period": period,
        "at": time_text(minute),
        "next": next_boundary(period, minute, now),
    }


TOPIC = "credits"


def app_cache(invalidation: Invalidation) -> AppCache[bool]:
    """Whether each application has credit balances at all, per worker: a login of an
    application without any answers `credits: null` without a query. Setting the first balance
    announces the change."""
    return AppCache(invalidation, TOPIC, store.app_has_any)
