"""SQL for the logs client applications send (KeyAuth's `log()`), with the sender's IP, and what
every log table an owner reads shares (this one and `tamper_logs`): a filter, and one listing,
count and clearing of a table, newest first (by offset for the seller API, by keyset for the
dashboard)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypedDict

from licensegate.store import bulk
from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest, escape_like, keyset

TRIGRAM = 3  # the shortest text a trigram index can answer; shorter ones read the rows
RARE = 1000  # a search matching at most this many rows (SQLite) is answered from its index


@dataclass(frozen=True, slots=True)
class LogFilter:
    """Which log rows a listing covers; None means no condition. Times are inclusive."""

    credential: str | None = None
    ip: str | None = None
    since: int | None = None
    until: int | None = None
    search: str | None = None  # text any of the table's searched columns holds, in any case
    rare: bool = False  # SQLite: the search matches few rows; their ids come from its index

    def where(self, db: Executor, table: LogTable, app_id: int) -> tuple[str, list[object]]:
        """The WHERE clause (fixed fragments only; every value is bound) and its arguments."""
        # A rare search starts from the ids its index gives (`+` keeps SQLite off the time index,
        # which it would otherwise walk whole, testing each row against the list).
        clauses = ["+app_id = ?" if self.rare else "app_id = ?"]
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
        if self.search is not None:
            if self.rare:
                # The rows whose searched columns hold the text, from the FTS5 trigram index
                # (migration 0043), instead of reading every row; the LIKE below keeps LIKE's
                # exact meaning (the index also folds the case of non-ASCII letters).
                clauses.append(
                    f"id IN (SELECT rowid FROM {table.name}_search WHERE {table.name}_search MATCH ?)"
                )
                args.append(_phrase(self.search))
            # SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's needs ILIKE.
            like = "ILIKE" if db.dialect == "postgresql" else "LIKE"
            clauses.append("(" + " OR ".join(f"{c} {like} ? ESCAPE '\\'" for c in table.searched) + ")")
            args += [f"%{escape_like(self.search)}%"] * len(table.searched)
        return " AND ".join(clauses), args


def _phrase(text: str) -> str:
    """The text as one FTS5 phrase: quoted, its quotes doubled, so it is never query syntax."""
    return '"' + text.replace('"', '""') + '"'


async def planned(db: Executor, table: LogTable, where: LogFilter) -> LogFilter:
    """`where`, marked `rare` when on SQLite its search can be answered from the trigram index:
    at most `RARE` rows hold the text (asked of the index, which stops there). A common text is
    found soon enough walking the rows newest first, and a sort of its every match would not be."""
    if db.dialect != "sqlite" or where.search is None or len(where.search) < TRIGRAM:
        return where
    found: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM (SELECT rowid FROM {table.name}_search "
        f"WHERE {table.name}_search MATCH ? LIMIT ?) AS m",
        _phrase(where.search),
        RARE + 1,
    )
    return replace(where, rare=True) if found <= RARE else where


@dataclass(frozen=True, slots=True)
class LogTable:
    """A log table as an owner reads it. The name and columns are fixed here, never input."""

    name: str
    columns: str
    searched: tuple[str, ...]  # the text columns a search looks in


CLIENT_LOGS = LogTable(
    "client_logs", "id, credential, pcuser, message, ip, created_at", searched=("message", "pcuser")
)


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
    condition, args = (await planned(db, table, where)).where(db, table, app_id)
    return await db.fetch_all(
        f"SELECT {table.columns} FROM {table.name} "
        f"WHERE {condition} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
        *args,
        limit,
        offset,
    )


async def browse(
    db: Executor, table: LogTable, app_id: int, where: LogFilter, request: PageRequest
) -> list[Row]:
    """One keyset page by time, then id (`request.size + 1` rows, see `paging.finish`): the
    whole table read in the order of its (app_id, created_at) index, a date range as a range of
    it, one credential or address through (app_id, credential | ip, created_at) (SQLite keeps
    the id in each index; PostgreSQL orders the few rows of one second by id as it reads); a
    search filters the rows read in that order, or, on PostgreSQL, is answered by the table's
    trigram index when it matches few (on SQLite, its FTS5 trigram table: `planned`)."""
    condition, args = (await planned(db, table, where)).where(db, table, app_id)
    more, more_args, order = keyset("created_at", request)
    return await db.fetch_all(
        f"SELECT {table.columns} FROM {table.name} WHERE {condition}{more} {order} LIMIT ?",
        *args,
        *more_args,
        request.size + 1,
    )


async def count(db: Executor, table: LogTable, app_id: int, where: LogFilter, cap: int | None = None) -> int:
    """How many rows match; with `cap`, counting no further than `cap` + 1 (a page says "more
    than N" rather than count a million rows each time it is shown)."""
    condition, args = (await planned(db, table, where)).where(db, table, app_id)
    if cap is None:
        total: int = await db.fetch_value(f"SELECT COUNT(*) FROM {table.name} WHERE {condition}", *args)
    else:
        total = await db.fetch_value(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {table.name} WHERE {condition} LIMIT ?) AS m",
            *args,
            cap + 1,
        )
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
