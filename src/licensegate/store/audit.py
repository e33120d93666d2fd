"""SQL for the audit log: append-only entries chained by hash per application.

There is deliberately no UPDATE or DELETE here: no operation edits or removes an entry.
"""

from __future__ import annotations

from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest, keyset

COLUMNS = (
    "id, app_id, account_id, actor, action, target, before, after, ip, created_at, prev_hash, entry_hash"
)


async def last_hash(db: Executor, app_id: int) -> str | None:
    """The hash of the application's newest entry (None before the first)."""
    value: str | None = await db.fetch_value(
        "SELECT entry_hash FROM audit_log WHERE app_id = ? ORDER BY id DESC LIMIT 1", app_id
    )
    return value


async def newest_actors(db: Executor, app_id: int, action: str, targets: list[str]) -> dict[str, str]:
    """Who made the newest `action` entry of each of `targets` (those that have one)."""
    if not targets:
        return {}
    marks = ", ".join("?" * len(targets))
    rows = await db.fetch_all(
        f"SELECT target, actor FROM audit_log WHERE app_id = ? AND target IN ({marks}) AND action = ? "
        "ORDER BY id",
        app_id,
        *targets,
        action,
    )
    return {row["target"]: row["actor"] for row in rows}  # in id order: the newest stays


async def insert(
    db: Executor,
    *,
    app_id: int,
    account_id: int | None,
    actor: str,
    action: str,
    target: str | None,
    before: str | None,
    after: str | None,
    ip: str | None,
    created_at: int,
    prev_hash: str,
    entry_hash: str,
) -> int:
    entry_id: int = await db.fetch_value(
        "INSERT INTO audit_log (app_id, account_id, actor, action, target, before, after, ip, "
        "created_at, prev_hash, entry_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        account_id,
        actor,
        action,
        target,
        before,
        after,
        ip,
        created_at,
        prev_hash,
        entry_hash,
    )
    return entry_id


def _filter(action: str | None) -> tuple[str, list[object]]:
    return (" AND action = ?", [action]) if action is not None else ("", [])


async def page(db: Executor, app_id: int, action: str | None, limit: int, offset: int) -> list[Row]:
    """Newest first."""
    where, args = _filter(action)
    return await db.fetch_all(
        f"SELECT {COLUMNS} FROM audit_log WHERE app_id = ?{where} ORDER BY id DESC LIMIT ? OFFSET ?",
        app_id,
        *args,
        limit,
        offset,
    )


async def count(db: Executor, app_id: int, action: str | None = None) -> int:
    where, args = _filter(action)
    total: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM audit_log WHERE app_id = ?{where}", app_id, *args
    )
    return total


async def browse(
    db: Executor,
    app_id: int,
    *,
    actor: str | None,
    action: str | None,
    target: str | None,
    request: PageRequest,
) -> list[Row]:
    """One keyset page by id (`request.size + 1` rows, see `paging.finish`), optionally of one
    actor, action and/or target (exact values): each answered by an index on (app_id, it, id)."""
    where = ""
    args: list[object] = []
    for column, value in (("actor", actor), ("action", action), ("target", target)):
        if value is not None:
            where += f" AND {column} = ?"
            args.append(value)
    more, more_args, order = keyset("id", request)
    return await db.fetch_all(
        f"SELECT {COLUMNS} FROM audit_log WHERE app_id = ?{where}{more} {order} LIMIT ?",
        app_id,
        *args,
        *more_args,
        request.size + 1,
    )


async def chain_after(db: Executor, app_id: int, after_id: int, limit: int) -> list[Row]:
    """The next `limit` entries after `after_id`, oldest first (for walking the chain)."""
    return await db.fetch_all(
        f"SELECT {COLUMNS} FROM audit_log WHERE app_id = ? AND id > ? ORDER BY id LIMIT ?",
        app_id,
        after_id,
        limit,
    )
