"""SQL for tamper reports: what the client API recorded when a client failed an integrity check
(a program hash not allowed, a signature mismatch, ...)."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor
from licensegate.store.logs import LogTable

TAMPER_LOGS = LogTable(
    "tamper_logs",
    "id, user_id, credential, hwid, ip, reason, details, created_at",
    searched=("reason", "details", "hwid"),
)


class TamperRow(TypedDict):
    """A row of `TAMPER_LOGS`."""

    id: int
    user_id: int | None  # the session's user when it was logged in (None once deleted)
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


class ReportingUser(TypedDict):
    """The user a tamper report came from, as the Tamper logs page shows it."""

    id: int
    username: str
    banned_reason: str | None


async def users_of(db: Executor, app_id: int, user_ids: list[int]) -> list[ReportingUser]:
    """The application's users among `user_ids` (one page of reports: at most 200)."""
    if not user_ids:
        return []
    marks = ", ".join("?" * len(user_ids))
    rows = await db.fetch_all(
        f"SELECT id, username, banned_reason FROM users WHERE app_id = ? AND id IN ({marks})",
        app_id,
        *user_ids,
    )
    return cast("list[ReportingUser]", rows)
