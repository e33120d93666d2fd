"""SQL of the client API's login path (register, login, License Login, Upgrade Access): reads that
bring everything a login decides on in as few round trips as possible, and its writes."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TypedDict, cast

from licensegate.store import overview
from licensegate.store.database import Database, Executor, Row
from licensegate.store.events import wanting

_USER_COLUMNS = (
    "u.id AS user_id, u.username, u.password_hash, u.banned_reason AS user_banned, u.created_at, "
    "u.created_by, u.hwid_lock AS user_hwid_lock, u.otp_enabled, u.otp_secret, u.otp_last_step, "
    "u.last_login_at, u.last_ip, u.failed_logins, u.locked_until, u.lockouts"
)
# The user's HWIDs as a JSON array, oldest first: the one expression the two databases spell apart.
# An appended HWID string (imported from KeyAuth, matched by containment) comes as a one-element
# array in it, so telling the two apart costs nothing more than a CASE.
_HWIDS = {
    "sqlite": "(SELECT json_group_array(CASE WHEN appended = 1 THEN json_array(hwid) ELSE hwid END) "
    "FROM (SELECT hwid, appended FROM user_hwids WHERE user_id = u.id ORDER BY id))",
    "postgresql": "(SELECT json_agg(CASE WHEN appended = 1 THEN json_build_array(hwid) "
    "ELSE to_json(hwid) END ORDER BY id) FROM user_hwids WHERE user_id = u.id)",
}
# One row per grant of the user (a single row of NULL grant columns when they have none).
_GRANT_COLUMNS = (
    "s.name AS subscription, s.paused_at AS sub_paused_at, us.expires_at, us.paused_at, gk.key AS grant_key"
)
_GRANT_JOINS = (
    "LEFT JOIN user_subscriptions us ON us.user_id = u.id "
    "LEFT JOIN subscriptions s ON s.id = us.subscription_id "
    "LEFT JOIN license_keys gk ON gk.id = us.key_id"
)


class UserRow(TypedDict):
    """A user as a login reads them (`_USER_COLUMNS`) with their HWIDs (`hwids`, a JSON array whose
    appended HWID strings are one-element arrays)."""

    user_id: int
    username: str
    password_hash: str | None
    user_banned: str | None
    created_at: int
    created_by: str
    user_hwid_lock: int
    otp_enabled: int
    otp_secret: str | None
    otp_last_step: int | None
    last_login_at: int | None
    last_ip: str | None
    failed_logins: int
    locked_until: int | None
    lockouts: int
    hwids: str


class GrantRow(TypedDict):
    """One grant (`_GRANT_COLUMNS`): its subscription, both pauses, its expiry and the key that made it."""

    subscription: str
    sub_paused_at: int | None
    expires_at: int
    paused_at: int | None
    grant_key: str | None


class AccountRow(UserRow):
    """A row of `user_by_name`: the user and one of their grants, whose columns are all None on
    the single row of a user who has none."""

    subscription: str | None
    sub_paused_at: int | None
    expires_at: int | None
    paused_at: int | None
    grant_key: str | None


class KeyUserRow(AccountRow):
    """A row of `key_with_user`: the key, then (None while `used_by_user_id` is None) its user."""

    id: int
    key: str
    level: str
    duration: int
    status: str
    banned_reason: str | None
    used_by_user_id: int | None
    generated_by_account_id: int | None


def _hwids(db: Executor) -> str:
    return f"COALESCE({_HWIDS[db.dialect]}, '[]') AS hwids"


async def user_by_name(db: Executor, app_id: int, key: str) -> list[AccountRow]:
    """Everything a login decides on about a user, in one round trip: the user, their HWIDs
    and their grants (one row per grant). Empty when no user has this `username_key`."""
    rows = await db.fetch_all(
        f"SELECT {_USER_COLUMNS}, {_hwids(db)}, {_GRANT_COLUMNS} FROM users u {_GRANT_JOINS} "
        "WHERE u.app_id = ? AND u.username_key = ? ORDER BY us.id",
        app_id,
        key,
    )
    return cast("list[AccountRow]", rows)


def _key_select(hwids: str) -> str:
    """`key_with_user`'s columns (`hwids`: `_hwids`' expression)."""
    return (
        "SELECT k.id, k.key, k.level, k.duration, k.status, k.banned_reason, k.used_by_user_id, "
        f"k.generated_by_account_id, {_USER_COLUMNS}, {hwids}, {_GRANT_COLUMNS}"
    )


_KEY_FROM = f"FROM license_keys k LEFT JOIN users u ON u.id = k.used_by_user_id {_GRANT_JOINS}"


async def key_with_user(db: Executor, app_id: int, key: str) -> list[KeyUserRow]:
    """The license key and, if it was redeemed, the user it made with their HWIDs and grants, in
    one round trip (one row per grant). Empty when no such key exists."""
    rows = await db.fetch_all(
        f"{_key_select(_hwids(db))} {_KEY_FROM} WHERE k.app_id = ? AND k.key = ? ORDER BY us.id",
        app_id,
        key,
    )
    return cast("list[KeyUserRow]", rows)


async def grants(db: Executor, user_id: int) -> list[GrantRow]:
    """Every grant of the user with what decides whether it is running: its expiry, its own pause
    and its subscription's pause; and the key that made it."""
    rows = await db.fetch_all(
        f"SELECT {_GRANT_COLUMNS} FROM user_subscriptions us "
        "JOIN subscriptions s ON s.id = us.subscription_id "
        "LEFT JOIN license_keys gk ON gk.id = us.key_id WHERE us.user_id = ? ORDER BY us.id",
        user_id,
    )
    return cast("list[GrantRow]", rows)


