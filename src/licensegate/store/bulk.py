"""Deleting many rows without holding up other requests.

On SQLite one `DELETE` of 100,000 rows holds the write lock and the worker's event loop (statements
run inline) for seconds, and writes the whole change into one transaction's log. In batches,
another request waits at most one batch, and the write-ahead log is checkpointed as the delete
goes. The delete as a whole is then not one transaction: rows are deleted batch by batch, each
batch re-checking the condition, and rows added while it runs (with a larger key) are left alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from licensegate.store.database import Database, Executor, Row

# Told, in a batch's own transaction, the rows (`returning` columns) that batch deleted.
Report = Callable[[Executor, list[Row]], Awaitable[None]]

BATCH_ROWS = 500


def _marks(count: int) -> str:
    return ", ".join("?" * count)


# SQLite, without statistics on a fresh database, would rather find `app_id = ?` through an index
# and sort for every batch (quadratic in all), or look rows up by that index even when given their
# keys; NOT INDEXED makes it walk the rowid instead (every table here has one; where `id` is an
# integer, it is that id).


async def _batches(db: Executor, table: str, where: str, args: tuple[Any, ...]) -> AsyncIterator[list[Any]]:
    """The rowids of the matching rows, in order, a batch at a time."""
    # Rows added after the delete began are left alone: the walk ends at the last row there was.
    last = await db.fetch_value(f"SELECT MAX(rowid) FROM {table}")
    after: tuple[Any, ...] = ()
    while last is not None:
        rows = await db.fetch_all(
            f"SELECT rowid AS k FROM {table} NOT INDEXED WHERE {where} AND rowid <= ?"
            f"{' AND rowid > ?' if after else ''} ORDER BY rowid LIMIT {BATCH_ROWS}",
            *args,
            last,
            *after,
        )
        keys = [row["k"] for row in rows]
        if keys:
            yield keys
        if len(keys) < BATCH_ROWS:
            return
        after = (keys[-1],)
        await asyncio.sleep(0)  # the requests that queued meanwhile go first


async def delete_where(db: Executor, table: str, where: str, *args: Any) -> int:
    """`DELETE FROM table WHERE where`, without holding others up; returns how many rows went.

    SQLite: in batches. PostgreSQL: one statement, allowed the whole statement timeout; it holds
    only the rows it deletes and runs on the server, not on a worker's event loop, and batches
    would cost it several times the time (each must find the next rows again)."""
    if db.dialect != "sqlite":
        return await db.execute_long(f"DELETE FROM {table} WHERE {where}", *args)
    deleted = 0
    async for keys in _batches(db, table, where, args):
        deleted += await db.execute(
            f"DELETE FROM {table} NOT INDEXED WHERE rowid IN ({_marks(len(keys))}) AND {where}", *keys, *args
        )
    return deleted


async def delete_reported(
    db: Database, table: str, where: str, *args: Any, returning: str, report: Report
) -> int:
    """`delete_where` that tells `report` what each batch deleted, in that batch's transaction
    (for its events), on both databases: one transaction per `BATCH_ROWS` rows, walked in the
    order of the table's key up to the last row there was when it began. Returns how many rows
    went."""
    key = "rowid" if db.dialect == "sqlite" else "id"
    hint = " NOT INDEXED" if db.dialect == "sqlite" else ""
    last = await db.fetch_value(f"SELECT MAX({key}) FROM {table}")
    after: tuple[Any, ...] = ()
    deleted = 0
    while last is not None:
        async with db.transaction() as tx:
            rows = await tx.fetch_all(
                f"DELETE FROM {table}{hint} WHERE {key} IN (SELECT {key} FROM {table}{hint} WHERE {where} "
                f"AND {key} <= ?{f' AND {key} > ?' if after else ''} ORDER BY {key} LIMIT {BATCH_ROWS}) "
                f"AND {where} RETURNING {key} AS bulk_key, {returning}",
                *args,
                last,
                *after,
                *args,
            )
            if rows:
                await report(tx, rows)
        if not rows:  # (a short batch may be one whose rows changed meanwhile: look again)
            return deleted
        deleted += len(rows)
        after = (max(row["bulk_key"] for row in rows),)
        await asyncio.sleep(0)  # the requests that queued meanwhile go first
    return deleted


async def delete(
    db: Database, table: str, where: str, *args: Any, returning: str, report: Report | None
) -> int:
    """`delete_reported` when there is a `report` to make, else `delete_where`."""
    if report is None:
        return await delete_where(db, table, where, *args)
    return await delete_reported(db, table, where, *args, returning=returning, report=report)
