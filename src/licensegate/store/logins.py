"""SQL of the client API's login path (register, login, License Login, Upgrade Access): reads that
bring everything a login decides on in as few round trips as possible, and its writes."""

from __future__ import annotations

from licensegate.store.database import Executor, Row

_USER_COLUMNS = (
    "u.id AS user_id, u.username, u.password_hash, u.banned_reason AS user_banned, u.created_at, "
    "u.created_by, u.hwid_lock AS user_hwid_lock, u.otp_enabled, u.otp_secret, u.otp_last_step, "
    "u.last_login_at, u.last_ip, u.failed_logins, u.locked_until, u.lockouts"
)
# The user's HWIDs as a JSON array, oldest first: the one expression the two databases spell apart.
_HWIDS = {
    "sqlite": "(SELECT json_group_array(hwid) FROM "
    "(SELECT hwid FROM user_hwids WHERE user_id = u.id ORDER BY id))",
    "postgresql": "(SELECT json_agg(hwid ORDER BY id) FROM user_hwids WHERE user_id = u.id)",
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


def _hwids(db: Executor) -> str:
    return f"COALESCE({_HWIDS[db.dialect]}, '[]') AS hwids"


async def user_by_name(db: Executor, app_id: int, key: str) -> list[Row]:
    """Everything a login decides on about a user, in one round trip: the user, their HWIDs
    and their grants (one row per grant). Empty when no user has this `username_key`."""
    return await db.fetch_all(
        f"SELECT {_USER_COLUMNS}, {_hwids(db)}, {_GRANT_COLUMNS} FROM users u {_GRANT_JOINS} "
        "WHERE u.app_id = ? AND u.username_key = ? ORDER BY us.id",
        app_id,
        key,
    )


async def key_with_user(db: Executor, app_id: int, key: str) -> list[Row]:
    """The license key and, if it was redeemed, the user it made with their HWIDs and grants, in
    one round trip (one row per grant). Empty when no such key exists."""
    return await db.fetch_all(
        "SELECT k.id, k.key, k.level, k.duration, k.status, k.banned_reason, k.used_by_user_id, "
        f"k.generated_by_account_id, {_USER_COLUMNS}, {_hwids(db)}, {_GRANT_COLUMNS} "
        f"FROM license_keys k LEFT JOIN users u ON u.id = k.used_by_user_id {_GRANT_JOINS} "
        "WHERE k.app_id = ? AND k.key = ? ORDER BY us.id",
        app_id,
        key,
    )


async def grants(db: Executor, user_id: int) -> list[Row]:
    """Every grant of the user with what decides whether it is running: its expiry, its own pause
    and its subscription's pause; and the key that made it."""
    return await db.fetch_all(
        f"SELECT {_GRANT_COLUMNS} FROM user_subscriptions us "
        "JOIN subscriptions s ON s.id = us.subscription_id "
        "LEFT JOIN license_keys gk ON gk.id = us.key_id WHERE us.user_id = ? ORDER BY us.id",
        user_id,
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


async def record_login(db: Executor, user_id: int, ip: str, now: int) -> None:
    await db.execute("UPDATE users SET last_login_at = ?, last_ip = ? WHERE id = ?", now, ip, user_id)


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
