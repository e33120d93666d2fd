"""SQL for tamper reports: what the client API recorded when a client failed an integrity check
(a program hash not allowed, a signature mismatch, ...)."""

from __future__ import annotations

from typing import TypedDict

from licensegate.store.database import Executor
from licensegate.store.logs import LogTable

TAMPER_LOGS = LogTable(
    "tamper_logs",
    "id, credential, hwid, ip, reason, details, created_at",
    searched=("reason", "details", "hwid"),
)


class TamperRow(TypedDict):
    """A row of `TAMPER_LOGS`."""

    id: int
    credential: str | None
    hwid: str | None
    ip: str | None
    reason: str
    details: str | None
    created_at: int


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
