"""SQL for applications."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

from licensegate.store.database import Executor, Row
from licensegate.store.freezes import SUB_PAUSE, give_back

CLIENT_RATE_LIMIT = 60_000  # a new application's client_rate_limit (the column's default)


async def exists_for_account(db: Executor, account_id: int, name: str) -> bool:
    found = await db.fetch_value("SELECT 1 FROM apps WHERE account_id = ? AND name = ?", account_id, name)
    return found is not None


async def insert(
    db: Executor,
    *,
    account_id: int,
    ownerid: str,
    name: str,
    secret: str,
    signing_key: str,
    public_key: str,
    now: int,
) -> int:
    """`secret` and `signing_key` arrive sealed (domain.appkeys)."""
    app_id: int = await db.fetch_value(
        "INSERT INTO apps (account_id, ownerid, name, secret, signing_key, public_key, created_at, "
        "updated_at, client_rate_limit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        account_id,
        ownerid,
        name,
        secret,
        signing_key,
        public_key,
        now,
        now,
        CLIENT_RATE_LIMIT,
    )
    return app_id


async def get(db: Executor, app_id: int) -> Row | None:
    return await db.fetch_one("SELECT * FROM apps WHERE id = ?", app_id)


async def rename(db: Executor, app_id: int, name: str, now: int) -> int:
    """0 when another application of the same owner has that name (the unique index decides)."""
    rows = await db.fetch_all(
        "UPDATE apps SET name = ?, updated_at = ? WHERE id = ? AND NOT EXISTS "
        "(SELECT 1 FROM apps o WHERE o.account_id = apps.account_id AND o.name = ? AND o.id <> apps.id) "
        "RETURNING id",
        name,
        now,
        app_id,
        name,
    )
    return len(rows)


async def delete(db: Executor, app_id: int) -> int:
    """Delete the application and all it holds (foreign keys cascade), with its resellers' and
    managers' accounts (run inside a transaction). The audit log keeps its entries."""
    await db.execute(
        "DELETE FROM accounts WHERE id IN (SELECT account_id FROM team_members WHERE app_id = ?)", app_id
    )
    return await db.execute("DELETE FROM apps WHERE id = ?", app_id)


async def list_for_account(db: Executor, account_id: int) -> list[Row]:
    """The owner's applications, by name."""
    return await db.fetch_all(
        "SELECT id, name, ownerid, version, enabled, paused_at, created_at FROM apps "
        "WHERE account_id = ? ORDER BY name, id",
        account_id,
    )


async def lock(db: Executor, app_id: int) -> None:
    """Serialise writers of one application until the transaction ends.

    A no-op UPDATE takes the application row's lock on PostgreSQL (SQLite's BEGIN IMMEDIATE
    serialises writers already). Used where two transactions could otherwise both see a name or
    key free and then collide on a unique index, or deadlock inserting what the other will try.
    """
    await db.execute("UPDATE apps SET updated_at = updated_at WHERE id = ?", app_id)


# The settings columns an owner may change (the only column names `update_settings` writes).
SETTING_COLUMNS = frozenset(
    {
        "version",
        "download_link",
        "enabled",
        "hwid_lock",
        "force_hwid",
        "min_hwid_length",
        "max_hwids",
        "hwid_reset_cooldown",
        "session_seconds",
        "min_username_length",
        "hash_check",
        "seller_log",
        "log_webhook_url",
        "tamper_action",
        "client_rate_limit",
        "client_rate_window",
        "auth_rate_limit",
        "auth_rate_window",
        "chat_history",
        "log_retention_days",
        "case_insensitive_usernames",
        "token_validation",
        "web_loader_download",
        "customer_panel",
    }
)


