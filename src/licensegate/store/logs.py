"""SQL for the logs client applications send (KeyAuth's `log()`), with the sender's IP, and what
every log table an owner reads shares (this one and `tamper_logs`): a filter, and one listing,
count and clearing of a table, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from licensegate.store import bulk
from licensegate.store.database import Executor, Row


@dataclass(frozen=True, slots=True)
class LogFilter:
    """Which log rows a listing covers; None means no condition. Times are inclusive."""

    credential: str | None = None
    ip: str | None = None
    since: int | None = None
    until: int | None = None

    def where(self, app_id: int) -> tuple[str, list[object]]:
        """The WHERE clause (fixed fragments only; every value is bound) and its arguments."""
        clauses = ["app_id = ?"]
        args: list[object] = [app_id]
        if self.credential is not None:
            clauses.append("credential = ?")
            args.append(self.credential)
        if self.ip is not None:
            clauses.append("ip = ?")
            args.append(self.ip)
        if self.since is not None:
            clauses.append("created_at >= ?")
            args.append(self.since)
        if self.until is not None:
            clauses.append("created_at <= ?")
            args.append(self.until)
        return " AND ".join(clauses), args


@dataclass(frozen=True, slots=True)
class LogTable:
    """A log table as an owner reads it. The name and columns are fixed here, never input."""

    name: str
    columns: str


CLIENT_LOGS = LogTable("client_logs", "id, credential, pcuser, message, ip, created_at")


class LogRow(TypedDict):
    """A row of `CLIENT_LOGS`."""

    id: int
    credential: str | None
    pcuser: str | None
    message: str
    ip: str | None
    created_at: int


async def page(
    db: Executor, table: LogTable, app_id: int, where: LogFilter, *, limit: int, offset: int
) -> list[Row]:
    """Newest first."""
    condition, args = where.where(app_id)
    return await db.fetch_all(
        f"SELECT {table.columns} FROM {table.name} "
        f"WHERE {condition} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
        *args,
        limit,
        offset,
    )


async def count(db: Executor, table: LogTable, app_id: int, where: LogFilter) -> int:
    condition, args = where.where(app_id)
    total: int = await db.fetch_value(f"SELECT COUNT(*) FROM {table.name} WHERE {condition}", *args)
    return total


async def delete_older(db: Executor, table: LogTable, app_id: int, before: int, batch: int) -> int:
    """Delete up to `batch` of the application's rows made before `before` (an index range on
    (app_id, created_at)); small batches keep each write short."""
    return await db.execute(
        f"DELETE FROM {table.name} WHERE id IN (SELECT id FROM {table.name} "
        "WHERE app_id = ? AND created_at < ? LIMIT ?)",
        app_id,
        before,
        batch,
    )


async def delete_all(db: Executor, table: LogTable, app_id: int) -> int:
    return await bulk.delete_where(db, table.name, "app_id = ?", app_id)


async def insert(
    db: Executor,
    app_id: int,
    *,
    credential: str | None,
    pcuser: str | None,
    message: str,
    ip: str | None,
    now: int,
) -> int:
    log_id: int = await db.fetch_value(
        "INSERT INTO client_logs (app_id, credential, pcuser, message, ip, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        credential,
        pcuser,
        message,
        ip,
        now,
    )
    return log_id


async def delete_by_ip(db: Executor, app_id: int, ip: str) -> int:
    return await bulk.delete_where(db, "client_logs", "app_id = ? AND ip = ?", app_id, ip)
