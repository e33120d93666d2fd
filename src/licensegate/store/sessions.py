"""SQL for client sessions: the client API opens, finds, validates and ends them (on every
client call, so each statement is one index lookup; the session lookup brings the application's
settings along in the same round trip), and the seller lists, counts and ends them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any, NamedTuple, TypedDict, cast

from licensegate.store import apps, bulk
from licensegate.store.database import Database, Executor, Row
from licensegate.store.paging import PageRequest, keyset

_LIVE = "app_id = ? AND expires_at > ?"


class ListedSession(TypedDict):
    """A session as `list_page` lists it (`id`: the digest of the id the client holds)."""

    id: str
    credential: str | None
    created_at: int
    expires_at: int
    validated: int
    ip: str


async def list_page(
    db: Executor, app_id: int, *, now: int, include_expired: bool, limit: int, offset: int
) -> list[ListedSession]:
    """Newest first."""
    columns = "SELECT id, credential, created_at, expires_at, validated, ip FROM sessions"
    if include_expired:
        rows = await db.fetch_all(
            f"{columns} WHERE app_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            app_id,
            limit,
            offset,
        )
    else:
        rows = await db.fetch_all(
            f"{columns} WHERE {_LIVE} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
            app_id,
            now,
            limit,
            offset,
        )
    return cast("list[ListedSession]", rows)


async def count(db: Executor, app_id: int, *, now: int, include_expired: bool) -> int:
    total: int
    if include_expired:
        total = await db.fetch_value("SELECT COUNT(*) FROM sessions WHERE app_id = ?", app_id)
    else:
        total = await db.fetch_value(f"SELECT COUNT(*) FROM sessions WHERE {_LIVE}", app_id, now)
    return total


async def count_live(db: Executor, app_id: int, now: int) -> tuple[int, int]:
    """(unexpired sessions, unexpired validated sessions)."""
    row = await db.fetch_one(
        f"SELECT COUNT(*) AS total, COALESCE(SUM(validated), 0) AS validated FROM sessions WHERE {_LIVE}",
        app_id,
        now,
    )
    assert row is not None
    return int(row["total"]), int(row["validated"])


async def delete(db: Executor, app_id: int, *keys: str) -> Row | None:
    """End the session keyed by one of `keys` (its digest, or what may be one); returns what it
    was, or None when the application has no such session."""
    # fetch_all runs a RETURNING statement to completion on SQLite.
    rows = await db.fetch_all(
        f"DELETE FROM sessions WHERE id IN ({', '.join('?' * len(keys))}) AND app_id = ? "
        "RETURNING user_id, credential, ip, validated",
        *keys,
        app_id,
    )
    return rows[0] if rows else None


# What a bulk end's `report` is told of each session ended.
ENDED_COLUMNS = "user_id, ip"  # not the credential: a License Login's is the key


async def delete_all(db: Database, app_id: int, *, report: bulk.Report | None = None) -> int:
    return await bulk.delete(db, "sessions", "app_id = ?", app_id, returning=ENDED_COLUMNS, report=report)


async def delete_by_ip(db: Database, app_id: int, ip: str, *, report: bulk.Report | None = None) -> int:
    return await bulk.delete(
        db, "sessions", "app_id = ? AND ip = ?", app_id, ip, returning=ENDED_COLUMNS, report=report
    )


# --- the client API's side: opening, finding, validating and ending sessions ------------------

SESSION_COLUMNS = (
    "s.id AS session_id, s.user_id, s.credential, s.validated, s.created_at AS session_created_at, "
    "s.expires_at AS session_expires_at, s.hwid AS session_hwid, s.os AS session_os, "
    "s.architecture AS session_architecture, s.device AS session_device, "
    "s.cpu_cores AS session_cpu_cores, s.ram AS session_ram, s.client_version AS session_client_version, "
    "s.client_token AS session_client_token, s.enckey AS session_enckey, s.beat_state AS session_beat_state"
)
CLIENT_DETAILS = ("os", "architecture", "device", "cpu_cores", "ram", "version", "token")


class SessionAppRow(apps.ClientAppRow):
    """A row of `SESSION_COLUMNS` with its application's `apps.CLIENT_COLUMNS`."""

    session_id: str
    user_id: int | None
    credential: str | None
    validated: int
    session_created_at: int
    session_expires_at: int
    session_hwid: str | None
    session_os: str | None
    session_architecture: str | None
    session_device: str | None
    session_cpu_cores: str | None
    session_ram: str | None
    session_client_version: str | None
    session_client_token: str | None
    session_enckey: str | None
    session_beat_state: str | None
    # The login versions the row was read at (store/loginversions.py).
    app_login_version: int
    user_login_version: int | None  # None: no user (not logged in)
    session_login_version: int


