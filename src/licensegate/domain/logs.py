"""The logs client applications send and the tamper reports the client API records, as the
application owner reads and clears them. Both are listed newest first and filtered the same way:
by credential (username or license key), by IP and by an inclusive time range."""

from __future__ import annotations

from typing import Any

from licensegate.domain.blacklists import parse_ip
from licensegate.domain.errors import Invalid
from licensegate.store import logs as store
from licensegate.store import tamper as tamper_store
from licensegate.store.database import Executor
from licensegate.store.logs import LogFilter as LogFilter  # re-exported for handlers


def log_filter(
    *,
    credential: str | None = None,
    ip: str | None = None,
    since: int | None = None,
    until: int | None = None,
) -> LogFilter:
    """The filter of a listing; the IP is compared in canonical form."""
    if since is not None and until is not None and since > until:
        raise Invalid("'from' must not be later than 'to'.", "invalid_time_range")
    return LogFilter(
        credential=credential,
        ip=parse_ip(ip) if ip is not None else None,
        since=since,
        until=until,
    )


async def list_page(
    db: Executor, app_id: int, where: LogFilter, *, limit: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    rows = await store.list_page(db, app_id, where, limit=limit, offset=offset)
    logs = [
        {
            "id": str(row["id"]),
            "logdata": row["message"],
            "credential": row["credential"],
            "pcuser": row["pcuser"],
            "ip": row["ip"],
            "logdate": row["created_at"],
        }
        for row in rows
    ]
    return logs, await store.count(db, app_id, where)


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)


async def delete_by_ip(db: Executor, app_id: int, ip: str) -> tuple[str, int]:
    """Delete the logs sent from this address; returns the canonical address and the count."""
    canonical = parse_ip(ip)
    return canonical, await store.delete_by_ip(db, app_id, canonical)


async def list_tamper_page(
    db: Executor, app_id: int, where: LogFilter, *, limit: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    rows = await tamper_store.list_page(db, app_id, where, limit=limit, offset=offset)
    logs = [
        {
            "id": str(row["id"]),
            "reason": row["reason"],
            "details": row["details"],
            "credential": row["credential"],
            "hwid": row["hwid"],
            "ip": row["ip"],
            "created": row["created_at"],
        }
        for row in rows
    ]
    return logs, await tamper_store.count(db, app_id, where)


async def delete_all_tamper(db: Executor, app_id: int) -> int:
    return await tamper_store.delete_all(db, app_id)
