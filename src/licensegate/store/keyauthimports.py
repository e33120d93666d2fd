"""SQL for imports from KeyAuth started on the dashboard (`keyauth_imports`)."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor

_COLUMNS = (
    "id, account_id, source, state, done, total, stage, sellerkey_sealed, options, report, error, "
    "created_at, updated_at"
)


class ImportRow(TypedDict):
    id: int
    account_id: int
    source: str
    state: str
    done: int
    total: int | None
    stage: str | None
    sellerkey_sealed: str | None
    options: str
    report: str | None
    error: str | None
    created_at: int
    updated_at: int


async def insert(
    db: Executor,
    account_id: int,
    *,
    source: str,
    state: str,
    sellerkey_sealed: str | None,
    options: str,
    now: int,
) -> int:
    new_id: int = await db.fetch_value(
        "INSERT INTO keyauth_imports (account_id, source, state, sellerkey_sealed, options, created_at, "
        "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        account_id,
        source,
        state,
        sellerkey_sealed,
        options,
        now,
        now,
    )
    return new_id


async def get(db: Executor, import_id: int, account_id: int) -> ImportRow | None:
    row = await db.fetch_one(
        f"SELECT {_COLUMNS} FROM keyauth_imports WHERE id = ? AND account_id = ?", import_id, account_id
    )
    return cast(ImportRow, dict(row)) if row is not None else None


async def progress(db: Executor, import_id: int, *, done: int, total: int | None, now: int) -> None:
    await db.execute(
        "UPDATE keyauth_imports SET done = ?, total = ?, updated_at = ? WHERE id = ?",
        done,
        total,
        now,
        import_id,
    )


async def touch(db: Executor, import_id: int, now: int) -> None:
    """A running job is alive."""
    await db.execute("UPDATE keyauth_imports SET updated_at = ? WHERE id = ?", now, import_id)


async def stage(db: Executor, import_id: int, text: str | None, now: int) -> None:
    await db.execute(
        "UPDATE keyauth_imports SET stage = COALESCE(?, stage), updated_at = ? WHERE id = ?",
        text,
        now,
        import_id,
    )


async def move(
    db: Executor,
    import_id: int,
    *,
    expected: tuple[str, ...],
    state: str,
    now: int,
    report: str | None = None,
    error: str | None = None,
    seen_update: int | None = None,
) -> bool:
    """Go to `state` only from one of `expected` (and, with `seen_update`, only if nobody has
    touched the row since): True for the one caller that moved it."""
    marks = ", ".join("?" for _ in expected)
    sql = (
        "UPDATE keyauth_imports SET state = ?, updated_at = ?, report = COALESCE(?, report), error = ? "
        f"WHERE id = ? AND state IN ({marks})"
    )
    args: list[object] = [state, now, report, error, import_id, *expected]
    if seen_update is not None:
        sql += " AND updated_at = ?"
        args.append(seen_update)
    return await db.execute(sql, *args) == 1


async def forget_key(db: Executor, import_id: int) -> None:
    """The sealed seller key is no longer needed once the import is done."""
    await db.execute("UPDATE keyauth_imports SET sellerkey_sealed = NULL WHERE id = ?", import_id)