class LoginRecord(NamedTuple):
    """What `validate` writes, in column order: equal records mean the write would change nothing."""

    user_id: int
    credential: str
    hwid: str | None
    os: str | None
    architecture: str | None
    device: str | None
    cpu_cores: str | None
    ram: str | None
    client_version: str | None
    client_token: str | None


def login_record(user_id: int, credential: str, hwid: str | None, client: dict[str, Any]) -> LoginRecord:
    return LoginRecord(user_id, credential, hwid, *map(client.get, CLIENT_DETAILS))


def recorded_login(row: SessionAppRow) -> LoginRecord | None:
    """The login a session's row records (from `find_with_app`), or None if it has none."""
    if not row["validated"] or row["user_id"] is None or row["credential"] is None:
        return None
    return LoginRecord(
        row["user_id"],
        row["credential"],
        row["session_hwid"],
        row["session_os"],
        row["session_architecture"],
        row["session_device"],
        row["session_cpu_cores"],
        row["session_ram"],
        row["session_client_version"],
        row["session_client_token"],
    )


async def find_with_app(db: Executor, session_id: str) -> SessionAppRow | None:
    """The session and its application's settings, in one round trip, with the login versions
    of the application, the session's user and the session (one statement: read at the same
    moment as the rest)."""
    row = await db.fetch_one(
        f"SELECT {SESSION_COLUMNS}, {apps.CLIENT_COLUMNS}, a.login_version AS app_login_version, "
        "u.login_version AS user_login_version, s.login_version AS session_login_version "
        "FROM sessions s JOIN apps a ON a.id = s.app_id "
        "JOIN accounts o ON o.id = a.account_id LEFT JOIN users u ON u.id = s.user_id WHERE s.id = ?",
        session_id,
    )
    return cast("SessionAppRow | None", row)


_START = "INSERT INTO sessions (id, app_id, ip, created_at, expires_at, enckey, opened_ns) "
_START_ALWAYS = f"{_START}VALUES (?, ?, ?, ?, ?, ?, ?)"
_START_WHILE = (
    f"{_START}SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM apps WHERE id = ? AND login_version = ?)"
)


async def start(
    db: Executor,
    *,
    session_id: str,
    app_id: int,
    ip: str,
    now: int,
    expires_at: int,
    enckey: str | None = None,
    app_version: int | None = None,
) -> bool:
    """`enckey`: the 1.2 / legacy 1.0 client's key, sealed. The session also records the moment it
    opened in nanoseconds (the wall clock's), which orders sessions opened in the same second.
    `app_version`: open it only while the application's login version is this one (in the same
    statement); False when it is not, and nothing was written."""
    values = (session_id, app_id, ip, now, expires_at, enckey, time.time_ns())
    if app_version is None:
        await db.execute(_START_ALWAYS, *values)
        return True
    return await db.execute(_START_WHILE, *values, app_id, app_version) == 1


_SHARE_LOCK = {"postgresql": " FOR SHARE", "sqlite": ""}  # SQLite has no row locks (nor needs them)


