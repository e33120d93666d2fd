"""SQL for one user's (or one key's) timeline on the dashboard: client log lines, tamper reports
and audit entries in one list, newest first, keyset paged on (time, kind, id).

Each part is an index lookup (client logs by application and credential, tamper reports by user
or by application and credential, audit entries by application and target) read only from the
page's position on, so an old page costs what the first does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate.store.database import Executor, Row

# Kinds sort in this order within one second (the keyset compares the names).
LOG, TAMPER, AUDIT = "log", "tamper", "audit"


@dataclass(frozen=True, slots=True)
class Sources:
    """What belongs to the timeline: log lines and tamper reports sent with these credentials (a
    username, the keys it redeemed), tamper reports of this user, audit entries with this target
    (by one account alone, for a reseller)."""

    app_id: int
    credentials: tuple[str, ...]
    user_id: int | None
    audit_target: str | None
    audit_account_id: int | None = None


@dataclass(frozen=True, slots=True)
class Cursor:
    created_at: int
    kind: str
    id: int


def _after(kind: str, cursor: Cursor | None) -> tuple[str, list[Any]]:
    if cursor is None:
        return "", []
    return (
        " AND (created_at < ? OR (created_at = ? AND (? > ? OR (? = ? AND id < ?))))",
        [cursor.created_at, cursor.created_at, cursor.kind, kind, cursor.kind, kind, cursor.id],
    )


async def page(db: Executor, sources: Sources, cursor: Cursor | None, limit: int) -> list[Row]:
    """Up to `limit` entries older than `cursor` (all: without one), newest first."""
    parts: list[str] = []
    args: list[Any] = []
    order = "ORDER BY created_at DESC, id DESC LIMIT ?"
    creds = list(sources.credentials)
    marks = ", ".join("?" * len(creds))
    if creds:
        after, after_args = _after(LOG, cursor)
        parts.append(
            f"SELECT * FROM (SELECT '{LOG}' AS kind, id, created_at, message AS text, ip, credential AS who, "
            "pcuser AS detail FROM client_logs "
            f"WHERE app_id = ? AND credential IN ({marks}){after} {order}) AS l"
        )
        args += [sources.app_id, *creds, *after_args, limit]
    # Tamper reports of the user, and those sent with one of the credentials by nobody else (a
    # report matching both ways appears once).
    tamper: list[tuple[str, list[Any]]] = []
    if sources.user_id is not None:
        tamper.append(("user_id = ?", [sources.user_id]))
    if creds:
        others = " AND (user_id IS NULL OR user_id <> ?)" if sources.user_id is not None else ""
        tamper.append(
            (
                f"app_id = ? AND credential IN ({marks}){others}",
                [sources.app_id, *creds, *([sources.user_id] if others else [])],
            )
        )
    after, after_args = _after(TAMPER, cursor)
    for index, (condition, condition_args) in enumerate(tamper):
        parts.append(
            f"SELECT * FROM (SELECT '{TAMPER}' AS kind, id, created_at, reason AS text, ip, "
            f"credential AS who, details AS detail FROM tamper_logs "
            f"WHERE {condition}{after} {order}) AS t{index}"
        )
        args += [*condition_args, *after_args, limit]
    if sources.audit_target is not None:
        after, after_args = _after(AUDIT, cursor)
        mine = " AND account_id = ?" if sources.audit_account_id is not None else ""
        parts.append(
            f"SELECT * FROM (SELECT '{AUDIT}' AS kind, id, created_at, action AS text, ip, actor AS who, "
            f"after AS detail FROM audit_log WHERE app_id = ? AND target = ?{mine}{after} {order}) AS a"
        )
        args += [sources.app_id, sources.audit_target]
        if sources.audit_account_id is not None:
            args.append(sources.audit_account_id)
        args += [*after_args, limit]
    if not parts:
        return []
    return await db.fetch_all(
        " UNION ALL ".join(parts) + " ORDER BY created_at DESC, kind DESC, id DESC LIMIT ?", *args, limit
    )