# --- the first use of a key: the writes of the transaction that makes its user ----------------


async def insert_first_hwid(db: Executor, user_id: int, hwid: str, now: int) -> None:
    """Bind the first HWID of a user made in this transaction (who holds none yet)."""
    await db.execute(
        "INSERT INTO user_hwids (user_id, hwid, created_at) VALUES (?, ?, ?)", user_id, hwid, now
    )


async def lock_user(db: Executor, user_id: int) -> None:
    """Serialise changes to one user until the transaction ends (a row lock on PostgreSQL;
    SQLite's BEGIN IMMEDIATE serialises writers already)."""
    await db.execute("UPDATE users SET hwid_lock = hwid_lock WHERE id = ?", user_id)


async def bind_hwid(db: Executor, user_id: int, hwid: str, max_hwids: int, now: int) -> bool:
    """Bind one more HWID if the user holds fewer than `max_hwids`. Run after `lock_user`, in the
    same transaction, so concurrent first logins cannot both see room for one."""
    added = await db.execute(
        "INSERT INTO user_hwids (user_id, hwid, created_at) SELECT ?, ?, ? "
        "WHERE (SELECT COUNT(*) FROM user_hwids WHERE user_id = ?) < ? "
        "ON CONFLICT (user_id, hwid) DO NOTHING",
        user_id,
        hwid,
        now,
        user_id,
        max_hwids,
    )
    return added == 1


async def settle_hwid(db: Executor, user_id: int, hwid: str) -> None:
    """An appended HWID string that a device presented whole is that one device's HWID: from now
    on it is matched exactly, as every other."""
    await db.execute(
        "UPDATE user_hwids SET appended = 0 WHERE user_id = ? AND hwid = ? AND appended = 1", user_id, hwid
    )


async def record_login(db: Executor, user_id: int, ip: str, now: int) -> None:
    await db.execute("UPDATE users SET last_login_at = ?, last_ip = ? WHERE id = ?", now, ip, user_id)


async def refresh_last_login(db: Database, user_id: int, now: int) -> None:
    """Move the time of a user's last login from the address it last came from, and nothing
    else. On PostgreSQL its commit does not wait for the write-ahead log to reach the disk
    (`synchronous_commit` off for this transaction only): a crash of PostgreSQL itself within
    the WAL writer's delay (600 ms at most by default) may forget this refreshed time, never
    anything else, where waiting for the flush made every such re-check cost a disk sync. A
    crash of the service loses nothing: the commit has returned before the answer goes out."""
    sql = "UPDATE users SET last_login_at = ? WHERE id = ?"
    if db.dialect != "postgresql":
        await db.execute(sql, now, user_id)
        return
    async with db.transaction() as tx:
        await tx.fetch_value("SELECT set_config('synchronous_commit', 'off', true)")
        await tx.execute(sql, now, user_id)