async def validate(
    db: Executor,
    session_id: str,
    *,
    user_id: int,
    credential: str,
    hwid: str | None,
    client: dict[str, Any],
) -> int:
    """Mark the session logged in as this user, with what the client told about itself, unless
    the user is banned by then: 0 rows when banned (or the session is gone).

    A ban ends the user's sessions in its transaction; a login that read the user before that
    ban committed could otherwise validate its session just after, and keep it. On PostgreSQL the
    user's row is share-locked, so this waits for a ban in progress and then sees it; SQLite runs
    one writer at a time, so the statement sees any ban that committed before it."""
    return await db.execute(
        "UPDATE sessions SET validated = 1, user_id = ?, credential = ?, hwid = ?, os = ?, "
        "architecture = ?, device = ?, cpu_cores = ?, ram = ?, client_version = ?, client_token = ? "
        "WHERE id = ? AND EXISTS (SELECT 1 FROM users WHERE id = ? AND banned_reason IS NULL"
        f"{_SHARE_LOCK[db.dialect]})",
        *login_record(user_id, credential, hwid, client),
        session_id,
        user_id,
    )


# The per-session counters of what a client stored (the names are fixed here, never input).
LOG_LINES = "log_lines"
TAMPER_REPORTS = "tamper_reports"


async def count_stored(db: Executor, session_id: str, counter: str, quota: int) -> bool:
    """Count one more stored row against the session's quota; False (nothing counted) once the
    session has stored `quota`. One conditional UPDATE, exact across workers and machines."""
    assert counter in (LOG_LINES, TAMPER_REPORTS)
    counted = await db.execute(
        f"UPDATE sessions SET {counter} = {counter} + 1 WHERE id = ? AND {counter} < ?", session_id, quota
    )
    return counted == 1


async def end(db: Executor, session_id: str) -> int:
    return await db.execute("DELETE FROM sessions WHERE id = ?", session_id)


async def end_for_user(db: Executor, user_id: int, *, why: Ended | None = None) -> int:
    """End the user's sessions; with `why`, remember why for their programs (`ended`)."""
    where = "user_id = ?"
    if why is not None:
        await _remember(db, where, (user_id,), why)
    return await db.execute(f"DELETE FROM sessions WHERE {where}", user_id)


async def end_for_credential(db: Executor, user_id: int, credential: str, *, why: Ended | None = None) -> int:
    """End the user's sessions logged in with this credential (a license key)."""
    where = "user_id = ? AND credential = ?"
    if why is not None:
        await _remember(db, where, (user_id, credential), why)
    return await db.execute(f"DELETE FROM sessions WHERE {where}", user_id, credential)


async def end_for_subscription(db: Executor, sub_id: int, *, why: Ended | None = None) -> int:
    """End the sessions of every user holding a grant (running or not) of this subscription."""
    where = "user_id IN (SELECT user_id FROM user_subscriptions WHERE subscription_id = ?)"
    if why is not None:
        await _remember(db, where, (sub_id,), why)
    return await db.execute(f"DELETE FROM sessions WHERE {where}", sub_id)


class Ended(NamedTuple):
    """Why sessions were ended, as their programs are told (`ended_sessions`,
    `domain.sessions.identify`)."""

    reason: str  # BANNED, KEY_BANNED or PAUSED
    detail: str | None = None  # the ban's reason


BANNED = "banned"
KEY_BANNED = "key_banned"
PAUSED = "paused"
ENDED_BY_PAUSE = Ended(PAUSED)


class EndedRow(TypedDict):
    reason: str
    detail: str | None
    ownerid: str
    app_name: str
    app_id: int


async def _remember(db: Executor, where: str, args: tuple[Any, ...], why: Ended) -> None:
    # Only logged-in sessions: a program that never logged in has nothing to be told.
    await db.execute(
        "INSERT INTO ended_sessions (id, app_id, reason, detail, expires_at) "
        f"SELECT id, app_id, ?, ?, expires_at FROM sessions WHERE validated = 1 AND {where} "
        "ON CONFLICT (id) DO NOTHING",
        why.reason,
        why.detail,
        *args,
    )


async def ended(db: Executor, session_id: str) -> EndedRow | None:
    """Why a ban or a pause ended this session, with its application's ownerid and name."""
    row = await db.fetch_one(
        "SELECT e.reason, e.detail, a.ownerid, a.name AS app_name, a.id AS app_id FROM ended_sessions e "
        "JOIN apps a ON a.id = e.app_id WHERE e.id = ?",
        session_id,
    )
    return cast("EndedRow | None", row)


