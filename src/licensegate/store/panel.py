"""SQL for customer-panel sessions (`panel_sessions`): an end user signed in to the customer panel
of one application, and the one web-loader token such a session may hold."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor


class PanelSessionRow(TypedDict):
    session_id: int
    app_id: int
    user_id: int
    username: str
    banned_reason: str | None
    hwid_cooldown: int | None
    hwid_reset_at: int | None
    created_at: int
    expires_at: int
    last_seen_at: int


async def insert(
    db: Executor,
    *,
    app_id: int,
    user_id: int,
    token_hash: str,
    ip: str | None,
    user_agent: str | None,
    now: int,
    expires_at: int,
) -> int:
    session_id: int = await db.fetch_value(
        "INSERT INTO panel_sessions (app_id, user_id, token_hash, ip, user_agent, created_at, expires_at, "
        "last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        user_id,
        token_hash,
        ip,
        user_agent,
        now,
        expires_at,
        now,
    )
    return session_id


async def find(db: Executor, app_id: int, token_hash: str) -> PanelSessionRow | None:
    """The session of this application with this token digest, with its user."""
    row = await db.fetch_one(
        "SELECT p.id AS session_id, p.app_id, p.user_id, u.username, u.banned_reason, u.hwid_cooldown, "
        "u.hwid_reset_at, p.created_at, p.expires_at, p.last_seen_at "
        "FROM panel_sessions p JOIN users u ON u.id = p.user_id WHERE p.token_hash = ? AND p.app_id = ?",
        token_hash,
        app_id,
    )
    return cast("PanelSessionRow | None", row)


async def touch(db: Executor, session_id: int, now: int) -> None:
    await db.execute("UPDATE panel_sessions SET last_seen_at = ? WHERE id = ?", now, session_id)


async def delete(db: Executor, session_id: int) -> int:
    return await db.execute("DELETE FROM panel_sessions WHERE id = ?", session_id)


async def delete_for_user(db: Executor, user_id: int) -> int:
    """End the user's panel sessions (their password changed)."""
    return await db.execute("DELETE FROM panel_sessions WHERE user_id = ?", user_id)


async def purge_expired(db: Executor, now: int, idle_before: int) -> int:
    return await db.execute(
        "DELETE FROM panel_sessions WHERE expires_at <= ? OR last_seen_at <= ?", now, idle_before
    )


async def set_handoff(db: Executor, session_id: int, token_hash: str, expires_at: int) -> None:
    """The session's web-loader token (a new one replaces the one before)."""
    await db.execute(
        "UPDATE panel_sessions SET handoff_hash = ?, handoff_expires = ? WHERE id = ?",
        token_hash,
        expires_at,
        session_id,
    )


async def consume_handoff(
    db: Executor, app_id: int, token_hash: str, now: int, idle_before: int
) -> int | None:
    """Use up the web-loader token with this digest, in one statement (so it works once however
    many requests present it at the same moment): the user it was issued to, or None when no
    live session of this application holds it unexpired."""
    user_id = await db.fetch_value(
        "UPDATE panel_sessions SET handoff_hash = NULL, handoff_expires = NULL "
        "WHERE handoff_hash = ? AND app_id = ? AND handoff_expires > ? AND expires_at > ? "
        "AND last_seen_at > ? RETURNING user_id",
        token_hash,
        app_id,
        now,
        now,
        idle_before,
    )
    return None if user_id is None else int(user_id)


async def try_reset_hwids(db: Executor, user_id: int, now: int, ready_before: int) -> bool:
    """Mark the user's HWIDs reset now if their last reset was at or before `ready_before` (or
    never); False when the cooldown has not passed. The caller then deletes the HWIDs."""
    changed = await db.execute(
        "UPDATE users SET hwid_reset_at = ? WHERE id = ? AND (hwid_reset_at IS NULL OR hwid_reset_at <= ?)",
        now,
        user_id,
        ready_before,
    )
    return changed == 1


async def delete_hwids(db: Executor, user_id: int) -> int:
    return await db.execute("DELETE FROM user_hwids WHERE user_id = ?", user_id)
