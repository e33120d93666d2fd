"""SQL for user variables: named values attached to one end user of an application."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store import bulk
from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest

# INSERT ... SELECT from `users`: one statement sets the variable for one user or for all of them,
# and a user deleted meanwhile is simply not matched (no foreign-key error). The CASTs give
# PostgreSQL the column types of the bound values (an untyped parameter in a SELECT list is text).
# The WHERE clause is also what SQLite needs to parse an upsert after a SELECT ... FROM.
_UPSERT = (
    "INSERT INTO user_vars (app_id, user_id, name, value, read_only, created_at, updated_at) "
    "SELECT u.app_id, u.id, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER), "
    "CAST(? AS BIGINT), CAST(? AS BIGINT) FROM users u WHERE u.app_id = ?{only_user} "
    "ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, "
    "updated_at = excluded.updated_at{read_only}"
)
_ONE_USER = " AND u.username = ?"
_SET_READ_ONLY = ", read_only = excluded.read_only"


async def upsert(
    db: Executor,
    app_id: int,
    username: str | None,
    *,
    name: str,
    value: str,
    read_only: bool | None,
    now: int,
) -> int:
    """Set the variable for `username`, or for every user of the app when it is None. An existing
    variable keeps its read-only flag unless `read_only` is given. Returns the rows written."""
    sql = _UPSERT.format(
        only_user=_ONE_USER if username is not None else "",
        read_only=_SET_READ_ONLY if read_only is not None else "",
    )
    args: list[object] = [name, value, 1 if read_only else 0, now, now, app_id]
    if username is not None:
        args.append(username)
    return await db.execute(sql, *args)


async def find_for_user(db: Executor, app_id: int, username: str, name: str) -> Row | None:
    """The user and, if set, their variable: None when the user does not exist; `value` is None
    when the user exists but has no such variable."""
    return await db.fetch_one(
        "SELECT u.id AS user_id, v.value, v.read_only FROM users u "
        "LEFT JOIN user_vars v ON v.user_id = u.id AND v.name = ? "
        "WHERE u.app_id = ? AND u.username = ?",
        name,
        app_id,
        username,
    )


async def update(
    db: Executor, app_id: int, username: str, name: str, *, value: str, read_only: bool | None, now: int
) -> int:
    """Change an existing variable only; 0 when the user or the variable does not exist."""
    flag = ", read_only = ?" if read_only is not None else ""
    args: list[object] = [value, now]
    if read_only is not None:
        args.append(1 if read_only else 0)
    return await db.execute(
        f"UPDATE user_vars SET value = ?, updated_at = ?{flag} "
        "WHERE name = ? AND user_id = (SELECT id FROM users WHERE app_id = ? AND username = ?)",
        *args,
        name,
        app_id,
        username,
    )


async def delete(db: Executor, app_id: int, username: str, name: str) -> int:
    return await db.execute(
        "DELETE FROM user_vars "
        "WHERE name = ? AND user_id = (SELECT id FROM users WHERE app_id = ? AND username = ?)",
        name,
        app_id,
        username,
    )


async def delete_by_name(db: Executor, app_id: int, name: str) -> int:
    return await bulk.delete_where(db, "user_vars", "app_id = ? AND name = ?", app_id, name)


async def delete_all(db: Executor, app_id: int) -> int:
    return await bulk.delete_where(db, "user_vars", "app_id = ?", app_id)


def _filters(user_id: int | None, name: str | None) -> tuple[str, list[object]]:
    where = "v.app_id = ?"
    args: list[object] = []
    if user_id is not None:
        where += " AND v.user_id = ?"
        args.append(user_id)
    if name is not None:
        where += " AND v.name = ?"
        args.append(name)
    return where, args


class ListedVar(TypedDict):
    """A user variable as `list_page` lists it, with its user's name."""

    name: str
    value: str
    read_only: int
    username: str


async def list_page(
    db: Executor, app_id: int, *, user_id: int | None, name: str | None, limit: int, offset: int
) -> list[ListedVar]:
    where, args = _filters(user_id, name)
    rows = await db.fetch_all(
        "SELECT v.name, v.value, v.read_only, u.username FROM user_vars v "
        f"JOIN users u ON u.id = v.user_id WHERE {where} ORDER BY v.id LIMIT ? OFFSET ?",
        app_id,
        *args,
        limit,
        offset,
    )
    return cast("list[ListedVar]", rows)


async def count(db: Executor, app_id: int, *, user_id: int | None, name: str | None) -> int:
    where, args = _filters(user_id, name)
    total: int = await db.fetch_value(f"SELECT COUNT(*) FROM user_vars v WHERE {where}", app_id, *args)
    return total


async def set_unless_read_only(
    db: Executor, app_id: int, user_id: int, name: str, value: str, now: int
) -> int:
    """Create or replace the user's variable in one statement, unless it exists read-only.
    Returns 0 when nothing was written: the variable is read-only, or the user is gone."""
    return await db.execute(
        "INSERT INTO user_vars (app_id, user_id, name, value, read_only, created_at, updated_at) "
        "SELECT u.app_id, u.id, CAST(? AS TEXT), CAST(? AS TEXT), 0, CAST(? AS BIGINT), CAST(? AS BIGINT) "
        "FROM users u WHERE u.id = ? AND u.app_id = ? "
        "ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at "
        "WHERE user_vars.read_only = 0",
        name,
        value,
        now,
        now,
        user_id,
        app_id,
    )


def prefix_match(dialect: str, prefix: str) -> tuple[str, list[object]]:
    """The condition (after `v.app_id = ?`) that `v.value` starts with `prefix`, answered by the
    index on (app_id, value, id): on PostgreSQL a case-sensitive LIKE, which the index's
    text_pattern_ops turn into a range whatever the database's collation; on SQLite a range over
    its binary collation (SQLite's LIKE ignores case and would not use the index)."""
    if dialect == "postgresql":
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return " AND v.value LIKE ? ESCAPE '\\'", [escaped + "%"]
    stem = prefix.rstrip("\U0010ffff")
    if not stem:
        return " AND v.value >= ?", [prefix]
    upper = stem[:-1] + chr(ord(stem[-1]) + 1)
    return " AND v.value >= ? AND v.value < ? AND substr(v.value, 1, ?) = ?", [
        prefix,
        upper,
        len(prefix),
        prefix,
    ]


async def browse(
    db: Executor,
    app_id: int,
    *,
    user_id: int | None,
    name: str | None,
    value_prefix: str | None,
    request: PageRequest,
) -> list[Row]:
    """One keyset page of the application's user variables, by id (`request.size + 1` rows, see
    `paging.finish`), optionally of one user, one name and/or values starting with a prefix."""
    where, args = _filters(user_id, name)
    if value_prefix:
        more, more_args = prefix_match(db.dialect, value_prefix)
        where += more
        args += more_args
    # The keyset of `paging.keyset` on the variable's id alone (qualified: users has an id too).
    position = request.position
    descending = request.descending != (position is not None and position.before)
    if position is not None:
        where += f" AND v.id {'<' if descending else '>'} ?"
        args.append(position.id)
    return await db.fetch_all(
        "SELECT v.id, v.name, v.value, v.read_only, v.updated_at, u.username FROM user_vars v "
        f"JOIN users u ON u.id = v.user_id WHERE {where} ORDER BY v.id {'DESC' if descending else 'ASC'} "
        "LIMIT ?",
        app_id,
        *args,
        request.size + 1,
    )