async def purge_ended(db: Executor, now: int, batch: int = 1000) -> int:
    """Forget up to `batch` ended sessions that would have expired by now."""
    return await db.execute(
        "DELETE FROM ended_sessions WHERE id IN "
        "(SELECT id FROM ended_sessions WHERE expires_at <= ? LIMIT ?)",
        now,
        batch,
    )


async def purge_expired(db: Executor, now: int, batch: int = 1000) -> int:
    """Delete up to `batch` expired sessions; small batches keep each write short. Each
    application's sessions are found through (app_id, validated, expires_at): `expires_at` alone
    has no index, and without the planner's statistics to skip-scan that one SQLite read every
    session (`validated` is 0 or 1, nothing else). CROSS JOIN keeps SQLite's order: applications
    outside."""
    return await db.execute(
        "DELETE FROM sessions WHERE id IN (SELECT s.id FROM apps a CROSS JOIN sessions s "
        "WHERE s.app_id = a.id AND s.validated IN (0, 1) AND s.expires_at <= ? LIMIT ?)",
        now,
        batch,
    )


async def end_without_time(db: Executor, now: int, *, app_id: int, user_id: int, batch: int = 1000) -> int:
    """Delete up to `batch` logged-in sessions of the user if they have no time left on any
    subscription (their last grant ran out or had its time taken away). A grant frozen by a
    pause still has its time (the pause itself ended those sessions)."""
    return await db.execute(
        "DELETE FROM sessions WHERE id IN (SELECT s.id FROM sessions s WHERE s.validated = 1 "
        f"AND s.app_id = ? AND s.user_id = ? AND {_NO_TIME_LEFT} LIMIT ?)",
        app_id,
        user_id,
        now,
        batch,
    )


# A logged-in session `s` whose user has no time left on any subscription (one parameter: now).
_NO_TIME_LEFT = (
    "NOT EXISTS (SELECT 1 FROM user_subscriptions g "
    "WHERE g.user_id = s.user_id AND (g.expires_at > ? OR g.expires_at > g.paused_at))"
)
SWEEP_STEP = 2000  # sessions one step of the sweep below looks at
RUN_OUT_STEP = 500  # grants one step of `end_run_out` looks at

Cursor = tuple[int, int]  # (expires_at, user_id) of the last grant a step looked at


async def subscription_ids(db: Executor) -> list[int]:
    """Every subscription of every application (a few per application)."""
    return [int(row["id"]) for row in await db.fetch_all("SELECT id FROM subscriptions ORDER BY id")]


async def end_run_out(
    db: Executor, sub_id: int, since: int, now: int, after: Cursor, step: int = RUN_OUT_STEP
) -> Cursor | None:
    """One step of the periodic sweep that ends the logged-in sessions of users whose time ran
    out on its own (a grant's clock passed its end): the next `step` grants of the subscription,
    in (expires_at, user_id) order after `after`, that ran out in `since < expires_at <= now`,
    read from ix_user_subscriptions_expiry in its own order, so a step costs what ran out, not
    what the database holds. Their users' sessions are ended if those users have no time left
    (a paused grant, or another one, keeps them). Start from `(since, 0)`; returns where the
    next step starts, None when the subscription has no grant left in the window."""
    rows = await db.fetch_all(
        # One lower bound on expires_at, where the last step stopped, so that a step's index
        # range starts there (times are whole seconds: `> since` is `>= since + 1`).
        "SELECT expires_at, user_id FROM user_subscriptions WHERE subscription_id = ? "
        "AND expires_at >= ? AND expires_at <= ? AND (expires_at, user_id) > (?, ?) "
        "ORDER BY expires_at, user_id LIMIT ?",
        sub_id,
        max(since + 1, after[0]),
        now,
        after[0],
        after[1],
        step,
    )
    if not rows:
        return None
    await _end_users_without_time(db, sorted({int(row["user_id"]) for row in rows}), now)
    last = rows[-1]
    return (int(last["expires_at"]), int(last["user_id"])) if len(rows) == step else None


