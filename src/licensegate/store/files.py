"""SQL for files: one row per file an application offers; the content lives in the file store."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest, escape_like, keyset

_COLUMNS = (
    "id, file_id, name, url, storage_key, size, authed, created_at, updated_at, downloads, downloaded_at"
)
_SORTS = {"created": "id", "name": "name", "size": "size"}  # the list's sorts -> columns


class FileRow(TypedDict):
    """A row of `_COLUMNS`: a file added by URL (`url`) or uploaded (`storage_key`, `size`)."""

    id: int
    file_id: str
    name: str
    url: str | None
    storage_key: str | None
    size: int | None
    authed: int
    created_at: int
    updated_at: int
    downloads: int  # how many times the client API sent it
    downloaded_at: int | None  # the latest of them


async def insert(
    db: Executor,
    *,
    app_id: int,
    file_id: str,
    name: str,
    url: str | None,
    storage_key: str,
    size: int,
    authed: bool,
    now: int,
) -> int:
    """Raises UniqueViolation when `file_id` is taken in this application."""
    row_id: int = await db.fetch_value(
        "INSERT INTO files (app_id, file_id, name, url, storage_key, size, authed, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        file_id,
        name,
        url,
        storage_key,
        size,
        1 if authed else 0,
        now,
        now,
    )
    return row_id


async def find(db: Executor, app_id: int, file_id: str) -> FileRow | None:
    row = await db.fetch_one(
        f"SELECT {_COLUMNS} FROM files WHERE app_id = ? AND file_id = ?", app_id, file_id
    )
    return cast("FileRow | None", row)


async def count(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM files WHERE app_id = ?", app_id)
    return total


async def page(db: Executor, app_id: int, *, limit: int, offset: int) -> list[FileRow]:
    rows = await db.fetch_all(
        f"SELECT {_COLUMNS} FROM files WHERE app_id = ? ORDER BY id LIMIT ? OFFSET ?",
        app_id,
        limit,
        offset,
    )
    return cast("list[FileRow]", rows)


async def browse(db: Executor, app_id: int, *, name: str | None, request: PageRequest) -> list[FileRow]:
    """One keyset page of the application's files (`request.size + 1` rows, see
    `paging.finish`) in the order they were added, by name or by size, those whose name holds
    `name` (any case) when it is set. An application has few files: no index is needed."""
    where, args = "app_id = ?", list[Any]([app_id])
    if name is not None:
        like = "ILIKE" if db.dialect == "postgresql" else "LIKE"
        where += f" AND name {like} ? ESCAPE '\\'"
        args.append(f"%{escape_like(name)}%")
    after, after_args, order = keyset(_SORTS[request.sort], request)
    rows = await db.fetch_all(
        f"SELECT {_COLUMNS} FROM files WHERE {where}{after} {order} LIMIT ?",
        *args,
        *after_args,
        request.size + 1,
    )
    return cast("list[FileRow]", rows)


async def count_larger(db: Executor, app_id: int, size: int) -> int:
    """How many of the application's files are larger than `size` bytes."""
    total: int = await db.fetch_value(
        "SELECT COUNT(*) FROM files WHERE app_id = ? AND size > ?", app_id, size
    )
    return total


async def update_details(
    db: Executor, app_id: int, file_id: str, *, name: str, authed: bool, now: int
) -> int:
    return await db.execute(
        "UPDATE files SET name = ?, authed = ?, updated_at = ? WHERE app_id = ? AND file_id = ?",
        name,
        1 if authed else 0,
        now,
        app_id,
        file_id,
    )


async def replace_content(
    db: Executor, row_id: int, *, url: str | None, storage_key: str, size: int, now: int
) -> int:
    return await db.execute(
        "UPDATE files SET url = ?, storage_key = ?, size = ?, updated_at = ? WHERE id = ?",
        url,
        storage_key,
        size,
        now,
        row_id,
    )


async def count_download(db: Executor, row_id: int, now: int) -> int:
    return await db.execute(
        "UPDATE files SET downloads = downloads + 1, downloaded_at = ? WHERE id = ?", now, row_id
    )


async def delete(db: Executor, app_id: int, file_id: str) -> list[Row]:
    """Delete one file; the deleted row's `storage_key` comes back (no rows: it did not exist)."""
    # fetch_all, not fetch_one: a RETURNING statement must be read to its end to finish.
    return await db.fetch_all(
        "DELETE FROM files WHERE app_id = ? AND file_id = ? RETURNING storage_key", app_id, file_id
    )


async def delete_all(db: Executor, app_id: int) -> list[Row]:
    return await db.fetch_all("DELETE FROM files WHERE app_id = ? RETURNING storage_key", app_id)


async def storage_keys(db: Executor, app_id: int) -> list[str]:
    """The content keys the application's files use."""
    rows = await db.fetch_all(
        "SELECT DISTINCT storage_key FROM files WHERE app_id = ? AND storage_key IS NOT NULL", app_id
    )
    return sorted(row["storage_key"] for row in rows)


async def is_referenced(db: Executor, storage_key: str) -> bool:
    """Whether any file of any application still has this content."""
    found = await db.fetch_value("SELECT 1 FROM files WHERE storage_key = ? LIMIT 1", storage_key)
    return found is not None
