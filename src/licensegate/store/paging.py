"""Keyset paging for lists people browse (the SQL side; `domain.paging` is what callers use).

A page starts after (or before) the last row seen, named by its sort value and id, so page 1,000
costs what page 1 costs (an index seek, never an OFFSET that reads and drops every row before it)
and a row inserted meanwhile never shifts or repeats what the next page shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate.store.database import Executor

MAX_SIZE = 200
# A creation range holding at most this many rows is read from the (app_id, created_at) index and
# sorted; a larger one is read by walking the list's order (see `newest_first_by_range`).
SMALL_RANGE = 100_000


@dataclass(frozen=True, slots=True)
class Position:
    value: Any  # the sort column's value of the row the page starts next to
    id: int | str  # the row's id (a client session's id is text)
    before: bool = False  # the page ends just before that row (a "previous page")


@dataclass(frozen=True, slots=True)
class PageRequest:
    sort: str  # a sort name the list declares (checked by the store against its own whitelist)
    descending: bool
    size: int
    position: Position | None = None


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[dict[str, Any]]
    has_previous: bool
    has_next: bool
    total: int | None = None  # how many rows match, when reading the page counted them anyway


def keyset(column: str, request: PageRequest) -> tuple[str, tuple[Any, ...], str]:
    """The WHERE fragment (with its values) and ORDER BY clause that read one page ordered by
    `column` then `id` (a fixed, whitelisted column name: never input). A previous page is read
    in reverse order; `finish` turns it back."""
    backwards = request.position is not None and request.position.before
    descending = request.descending != backwards
    order = f"ORDER BY {column} {'DESC' if descending else 'ASC'}, id {'DESC' if descending else 'ASC'}"
    if request.position is None:
        return "", (), order
    comparison = "<" if descending else ">"
    if column == "id":
        return f" AND id {comparison} ?", (request.position.id,), order
    return f" AND ({column}, id) {comparison} (?, ?)", (request.position.value, request.position.id), order


def finish(rows: list[dict[str, Any]], request: PageRequest) -> Page:
    """The page from `size + 1` rows read by `keyset`: the extra row only says there is more."""
    more = len(rows) > request.size
    rows = rows[: request.size]
    position = request.position
    if position is not None and position.before:
        rows.reverse()
        return Page(rows, has_previous=more, has_next=True)
    return Page(rows, has_previous=position is not None, has_next=more)


def known_total(page: Page, request: PageRequest) -> int | None:
    """How many rows match, when the first page already holds them all (a list then needs no
    count: a filter matching few rows would otherwise be read twice, by the page and the count);
    None when only a count can say."""
    if page.total is not None:
        return page.total
    if request.position is None and not page.has_next:
        return len(page.rows)
    return None


def escape_like(text: str) -> str:
    """`text` matched literally inside a LIKE pattern (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def time_ranges(
    ranges: tuple[tuple[str, int | None, int | None], ...],
    grants_of: str,
    expires: tuple[int | None, int | None],
) -> tuple[str, list[Any]]:
    """The WHERE fragment of a list's date filters: each (column, from, until) where set (from
    inclusive, until exclusive), and, where set, a grant joined by `grants_of` (a fixed condition
    on `g`, the grants) ending in the `expires` range."""
    parts: list[str] = []
    args: list[Any] = []
    for column, low, high in ranges:
        if low is not None:
            parts.append(f" AND {column} >= ?")
            args.append(low)
        if high is not None:
            parts.append(f" AND {column} < ?")
            args.append(high)
    low, high = expires
    if low is not None or high is not None:
        parts.append(
            f" AND EXISTS (SELECT 1 FROM user_subscriptions g WHERE {grants_of}"
            " AND g.expires_at >= ? AND g.expires_at < ?)"
        )
        args += [low if low is not None else 0, high if high is not None else 2**62]
    return "".join(parts), args


async def newest_first_by_range(
    db: Executor, table: str, app_id: int, low: int | None, high: int | None, order: str
) -> str:
    """`order` (an ORDER BY starting with `id`, from `keyset`), rewritten so that PostgreSQL reads
    a small creation range from the (app_id, created_at) index and sorts it.

    PostgreSQL's planner takes the rows of a range to be spread evenly through id order, so it
    walks the id index from the newest end and drops every row outside the range; rows are in fact
    created in id order, so an old range lies at the far end of that walk (900,000 rows read for
    one page of 1,000,000). Ordering by `id + 0` (the same order) leaves the id index out of the
    ordering, so the planner reads the range and sorts it, which costs what the range holds:
    chosen only when an index-only count finds at most SMALL_RANGE rows in it. `table` is a fixed
    table name, never input. SQLite already reads a range from the index and sorts it."""
    if db.dialect != "postgresql" or (low is None and high is None) or not order.startswith("ORDER BY id "):
        return order
    held: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE app_id = ? AND created_at >= ? "
        "AND created_at < ? LIMIT ?) AS r",
        app_id,
        low if low is not None else -(2**62),
        high if high is not None else 2**62,
        SMALL_RANGE + 1,
    )
    if held > SMALL_RANGE:
        return order
    return "ORDER BY id + 0 " + order.removeprefix("ORDER BY id ")