async def end_run_out_between(db: Executor, sub_id: int, since: int, now: int) -> None:
    """`end_run_out` over the whole window, step after step, the requests waiting meanwhile let
    in after each."""
    after: Cursor | None = (since, 0)
    while after is not None:
        after = await end_run_out(db, sub_id, since, now, after)
        await asyncio.sleep(0)


async def _end_users_without_time(db: Executor, users: Sequence[int], now: int) -> None:
    """End the logged-in sessions of those of these users with no time left."""
    await db.execute(
        "DELETE FROM sessions WHERE id IN (SELECT s.id FROM sessions s WHERE "
        f"s.user_id IN ({', '.join('?' * len(users))}) AND s.validated = 1 AND {_NO_TIME_LEFT})",
        *users,
        now,
    )


async def check_time_of(db: Executor, user_ids: Sequence[int]) -> None:
    """Note users whose time was taken away, for the next sweep to end their sessions if they
    have none left (`end_noted`)."""
    if user_ids:
        await db.execute_many(
            "INSERT INTO time_checks (user_id) VALUES (?) ON CONFLICT (user_id) DO NOTHING",
            [(user_id,) for user_id in sorted(set(user_ids))],
        )


async def end_noted(db: Database, now: int, step: int = RUN_OUT_STEP) -> int:
    """One step of the sweep through the users noted by `check_time_of`: the sessions of those
    with no time left are ended and the users forgotten, in one transaction (a user noted again
    meanwhile is looked at again). Returns how many were looked at."""
    rows = await db.fetch_all("SELECT user_id FROM time_checks ORDER BY user_id LIMIT ?", step)
    users = [int(row["user_id"]) for row in rows]
    if users:
        async with db.transaction() as tx:
            await _end_users_without_time(tx, users, now)
            await tx.execute(
                f"DELETE FROM time_checks WHERE user_id IN ({', '.join('?' * len(users))})", *users
            )
    return len(users)


async def end_without_time_after(
    db: Executor, now: int, after: str, step: int = SWEEP_STEP, reader: Executor | None = None
) -> str | None:
    """One step of the periodic sweep that ends the logged-in sessions whose user has no time
    left: the next `step` sessions by id after `after` (start from ""). Returns where the next
    step starts; None when the sweep has gone past the last session.

    This walks every session, a step at a time (a step of 2,000 takes about 19 ms at 1,200,000
    sessions; 12 s of CPU in all there): it is the daily backstop behind `end_run_out`, for
    time taken away by a path that did not end the sessions itself (SQL by hand, say).
    `reader` (`Database.reading_apart`) runs the step's two reads off the event loop on SQLite;
    the DELETE, which asks again, runs on `db` only when the step found a session to end."""
    reads = reader or db
    last = await reads.fetch_value(
        "SELECT MAX(id) FROM (SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?) AS step", after, step
    )
    if last is None:
        return None
    within = "s.id > ? AND s.id <= ? AND s.validated = 1 AND s.user_id IS NOT NULL AND " + _NO_TIME_LEFT
    if await reads.fetch_value(f"SELECT 1 FROM sessions s WHERE {within} LIMIT 1", after, last, now):
        await db.execute(
            f"DELETE FROM sessions WHERE id IN (SELECT s.id FROM sessions s WHERE {within})", after, last, now
        )
    return str(last)


# `users.created_by` of the users License Logins made (named by their key): the partial index
# ix_users_named (migration 0055) leaves them out, so its predicate is written here as it is there.
_NAMED = "u.created_by <> 'license'"
ONLINE_SCAN = 10_000  # logged-in sessions read at most to find the users online by session


