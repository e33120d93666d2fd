"""SQL for tamper reports: what the client API recorded when a client failed an integrity check
(a program hash not allowed, a signature mismatch, ...)."""

from __future__ import annotations

from licensegate.store.database import Executor, Row
from licensegate.store.logs import LogFilter


async def insert(
    db: Executor,
    app_id: int,
    *,
    user_id: int | None,
    credential: str | None,
    hwid: str | None,
    ip: str | None,
    reason: str,
    details: str | None,
    now: int,
) -> int:
    log_id: int = await db.fetch_value(
        "INSERT INTO tamper_logs (app_id, user_id, credential, hwid, ip, reason, details, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        user_id,
        credential,
        hwid,
        ip,
        reason,
        details,
        now,
    )
    return log_id


async def list_page(db: Executor, app_id: int, where: LogFilter, *, limit: int, offset: int) -> list[Row]:
    """Newest first."""
    condition, args = where.where(app_id)
    return await db.fetch_all(
        "SELECT id, credential, hwid, ip, reason, details, created_at FROM tamper_logs "
        f"WHERE {condition} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
        *args,
        limit,
        offset,
    )


async def count(db: Executor, app_id: int, where: LogFilter) -> int:
    condition, args = where.where(app_id)
    total: int = await db.fetch_value(f"SELECT COUNT(*) FROM tamper_logs WHERE {condition}", *args)
    return total


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM tamper_logs WHERE app_id = ?", app_id)