async def update_settings(db: Executor, app_id: int, changes: Mapping[str, object], now: int) -> int:
    """Write the given settings columns (names from SETTING_COLUMNS only; values are bound)."""
    unknown = set(changes) - SETTING_COLUMNS
    if unknown:
        raise ValueError(f"not settings columns: {sorted(unknown)}")
    columns = sorted(changes)
    assignments = "".join(f"{column} = ?, " for column in columns)
    return await db.execute(
        f"UPDATE apps SET {assignments}updated_at = ? WHERE id = ?",
        *(changes[column] for column in columns),
        now,
        app_id,
    )


async def pause(db: Executor, app_id: int, now: int) -> int:
    """Mark the application paused; 0 when it already was."""
    return await db.execute(
        "UPDATE apps SET paused_at = ?, updated_at = ? WHERE id = ? AND paused_at IS NULL", now, now, app_id
    )


# Where a grant's clock stopped on its own while the application was paused: at its user pause
# (which can only begin while its subscription runs, so it is the earlier), else at its
# subscription's pause, else it ran until now. Bind: now.
async def unpause(db: Executor, app_id: int, paused_at: int, now: int) -> int:
    """Give back the time the application's pause froze, then clear the pause. Every grant of the
    application that was running when its clock stopped moves forward by the stretch this pause
    alone held it (see `freezes.give_back`). Run inside a transaction."""
    await db.execute(
        "UPDATE user_subscriptions SET expires_at = expires_at + "
        f"{give_back(db.dialect, '?', ('paused_at', SUB_PAUSE))} "
        "WHERE user_id IN (SELECT id FROM users WHERE app_id = ?) "
        f"AND (expires_at > ? OR expires_at > paused_at OR expires_at > {SUB_PAUSE})",
        now,
        now,
        now,
        paused_at,
        app_id,
        paused_at,
    )
    return await db.execute(
        "UPDATE apps SET paused_at = NULL, updated_at = ? WHERE id = ? AND paused_at = ?",
        now,
        app_id,
        paused_at,
    )


async def retention(db: Executor) -> list[Row]:
    """Every application's id and how many days it keeps client logs and tamper reports."""
    return await db.fetch_all("SELECT id, log_retention_days FROM apps ORDER BY id")


async def stats(db: Executor, app_id: int, now: int) -> Row:
    """Counts of what the application holds, in one round trip."""
    row = await db.fetch_one(
        "SELECT "
        "(SELECT COUNT(*) FROM users WHERE app_id = ?) AS users, "
        "(SELECT COUNT(*) FROM license_keys WHERE app_id = ? AND status = 'unused' "
        "AND banned_reason IS NULL) AS keys_unused, "
        "(SELECT COUNT(*) FROM license_keys WHERE app_id = ? AND status = 'used' "
        "AND banned_reason IS NULL) AS keys_used, "
        "(SELECT COUNT(*) FROM license_keys WHERE app_id = ? AND banned_reason IS NOT NULL) AS keys_banned, "
        "(SELECT COUNT(*) FROM license_keys WHERE app_id = ?) AS keys_total, "
        "(SELECT COUNT(*) FROM sessions WHERE app_id = ? AND expires_at > ?) AS sessions_active, "
        "(SELECT COUNT(*) FROM sessions WHERE app_id = ? AND expires_at > ? AND validated = 1) "
        "AS sessions_online, "
        "(SELECT COUNT(*) FROM subscriptions WHERE app_id = ?) AS subscriptions, "
        "(SELECT COUNT(*) FROM global_vars WHERE app_id = ?) AS globalvars, "
        "(SELECT COUNT(*) FROM files WHERE app_id = ?) AS files, "
        "(SELECT COUNT(*) FROM webhooks WHERE app_id = ?) AS webhooks, "
        "(SELECT COUNT(*) FROM team_members t JOIN accounts a ON a.id = t.account_id "
        "WHERE t.app_id = ? AND a.role = 'reseller') AS resellers, "
        "(SELECT COUNT(*) FROM team_members t JOIN accounts a ON a.id = t.account_id "
        "WHERE t.app_id = ? AND a.role = 'manager') AS managers",
        *([app_id] * 6),
        now,
        app_id,
        now,
        *([app_id] * 6),
    )
    assert row is not None
    return row


