"""The application's overview: what its charts show, and how logins are counted for them.

Logins (Login and License Login) are counted by outcome without touching the database on the
request path: each worker adds them up in memory (`LoginTally.count`, a dictionary increment)
and writes its sums every few seconds from a background task, at shutdown, and whenever its own
overview page is shown (`LoginTally.flush`). A worker that dies without shutting down (killed,
power lost) loses the logins it counted since its last flush: a few seconds' worth. New users
and redeemed keys are counted as they are written, in the same statement sequence
(`store.users.insert`, `store.licenses.mark_used`), so they are exact.

Days are UTC days. Every figure here is read through an index range (see `store/overview.py`).
"""

from __future__ import annotations

import asyncio
import calendar
import datetime
from collections import Counter
from dataclasses import dataclass

import orjson

from licensegate.store import overview as store
from licensegate.store.database import Database, Executor

DAY = store.DAY
DAYS = 30  # the per-day charts cover this many days, today included
MONTHS = 12

# How a login's outcome (the refusal's error code, or 'success') is shown: in this order, each
# error code under one label; codes not listed are "Other refusals".
OUTCOMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Success", ("success",)),
    ("Wrong password or unknown user", ("invalid_credentials",)),
    ("Unknown key", ("key_not_found",)),
    ("HWID mismatch", ("hwid_mismatch",)),
    ("HWID missing or too short", ("hwid_required", "hwid_too_short")),
    ("Banned", ("user_banned", "key_banned")),
    ("Blacklisted", ("blacklisted",)),
    ("Expired", ("no_active_subscription",)),
    ("Paused", ("subscription_paused",)),
    ("Two-factor code", ("otp_required", "otp_invalid")),
    ("Throttled", ("rate_limited",)),
)
OTHER = "Other refusals"
_LABEL_OF = {code: label for label, codes in OUTCOMES for code in codes}


def outcome_label(outcome: str) -> str:
    return _LABEL_OF.get(outcome, OTHER)


CREDITS = "credits"  # the daily counter of credits spent (kind; its outcome is '')