async def set_first_password(db: Executor, user_id: int, password_hash: str) -> int:
    """Set a password only where none is set yet (the first login of a user created without one)."""
    return await db.execute(
        "UPDATE users SET password_hash = ? WHERE id = ? AND password_hash IS NULL", password_hash, user_id
    )


async def use_otp_step(db: Executor, user_id: int, step: int) -> bool:
    """Consume a one-time code's time step; False when it (or a later one) was already used, so a
    code cannot be replayed."""
    changed = await db.execute(
        "UPDATE users SET otp_last_step = ? WHERE id = ? AND (otp_last_step IS NULL OR otp_last_step < ?)",
        step,
        user_id,
        step,
    )
    return changed == 1


async def start_otp_enrolment(db: Executor, user_id: int, secret: str, expires_at: int) -> None:
    await db.execute(
        "UPDATE users SET otp_pending_secret = ?, otp_pending_expires = ? WHERE id = ?",
        secret,
        expires_at,
        user_id,
    )


async def otp_state(db: Executor, user_id: int) -> Row | None:
    return await db.fetch_one(
        "SELECT username, otp_enabled, otp_secret, otp_last_step, otp_pending_secret, otp_pending_expires "
        "FROM users WHERE id = ?",
        user_id,
    )


async def enable_otp(db: Executor, user_id: int, secret: str, step: int) -> int:
    return await db.execute(
        "UPDATE users SET otp_enabled = 1, otp_secret = ?, otp_last_step = ?, otp_pending_secret = NULL, "
        "otp_pending_expires = NULL WHERE id = ? AND otp_enabled = 0",
        secret,
        step,
        user_id,
    )


async def disable_otp(db: Executor, user_id: int) -> int:
    return await db.execute(
        "UPDATE users SET otp_enabled = 0, otp_secret = NULL, otp_last_step = NULL "
        "WHERE id = ? AND otp_enabled = 1",
        user_id,
    )


async def extend_running_grant(
    db: Executor, user_id: int, subscription_id: int, seconds: int, now: int
) -> int:
    """Lengthen the user's running (unexpired, unfrozen) grants of this subscription."""
    return await db.execute(
        "UPDATE user_subscriptions SET expires_at = expires_at + ? "
        "WHERE user_id = ? AND subscription_id = ? AND expires_at > ? AND paused_at IS NULL",
        seconds,
        user_id,
        subscription_id,
        now,
    )


async def count_failed_login(db: Executor, user_id: int) -> tuple[int, int]:
    """One more wrong password: the user's failures in a row and lock-outs in a row after it."""
    row = await db.fetch_one(
        "UPDATE users SET failed_logins = failed_logins + 1 WHERE id = ? RETURNING failed_logins, lockouts",
        user_id,
    )
    return (row["failed_logins"], row["lockouts"]) if row is not None else (0, 0)


async def lock(db: Executor, user_id: int, until: int, failures: int) -> None:
    """Lock the user's password sign-in until `until`, once (of concurrent failures reaching
    `failures`, the first to get here locks and starts the count over)."""
    await db.execute(
        "UPDATE users SET locked_until = ?, lockouts = lockouts + 1, failed_logins = 0 "
        "WHERE id = ? AND failed_logins >= ?",
        until,
        user_id,
        failures,
    )


async def clear_lockout(db: Executor, user_id: int) -> int:
    """Start the count, the lock and the doubling over; the number of users changed."""
    return await db.execute(
        "UPDATE users SET failed_logins = 0, locked_until = NULL, lockouts = 0 WHERE id = ?", user_id
    )


# What a session records of a login, in `sessions.login_record`'s order after user, credential, HWID.
_SESSION_DETAILS = "os, architecture, device, cpu_cores, ram, client_version, client_token"

# A transaction-local setting naming the user this transaction made: its versions' moves are not
# announced, since no worker can hold what was not committed yet (migration 0062).
MADE_USER = "licensegate.made_user"