async def online_usernames(db: Executor, app_id: int, now: int, limit: int) -> list[str]:
    """The names of the users with a logged-in, unexpired session, first by name, leaving out
    every name that is key material: users a License Login made and any user named like one of
    the application's license keys. Up to `ONLINE_SCAN` logged-in sessions, read from those
    sessions; beyond that, from the users named by people (ix_users_named) in name order, each
    asked for a session (by the user_id index), so that a million programs online are not read
    every time the Sessions page is shown."""
    live = "s.app_id = ? AND s.validated = 1 AND s.expires_at > ?"
    many = await db.fetch_value(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM sessions s WHERE {live} LIMIT ?) AS c",
        app_id,
        now,
        ONLINE_SCAN + 1,
    )
    not_a_key = "NOT EXISTS (SELECT 1 FROM license_keys k WHERE k.app_id = u.app_id AND k.key = u.username)"
    if many > ONLINE_SCAN:
        rows = await db.fetch_all(
            f"SELECT u.username FROM users u WHERE u.app_id = ? AND {_NAMED} AND EXISTS (SELECT 1 FROM "
            f"sessions s WHERE s.user_id = u.id AND {live}) AND {not_a_key} "
            "ORDER BY u.username LIMIT ?",
            app_id,
            app_id,
            now,
            limit,
        )
    else:
        rows = await db.fetch_all(
            "SELECT DISTINCT u.username FROM sessions s JOIN users u ON u.id = s.user_id "
            f"WHERE {live} AND {_NAMED} AND {not_a_key} ORDER BY u.username LIMIT ?",
            app_id,
            now,
            limit,
        )
    return [row["username"] for row in rows]


async def of_user(db: Executor, app_id: int, user_id: int, now: int, limit: int) -> list[Row]:
    """The user's sessions still open, newest first (an index lookup by user)."""
    return await db.fetch_all(
        "SELECT id, credential, created_at, expires_at, validated, ip, hwid, os, client_version "
        "FROM sessions WHERE user_id = ? AND app_id = ? AND expires_at > ? "
        "ORDER BY created_at DESC, id DESC LIMIT ?",
        user_id,
        app_id,
        now,
        limit,
    )


# --- the dashboard's list ----------------------------------------------------------------------

BROWSE_COLUMNS = "id, user_id, credential, created_at, expires_at, validated, ip, hwid"


async def browse(
    db: Executor,
    app_id: int,
    *,
    now: int,
    live: bool,
    validated: bool | None,
    user_id: int | None,
    ip: str | None,
    request: PageRequest,
) -> list[Row]:
    """One keyset page of sessions ordered by start (`request.size + 1` rows, see `paging.finish`):
    unexpired ones only when `live`, logged in or not when `validated` is set, of one user, from
    one address."""
    where, args = "app_id = ?", list[Any]([app_id])
    if live:
        where += " AND expires_at > ?"
        args.append(now)
    if validated is not None:
        where += " AND validated = ?"
        args.append(1 if validated else 0)
    if user_id is not None:
        where += " AND user_id = ?"
        args.append(user_id)
    if ip is not None:
        where += " AND ip = ?"
        args.append(ip)
    after, after_args, order = keyset("created_at", request)
    return await db.fetch_all(
        f"SELECT {BROWSE_COLUMNS} FROM sessions WHERE {where}{after} {order} LIMIT ?",
        *args,
        *after_args,
        request.size + 1,
    )


async def users_named(db: Executor, user_ids: list[int]) -> list[Row]:
    """(id, username, created_by) of these users."""
    if not user_ids:
        return []
    marks = ", ".join("?" for _ in user_ids)
    return await db.fetch_all(f"SELECT id, username, created_by FROM users WHERE id IN ({marks})", *user_ids)


async def keys_among(db: Executor, app_id: int, texts: list[str]) -> set[str]:
    """Which of `texts` are license keys of the application."""
    if not texts:
        return set()
    marks = ", ".join("?" for _ in texts)
    rows = await db.fetch_all(
        f"SELECT key FROM license_keys WHERE app_id = ? AND key IN ({marks})", app_id, *texts
    )
    return {row["key"] for row in rows}


async def open_ids_of_user(db: Executor, app_id: int, user_id: int, now: int) -> list[str]:
    """The ids of every unexpired session of the user."""
    rows = await db.fetch_all(
        "SELECT id FROM sessions WHERE user_id = ? AND app_id = ? AND expires_at > ?", user_id, app_id, now
    )
    return [row["id"] for row in rows]