class LoginTally:
    """One worker's login counts and credits spent not yet written: (app_id, day, kind, outcome)
    -> n. A spend is counted like a login: in memory, written with the next flush."""

    def __init__(self) -> None:
        self.pending: Counter[tuple[int, int, str, str]] = Counter()
        self._lock = asyncio.Lock()

    def count(self, app_id: int, now: int, outcome: str) -> None:
        self.pending[(app_id, now // DAY, "login", outcome)] += 1

    def spent(self, app_id: int, now: int, cost: int) -> None:
        self.pending[(app_id, now // DAY, CREDITS, "")] += cost

    async def flush(self, db: Database) -> int:
        """Write the pending counts (one statement per application, day and outcome, in one
        transaction); on failure they stay pending for the next flush. Returns how many logins
        were written."""
        async with self._lock:
            taken, self.pending = self.pending, Counter()
            if not taken:
                return 0
            try:
                # In key order, so that two workers writing the same rows lock them in the same
                # order (PostgreSQL) and cannot deadlock.
                async with db.transaction() as tx:
                    await store.add(
                        tx,
                        (
                            (app, day, kind, outcome, n)
                            for (app, day, kind, outcome), n in sorted(taken.items())
                        ),
                    )
            except BaseException:
                self.pending.update(taken)
                raise
            return sum(n for (_app, _day, kind, _outcome), n in taken.items() if kind == "login")


# --- what the charts show ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Series:
    label: str
    values: list[int]


@dataclass(frozen=True, slots=True)
class Chart:
    """Values per category (`labels`), one list per series; `title` and `description` name it
    for people who cannot see it, and its table shows the same numbers."""

    key: str
    title: str
    description: str
    labels: list[str]  # the categories along the axis
    series: list[Series]
    axis: str = "Day"  # what a category is: Day, Month, Status

    @property
    def total(self) -> int:
        return sum(sum(s.values) for s in self.series)


def _days(today: int, count: int, forward: bool = False) -> list[int]:
    return [today + i for i in range(count)] if forward else [today - count + 1 + i for i in range(count)]


def day_label(day: int) -> str:
    return datetime.datetime.fromtimestamp(day * DAY, datetime.UTC).strftime("%b %d")


async def logins_per_day(db: Executor, app_id: int, now: int) -> tuple[Chart, Chart]:
    """Logins per day by outcome, and new users and redeemed keys per day, over `DAYS` days."""
    today = now // DAY
    days = _days(today, DAYS)
    rows = await store.daily(db, app_id, days[0], today)
    index = {day: i for i, day in enumerate(days)}
    by_label: dict[str, list[int]] = {}
    made = {"user": [0] * DAYS, "key": [0] * DAYS}
    for row in rows:
        i = index[int(row["day"])]
        if row["kind"] == "login":
            label = outcome_label(row["outcome"])
            by_label.setdefault(label, [0] * DAYS)[i] += int(row["count"])
        elif row["kind"] in made:
            made[row["kind"]][i] += int(row["count"])
    order = [label for label, _codes in OUTCOMES] + [OTHER]
    series = [Series(label, by_label[label]) for label in order if label in by_label]
    if not series:
        series = [Series("Success", [0] * DAYS)]
    labels = [day_label(day) for day in days]
    logins = Chart(
        "logins",
        f"Logins per day, last {DAYS} days",
        "Login and License Login attempts each UTC day, split by how they ended.",
        labels,
        series,
    )
    growth = Chart(
        "growth",
        f"New users and keys redeemed per day, last {DAYS} days",
        "Users created and license keys redeemed each UTC day.",
        labels,
        [Series("New users", made["user"]), Series("Keys redeemed", made["key"])],
    )
    return logins, growth


async def tamper_per_day(db: Executor, app_id: int, now: int) -> Chart:
    today = now // DAY
    days = _days(today, DAYS)
    counts = {
        int(row["day"]): int(row["count"]) for row in await store.tamper_per_day(db, app_id, days[0] * DAY)
    }
    return Chart(
        "tamper",
        f"Tamper reports per day, last {DAYS} days",
        "Reports of tampering the program sent each UTC day (kept for the application's log retention).",
        [day_label(day) for day in days],
        [Series("Tamper reports", [counts.get(day, 0) for day in days])],
    )


async def _key_figures(db: Executor, app_id: int) -> tuple[int, int, int]:
    """Keys not used, used, banned."""
    every, banned = await store.key_counts(db, app_id)
    total = {row["status"]: int(row["count"]) for row in every}
    banned_of = {row["status"]: int(row["count"]) for row in banned}
    return (
        total.get("unused", 0) - banned_of.get("unused", 0),
        total.get("used", 0) - banned_of.get("used", 0),
        sum(banned_of.values()),
    )


def _keys_chart(values: tuple[int, int, int], note: str) -> Chart:
    return Chart(
        "keys",
        "License keys by status",
        "How many keys are not used yet, used, or banned." + note,
        ["Not used", "Used", "Banned"],
        [Series("Keys", list(values))],
        "Status",
    )


async def keys_by_status(db: Executor, app_id: int) -> Chart:
    return _keys_chart(await _key_figures(db, app_id), "")


async def _user_figures(db: Executor, app_id: int, now: int) -> tuple[int, int, int]:
    """Users with time left, with no time left, banned."""
    row = await store.user_counts(db, app_id, now)
    users, banned = int(row["users"]), int(row["banned"])
    with_time = int(row["with_time"]) - int(row["banned_with_time"])
    return with_time, max(0, users - banned - with_time), banned


def _users_chart(values: tuple[int, int, int], note: str) -> Chart:
    return Chart(
        "users",
        "Users by status",
        "Users with a subscription that has not expired, users whose time has run out, and banned users."
        + note,
        ["With time left", "No time left", "Banned"],
        [Series("Users", list(values))],
        "Status",
    )


async def users_by_status(db: Executor, app_id: int, now: int) -> Chart:
    return _users_chart(await _user_figures(db, app_id, now), "")


def _month_start(year: int, month: int) -> int:
    return calendar.timegm((year, month, 1, 0, 0, 0))


def _months(now: int) -> list[tuple[int, int]]:
    """This calendar month and the `MONTHS` after it (the last one bounds the range)."""
    start = datetime.datetime.fromtimestamp(now, datetime.UTC)
    return [
        ((start.year * 12 + start.month - 1 + i) // 12, (start.month - 1 + i) % 12 + 1)
        for i in range(MONTHS + 1)
    ]


async def _expiring(db: Executor, app_id: int, now: int) -> dict[int, int]:
    """Running grants ending per UTC day, from `now` to the end of the `MONTHS`th month."""
    rows = await store.expiries_per_day(db, app_id, now, _month_start(*_months(now)[-1]))
    return {int(row["day"]): int(row["count"]) for row in rows}


def _expiry_charts(per_day: dict[int, int], now: int, note: str) -> tuple[Chart, Chart]:
    today = now // DAY
    months = _months(now)
    days = _days(today, DAYS, forward=True)
    soon = Chart(
        "expiries-days",
        f"Subscriptions expiring, next {DAYS} days",
        "Running (not paused) subscriptions of users that end each UTC day." + note,
        [day_label(day) for day in days],
        [Series("Expiring", [per_day.get(day, 0) for day in days])],
    )
    bounds = [_month_start(*month) // DAY for month in months]
    per_month = [0] * MONTHS
    for day, count in per_day.items():
        for i in range(MONTHS):
            if bounds[i] <= day < bounds[i + 1]:
                per_month[i] += count
                break
    year = Chart(
        "expiries-months",
        f"Subscriptions expiring, next {MONTHS} months",
        "Running (not paused) subscriptions of users that end each calendar month, this one included." + note,
        [datetime.date(y, m, 1).strftime("%b %Y") for y, m in months[:MONTHS]],
        [Series("Expiring", per_month)],
        "Month",
    )
    return soon, year


async def expiries(db: Executor, app_id: int, now: int) -> tuple[Chart, Chart]:
    """Running subscriptions ending in the next `DAYS` days (per day) and the next `MONTHS`
    calendar months (per month, this one included)."""
    return _expiry_charts(await _expiring(db, app_id, now), now, "")


# --- the counts that read whole indexes, and their snapshots ----------------------------------
#
# Keys and users by status and the expiries to come count every matching index entry: about a
# second and a half for a million keys and a million users on SQLite. Below `inline_below` keys
# plus users they are counted for each view (exact). At or above it they are shown from a
# snapshot (`overview_snapshots`), labelled with the time it was counted, which the workers'
# background refresh (`refresh_due`) counts again at most once every `every` seconds for each
# application whose overview was looked at in the last `WATCHED` seconds. The first view of a
# large application with no snapshot yet counts inline once and keeps the result.

WATCHED = 3600  # an overview looked at within this long is kept fresh in the background
VIEW_NOTE_EVERY = 60  # a view is noted at most this often per application (one small write)
REFRESH_BATCH = 10  # at most this many applications are counted again per refresh


@dataclass(frozen=True, slots=True)
class StatusCounts:
    at: int  # when these were counted
    keys: tuple[int, int, int]  # not used, used, banned
    users: tuple[int, int, int]  # with time left, no time left, banned
    expiring: dict[int, int]  # UTC day -> running grants ending that day, from `at` on
    size: int  # keys plus users: what counting them reads
    snapshot: bool  # shown from a snapshot (as of `at`), not counted for this view

    def charts(self) -> tuple[Chart, Chart, Chart, Chart]:
        """Keys by status, users by status, expiries per day and per month."""
        note = f" Counted at {_clock(self.at)} UTC." if self.snapshot else ""
        soon, year = _expiry_charts(self.expiring, self.at, note)
        return _keys_chart(self.keys, note), _users_chart(self.users, note), soon, year

    def encode(self) -> str:
        return orjson.dumps(
            {"keys": self.keys, "users": self.users, "expiring": sorted(self.expiring.items())}
        ).decode()

    @classmethod
    def decode(cls, at: int, size: int, figures: str) -> StatusCounts:
        data = orjson.loads(figures)
        keys, users = data["keys"], data["users"]
        return cls(
            at,
            (int(keys[0]), int(keys[1]), int(keys[2])),
            (int(users[0]), int(users[1]), int(users[2])),
            {int(day): int(count) for day, count in data["expiring"]},
            size,
            True,
        )


def _clock(at: int) -> str:
    return datetime.datetime.fromtimestamp(at, datetime.UTC).strftime("%H:%M")


async def count_statuses(db: Executor, app_id: int, now: int) -> StatusCounts:
    """Keys and users by status and the expiries to come, counted now (exact)."""
    keys = await _key_figures(db, app_id)
    users = await _user_figures(db, app_id, now)
    return StatusCounts(now, keys, users, await _expiring(db, app_id, now), sum(keys) + sum(users), False)


async def _keep(db: Executor, app_id: int, counts: StatusCounts, inline_below: int) -> None:
    """Keep a large application's counts as its snapshot; a small one has none."""
    if counts.size >= inline_below:
        await store.save_snapshot(db, app_id, counts.at, counts.size, counts.encode())
    else:
        await store.drop_snapshot(db, app_id)


async def statuses(db: Executor, app_id: int, now: int, *, inline_below: int) -> StatusCounts:
    """The counts for a view of the overview: counted now for a small application (or a large
    one seen for the first time), else its snapshot."""
    row = await store.snapshot(db, app_id)
    if row is not None and int(row["size"]) >= inline_below:
        await store.mark_viewed(db, app_id, now, VIEW_NOTE_EVERY)
        return StatusCounts.decode(int(row["computed_at"]), int(row["size"]), row["figures"])
    counts = await count_statuses(db, app_id, now)
    if row is not None or counts.size >= inline_below:
        await _keep(db, app_id, counts, inline_below)
    return counts


async def refresh_due(db: Database, now: int, *, every: int, inline_below: int) -> int:
    """Count again the snapshots older than `every` seconds of overviews looked at lately (each
    taken by one worker; the counting reads apart from the worker's connection, see
    `Database.reading_apart`); returns how many were counted."""
    refreshed = 0
    for app_id in await store.due(db, now - WATCHED, now - every, REFRESH_BATCH):
        if await store.claim(db, app_id, now, now - every):
            async with db.reading_apart() as reader:
                counts = await count_statuses(reader, app_id, now)
            await _keep(db, app_id, counts, inline_below)
            refreshed += 1
    return refreshed


ONLINE_CAP = 10_000  # logged-in sessions counted at most ("more than 10,000")


@dataclass(frozen=True, slots=True)
class Online:
    """Users and sessions online; `more`: there are more than `ONLINE_CAP` sessions, of which
    `sessions` is the cap and `users` the distinct users among the sessions counted."""

    users: int
    sessions: int  # logged in: the session seats in use
    more: bool = False
    machines: int = 0  # distinct HWIDs among the sessions counted: the machine seats in use
    credits_spent: int = 0  # usage credits the clients spent today (UTC), as far as written


async def online(db: Executor, app_id: int, now: int, cap: int | None = None) -> Online:
    """`cap`: `ONLINE_CAP` unless given. With the seats in use (the machines read among the
    sessions counted, so never more than `cap` + 1 rows) and the credits spent today."""
    cap = ONLINE_CAP if cap is None else cap
    row = await store.online(db, app_id, now, cap)
    machines = await store.machines_online(db, app_id, now, cap)
    spent = await store.counted_today(db, app_id, now // DAY, CREDITS)
    sessions = int(row["sessions"] or 0)
    if sessions > cap:
        return Online(int(row["users"] or 0), cap, more=True, machines=machines, credits_spent=spent)
    return Online(int(row["users"] or 0), sessions, machines=machines, credits_spent=spent)