# PostgreSQL: a License Login's read of its key and, when the key is unused, its first use, in one
# statement (data-modifying CTEs). The key is marked used first, and only while it is still
# unused, unbanned and its level has a subscription, the client is not blacklisted (`blocked`: a
# HWID listed, or the address or a range containing it listed and neither whitelisted:
# `domain.blacklists.blocked`'s rule), and no endpoint of the application wants the first use's
# events (this statement writes none: the caller takes the transaction that does); every other
# write takes its rows from that one, so a key that is used already, or that another request
# redeemed first (whose row lock this statement waited for), changes nothing. The user's id is
# drawn from its sequence by the key's update (when it updates), so the key can name it; the user
# belongs to the reseller whose key it is. A taken username violates the unique constraint and the
# whole statement is undone. Constraints are checked at the statement's end, when the user the key
# refers to exists. The overview's counters of new users and redeemed keys (`store.overview.bump`
# elsewhere) gain one each when the user is made, each in a slot picked at random. The rows are
# `key_with_user`'s as they were before the statement (the key, its user, HWIDs and grants), each
# with what the first use did.
# `{wanted}`: `store.events.wanting` of the first use's events.
_KEY_OR_FIRST_USE = """
WITH the_key AS (
    -- By the unique index alone: with the status in the same condition, a generic plan may walk
    -- every unused key of the application (seen with stale statistics: 0.6 ms at 12,500 keys).
    SELECT id FROM license_keys WHERE app_id = $4::bigint AND key = $2::text
),
blocked AS (
    SELECT 1 FROM blacklist WHERE app_id = $4::bigint AND kind = 'hwid' AND value = ANY($19::text[])
    UNION ALL
    SELECT 1 WHERE (
        EXISTS (SELECT 1 FROM blacklist WHERE app_id = $4::bigint AND kind = 'ip' AND value = $20::text)
        OR EXISTS (SELECT 1 FROM blacklist
            WHERE app_id = $4::bigint AND kind = 'cidr' AND value = ANY($21::text[]))
    ) AND NOT EXISTS (SELECT 1 FROM whitelist WHERE app_id = $4::bigint AND value = $20::text)
        AND NOT EXISTS (SELECT 1 FROM whitelist WHERE app_id = $4::bigint AND value = ANY($21::text[]))
),
used AS (
    UPDATE license_keys k SET status = 'used', used_at = $1::bigint,
        used_by_user_id = nextval(pg_get_serial_sequence('users', 'id')), used_by = $2::text
    WHERE k.id = (SELECT id FROM the_key) AND k.status = 'unused' AND k.banned_reason IS NULL
        AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.app_id = k.app_id AND s.level = k.level)
        AND NOT EXISTS (SELECT 1 FROM blocked) AND NOT {wanted}
    RETURNING k.id, k.level, k.duration, k.generated_by_account_id, k.used_by_user_id AS user_id
),
made AS (
    INSERT INTO users (id, app_id, username, username_fold, username_key, hwid_lock, created_by,
        owner_account_id, created_at, last_login_at, last_ip)
    SELECT u.user_id, $4::bigint, $2::text, $3::text,
        CASE WHEN a.case_insensitive_usernames = 1 THEN $3::text ELSE $2::text END,
        1, $5::text, u.generated_by_account_id, $1::bigint, $1::bigint, $6::text
    FROM used u, apps a WHERE a.id = $4::bigint
    RETURNING id
),
counted AS (
    INSERT INTO daily_counts (app_id, day, kind, outcome, count, slot)
    SELECT $4::bigint, ($1::bigint / 86400)::int, c.kind, '', 1, floor(random() * {slots})::int
    FROM made, (VALUES ('user'), ('key')) AS c (kind)
    ON CONFLICT (app_id, day, kind, outcome, slot) DO UPDATE SET count = daily_counts.count + 1
),
token AS (
    INSERT INTO tokens (app_id, token_hash, token_sealed, kind, assigned, user_id, created_at)
    SELECT $4::bigint, $7::text, $8::text, 'user', $2::text, id, $1::bigint FROM made
),
device AS (
    INSERT INTO user_hwids (user_id, hwid, created_at)
    SELECT id, $9::text, $1::bigint FROM made WHERE $9::text IS NOT NULL AND $10::int > 0
),
granted AS (
    INSERT INTO user_subscriptions (user_id, subscription_id, expires_at, key_id, created_at)
    SELECT m.id, s.id, COALESCE(s.paused_at, $1::bigint) + u.duration, u.id, $1::bigint
    FROM made m, used u JOIN subscriptions s ON s.app_id = $4::bigint AND s.level = u.level
    ORDER BY s.id
    RETURNING id, subscription_id, expires_at, paused_at
),
session AS (
    UPDATE sessions SET validated = 1, user_id = m.id, credential = $2::text, hwid = $9::text,
        ({details}) = ($11::text, $12::text, $13::text, $14::text, $15::text, $16::text, $17::text)
    FROM made m WHERE sessions.id = $18::text
)
{key_rows},
    (SELECT id FROM made) AS made_user_id,
    -- Set before the triggers of this statement move the new user versions (migration 0062).
    set_config('{made_user}', COALESCE((SELECT id FROM made)::text, ''), true) AS made_mark,
    EXISTS (SELECT 1 FROM blocked) AS blacklisted,
    EXISTS (
        SELECT 1 FROM license_keys k WHERE k.id = (SELECT id FROM the_key)
            AND k.status = 'unused' AND k.banned_reason IS NULL
            AND NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.app_id = k.app_id AND s.level = k.level)
    ) AS no_subscription,
    {wanted} AS events_wanted,
    (SELECT json_agg(json_build_object('subscription', s.name, 'sub_paused_at', s.paused_at,
            'expires_at', g.expires_at, 'paused_at', g.paused_at) ORDER BY g.id)
        FROM granted g JOIN subscriptions s ON s.id = g.subscription_id) AS made_grants
{key_from}
"""


