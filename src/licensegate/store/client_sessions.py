"""SQL of the client API's own path: finding the calling application, and its sessions.

These run on every client call, so each is one indexed statement; the session lookup brings the
application's settings with it in the same round trip.
"""

from __future__ import annotations

from typing import Any

from licensegate.store.database import Executor, Row

# Everything a client call may decide on about its application.
APP_COLUMNS = (
    "a.id AS app_id, a.ownerid, a.name AS app_name, a.version, a.download_link, a.enabled, "
    "a.paused_at AS app_paused_at, a.hwid_lock, a.force_hwid, a.min_hwid_length, a.max_hwids, "
    "a.session_seconds, a.min_username_length, a.hash_check, a.tamper_action, "
    "a.client_rate_limit, a.client_rate_window, a.auth_rate_limit, a.auth_rate_window, "
    "a.chat_history, a.log_webhook_url, o.username AS owner"
)
_FROM_APPS = "FROM apps a JOIN accounts o ON o.id = a.account_id"
SESSION_COLUMNS = (
    "s.id AS session_id, s.user_id, s.credential, s.validated, s.created_at AS session_created_at, "
    "s.expires_at AS session_expires_at"
)


async def find_app(db: Executor, ownerid: str, name: str) -> Row | None:
    return await db.fetch_one(
        f"SELECT {APP_COLUMNS} {_FROM_APPS} WHERE a.ownerid = ? AND a.name = ?", ownerid, name
    )


async def find_with_app(db: Executor, session_id: str) -> Row | None:
    """The session and its application's settings, in one round trip."""
    return await db.fetch_one(
        f"SELECT {SESSION_COLUMNS}, {APP_COLUMNS} FROM sessions s JOIN apps a ON a.id = s.app_id "
        "JOIN accounts o ON o.id = a.account_id WHERE s.id = ?",
        session_id,
    )


async def insert(db: Executor, *, session_id: str, app_id: int, ip: str, now: int, expires_at: int) -> None:
    await db.execute(
        "INSERT INTO sessions (id, app_id, ip, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
        session_id,
        app_id,
        ip,
        now,
        expires_at,
    )


async def validate(
    db: Executor,
    session_id: str,
    *,
    user_id: int,
    credential: str,
    hwid: str | None,
    client: dict[str, Any],
) -> int:
    """Mark the session logged in as this user, with what the client told about itself."""
    return await db.execute(
        "UPDATE sessions SET validated = 1, user_id = ?, credential = ?, hwid = ?, os = ?, "
        "architecture = ?, device = ?, cpu_cores = ?, ram = ?, client_version = ? WHERE id = ?",
        user_id,
        credential,
        hwid,
        client.get("os"),
        client.get("architecture"),
        client.get("device"),
        client.get("cpu_cores"),
        client.get("ram"),
        client.get("version"),
        session_id,
    )


async def delete(db: Executor, session_id: str) -> int:
    return await db.execute("DELETE FROM sessions WHERE id = ?", session_id)


async def delete_for_user(db: Executor, user_id: int) -> int:
    return await db.execute("DELETE FROM sessions WHERE user_id = ?", user_id)


async def purge_expired(db: Executor, now: int, batch: int = 1000) -> int:
    """Delete up to `batch` expired sessions; small batches keep each write short."""
    return await db.execute(
        "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= ? LIMIT ?)",
        now,
        batch,
    )


async def online_credentials(db: Executor, app_id: int, now: int, limit: int) -> list[str]:
    rows = await db.fetch_all(
        "SELECT DISTINCT credential FROM sessions WHERE app_id = ? AND validated = 1 AND expires_at > ? "
        "AND credential IS NOT NULL ORDER BY credential LIMIT ?",
        app_id,
        now,
        limit,
    )
    return [row["credential"] for row in rows]


async def app_counts(db: Executor, app_id: int, now: int) -> Row:
    """Users, validated unexpired sessions and license keys of the application."""
    row = await db.fetch_one(
        "SELECT (SELECT COUNT(*) FROM users WHERE app_id = ?) AS users, "
        "(SELECT COUNT(*) FROM sessions WHERE app_id = ? AND validated = 1 AND expires_at > ?) AS online, "
        "(SELECT COUNT(*) FROM license_keys WHERE app_id = ?) AS keys",
        app_id,
        app_id,
        now,
        app_id,
    )
    assert row is not None
    return row


async def message_overrides(db: Executor, app_id: int) -> dict[str, str]:
    rows = await db.fetch_all("SELECT name, text FROM app_messages WHERE app_id = ?", app_id)
    return {row["name"]: row["text"] for row in rows}


async def hash_allowed(db: Executor, app_id: int, program_hash: str) -> bool:
    found = await db.fetch_value(
        "SELECT 1 FROM app_hashes WHERE app_id = ? AND hash = ?", app_id, program_hash
    )
    return found is not None