# Everything a client call may decide on about its application.
CLIENT_COLUMNS = (
    "a.id AS app_id, a.ownerid, a.name AS app_name, a.version, a.download_link, a.enabled, "
    "a.paused_at AS app_paused_at, a.hwid_lock, a.force_hwid, a.min_hwid_length, a.max_hwids, "
    "a.session_seconds, a.min_username_length, a.hash_check, a.tamper_action, "
    "a.client_rate_limit, a.client_rate_window, a.auth_rate_limit, a.auth_rate_window, "
    "a.chat_history, a.log_webhook_url, a.token_validation, a.case_insensitive_usernames, "
    "a.signing_key, a.secret AS app_secret, a.seats, a.named_limits, a.heartbeat_interval, "
    "o.username AS owner"
)
CLIENT_FROM = "FROM apps a JOIN accounts o ON o.id = a.account_id"


class ClientAppRow(TypedDict):
    """A row of `CLIENT_COLUMNS`."""

    app_id: int
    ownerid: str
    app_name: str
    owner: str
    version: str
    download_link: str | None
    log_webhook_url: str | None
    tamper_action: str
    signing_key: str | None
    app_secret: str
    app_paused_at: int | None
    # flags: 0 or 1
    enabled: int
    hwid_lock: int
    force_hwid: int
    hash_check: int
    token_validation: int
    case_insensitive_usernames: int
    seats: int
    named_limits: int
    # numbers
    heartbeat_interval: int
    min_hwid_length: int
    max_hwids: int
    session_seconds: int
    min_username_length: int
    chat_history: int
    client_rate_limit: int
    client_rate_window: int
    auth_rate_limit: int
    auth_rate_window: int


async def find_for_client(db: Executor, ownerid: str, name: str) -> ClientAppRow | None:
    row = await db.fetch_one(
        f"SELECT {CLIENT_COLUMNS} {CLIENT_FROM} WHERE a.ownerid = ? AND a.name = ?", ownerid, name
    )
    return cast("ClientAppRow | None", row)


class VersionedClientAppRow(ClientAppRow):
    login_version: int


async def find_for_client_versioned(db: Executor, ownerid: str, name: str) -> VersionedClientAppRow | None:
    """`find_for_client` with the application's login version, read in the same statement."""
    row = await db.fetch_one(
        f"SELECT {CLIENT_COLUMNS}, a.login_version {CLIENT_FROM} WHERE a.ownerid = ? AND a.name = ?",
        ownerid,
        name,
    )
    return cast("VersionedClientAppRow | None", row)


async def login_version(db: Executor, app_id: int) -> int | None:
    """The application's login version (None: no such application)."""
    version: int | None = await db.fetch_value("SELECT login_version FROM apps WHERE id = ?", app_id)
    return version


async def find_for_client_by_id(db: Executor, app_id: int) -> ClientAppRow | None:
    row = await db.fetch_one(f"SELECT {CLIENT_COLUMNS} {CLIENT_FROM} WHERE a.id = ?", app_id)
    return cast("ClientAppRow | None", row)


MAX_NEAR_MISSES = 20


async def near_misses(db: Executor, ownerid: str, name: str) -> list[Row]:
    """Applications a client that named no known application may have meant: those of the same
    `ownerid` (a typo in the name) and those of the same name (a typo in the ownerid), a bounded
    few of each, each read through an index."""
    by_owner = await db.fetch_all(
        "SELECT id, ownerid, name FROM apps WHERE ownerid = ? ORDER BY id LIMIT ?",
        ownerid,
        MAX_NEAR_MISSES,
    )
    by_name = await db.fetch_all(
        "SELECT id, ownerid, name FROM apps WHERE name = ? ORDER BY id LIMIT ?", name, MAX_NEAR_MISSES
    )
    return [*by_owner, *by_name]