class KeyOrFirstUseRow(KeyUserRow):
    """A row of `key_or_first_use`: `key_with_user`'s, and what the first use did."""

    made_user_id: int | None  # the user the first use made (None: nothing was written)
    blacklisted: bool  # the client is blacklisted: nothing was written
    no_subscription: bool  # the key is unused but its level has no subscription
    events_wanted: bool  # an endpoint wants the first use's events: nothing was written
    made_grants: str | None  # JSON: the new grants, without their key


async def key_or_first_use(
    db: Executor,
    *,
    app_id: int,
    key: str,
    key_fold: str,
    created_by: str,
    token_hash: str,
    token_sealed: str,
    hwid: str | None,
    max_hwids: int,
    session_id: str,
    details: tuple[object, ...],
    ip: str,
    now: int,
    events: tuple[tuple[str, bool], ...],
    blacklist_hwids: Sequence[str],
    blacklist_ip: str | None,
    blacklist_ranges: Sequence[str],
) -> list[KeyOrFirstUseRow]:
    """`key_with_user`'s rows of the key (empty: no such key) and, if it was unused, its first use
    in the same statement on PostgreSQL: redeem it into a new user named by it, grant the key's
    subscriptions, bind the HWID, issue the user's token and log the session in. `made_user_id`
    None: nothing was written, because the key was used, banned or redeemed meanwhile, or
    `blacklisted` says the blacklist refuses the client (its `blacklist_hwids`, its canonical
    address `blacklist_ip` or one of the `blacklist_ranges` containing it), or
    `no_subscription` that the key's level has none, or `events_wanted` that an endpoint wants
    one of `events`, (name, opt-in). Raises UniqueViolation when a user with the key's name
    exists."""
    rows = await db.fetch_all(
        _key_or_first_use_sql(events),
        now,
        key,
        key_fold,
        app_id,
        created_by,
        ip,
        token_hash,
        token_sealed,
        hwid,
        max_hwids,
        *details,
        session_id,
        list(blacklist_hwids),
        blacklist_ip,
        list(blacklist_ranges),
    )
    return cast("list[KeyOrFirstUseRow]", rows)


@lru_cache(maxsize=8)
def _key_or_first_use_sql(events: tuple[tuple[str, bool], ...]) -> str:
    return _KEY_OR_FIRST_USE.format(
        wanted=wanting("$4::bigint", events),
        details=_SESSION_DETAILS,
        key_rows=_key_select(f"COALESCE({_HWIDS['postgresql']}, '[]') AS hwids"),
        key_from=f"{_KEY_FROM} WHERE k.app_id = $4::bigint AND k.key = $2::text ORDER BY us.id",
        slots=overview.SLOTS,
        made_user=MADE_USER,
    )
