"""SQL for license keys and the grants redeeming them creates.

A key's `status` is 'unused' or 'used'; a ban is a separate column (`banned_reason`, NULL when
not banned), so a ban never loses whether the key was redeemed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, cast

from licensegate.store import bulk, overview
from licensegate.store.database import Database, Executor, Row
from licensegate.store.paging import PageRequest, escape_like, keyset, newest_first_by_range, time_ranges

COLUMNS = (
    "id, key, level, duration, note, status, banned_reason, generated_by, created_at, "
    "used_at, used_by_user_id, used_by"
)


class KeyRow(TypedDict):
    """A row of `COLUMNS`."""

    id: int
    key: str
    level: str
    duration: int  # seconds, from redemption
    note: str | None
    status: str  # 'unused' or 'used'
    banned_reason: str | None
    generated_by: str
    created_at: int
    used_at: int | None
    used_by_user_id: int | None
    used_by: str | None


# Which keys a filter selects; the names match the `status` values the API accepts.
FILTERS: dict[str, str] = {
    "all": "",
    "unused": " AND status = 'unused' AND banned_reason IS NULL",
    "used": " AND status = 'used' AND banned_reason IS NULL",
    "banned": " AND banned_reason IS NOT NULL",
    "redeemed": " AND status = 'used'",
    "unbanned": " AND banned_reason IS NULL",
}


def _marks(count: int) -> str:
    """`?, ?, ...` for an IN list; only the count is formatted in, never a value."""
    return ", ".join("?" * count)


def _creator(reseller_id: int | None) -> tuple[str, tuple[int, ...]]:
    """The fixed clause limiting a statement to the keys one reseller generated (none: all)."""
    if reseller_id is None:
        return "", ()
    return " AND generated_by_account_id = ?", (reseller_id,)


async def insert(
    db: Executor,
    *,
    app_id: int,
    key: str,
    level: str,
    duration: int,
    note: str | None,
    generated_by: str,
    account_id: int | None,
    now: int,
) -> int | None:
    """Insert the key; None when the application already has a key with that text.

    ON CONFLICT DO NOTHING makes a concurrent insert of the same text wait for the other
    transaction and then do nothing, instead of failing the whole transaction.
    """
    key_id: int | None = await db.fetch_value(
        "INSERT INTO license_keys (app_id, key, level, duration, note, status, generated_by, "
        "generated_by_account_id, created_at) VALUES (?, ?, ?, ?, ?, 'unused', ?, ?, ?) "
        "ON CONFLICT (app_id, key) DO NOTHING RETURNING id",
        app_id,
        key,
        level,
        duration,
        note,
        generated_by,
        account_id,
        now,
    )
    return key_id


async def find(db: Executor, app_id: int, key: str, *, reseller_id: int | None = None) -> KeyRow | None:
    mine, mine_args = _creator(reseller_id)
    row = await db.fetch_one(
        f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ? AND key = ?{mine}", app_id, key, *mine_args
    )
    return cast("KeyRow | None", row)


async def find_many(
    db: Executor, app_id: int, keys: Sequence[str], *, reseller_id: int | None = None
) -> list[KeyRow]:
    if not keys:
        return []
    mine, mine_args = _creator(reseller_id)
    rows = await db.fetch_all(
        f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ? AND key IN ({_marks(len(keys))}){mine} "
        "ORDER BY id",
        app_id,
        *keys,
        *mine_args,
    )
    return cast("list[KeyRow]", rows)


async def delete_grants_of(db: Executor, key_ids: Sequence[int]) -> int:
    """Delete the user subscriptions these keys created."""
    if not key_ids:
        return 0
    return await db.execute(
        f"DELETE FROM user_subscriptions WHERE key_id IN ({_marks(len(key_ids))})", *key_ids
    )


async def delete_ids(db: Executor, key_ids: Sequence[int]) -> int:
    if not key_ids:
        return 0
    return await db.execute(f"DELETE FROM license_keys WHERE id IN ({_marks(len(key_ids))})", *key_ids)


# What a bulk delete's `report` is told of each key deleted.
DELETED_COLUMNS = "id, key, level"


async def delete_matching(
    db: Database,
    app_id: int,
    which: str,
    *,
    reseller_id: int | None = None,
    report: bulk.Report | None = None,
) -> int:
    """Delete the keys a filter selects. Grants made from them stay (their key_id becomes NULL)."""
    mine, mine_args = _creator(reseller_id)
    where = f"app_id = ?{FILTERS[which]}{mine}"
    return await bulk.delete(
        db, "license_keys", where, app_id, *mine_args, returning=DELETED_COLUMNS, report=report
    )


async def delete_level(
    db: Database,
    app_id: int,
    level: str,
    which: str,
    *,
    reseller_id: int | None = None,
    report: bulk.Report | None = None,
) -> int:
    mine, mine_args = _creator(reseller_id)
    where = f"app_id = ? AND level = ?{FILTERS[which]}{mine}"
    return await bulk.delete(
        db, "license_keys", where, app_id, level, *mine_args, returning=DELETED_COLUMNS, report=report
    )


async def count(db: Executor, app_id: int, which: str, *, reseller_id: int | None = None) -> int:
    mine, mine_args = _creator(reseller_id)
    total: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM license_keys WHERE app_id = ?{FILTERS[which]}{mine}", app_id, *mine_args
    )
    return total


async def list_keys(
    db: Executor, app_id: int, which: str, limit: int | None, offset: int, *, reseller_id: int | None = None
) -> list[KeyRow]:
    """Oldest first; every matching key when `limit` is None."""
    mine, mine_args = _creator(reseller_id)
    sql = f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ?{FILTERS[which]}{mine} ORDER BY id"
    if limit is None:
        rows = await db.fetch_all(sql, app_id, *mine_args)
    else:
        rows = await db.fetch_all(sql + " LIMIT ? OFFSET ?", app_id, *mine_args, limit, offset)
    return cast("list[KeyRow]", rows)


async def list_redeemed(
    db: Executor, app_id: int, limit: int, offset: int, *, reseller_id: int | None = None
) -> list[KeyRow]:
    """Redeemed keys, the most recent redemption first."""
    mine, mine_args = _creator(reseller_id)
    rows = await db.fetch_all(
        f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ?{FILTERS['redeemed']}{mine} "
        "ORDER BY used_at DESC, id DESC LIMIT ? OFFSET ?",
        app_id,
        *mine_args,
        limit,
        offset,
    )
    return cast("list[KeyRow]", rows)


async def add_time_to_unused(
    db: Executor, app_id: int, seconds: int, *, reseller_id: int | None = None
) -> int:
    mine, mine_args = _creator(reseller_id)
    return await db.execute(
        f"UPDATE license_keys SET duration = duration + ? WHERE app_id = ? AND status = 'unused'{mine}",
        seconds,
        app_id,
        *mine_args,
    )


async def add_time_if_unused(db: Executor, key_id: int, seconds: int) -> int:
    """Lengthen one key while it is still unused (0 when it has been redeemed meanwhile)."""
    return await db.execute(
        "UPDATE license_keys SET duration = duration + ? WHERE id = ? AND status = 'unused'",
        seconds,
        key_id,
    )


async def extend_grants_of(db: Executor, key_id: int, seconds: int) -> int:
    return await db.execute(
        "UPDATE user_subscriptions SET expires_at = expires_at + ? WHERE key_id = ?", seconds, key_id
    )


async def set_note(db: Executor, app_id: int, key: str, note: str, *, reseller_id: int | None = None) -> int:
    mine, mine_args = _creator(reseller_id)
    return await db.execute(
        f"UPDATE license_keys SET note = ? WHERE app_id = ? AND key = ?{mine}", note, app_id, key, *mine_args
    )


async def set_duration_if_unused(db: Executor, key_id: int, seconds: int) -> int:
    return await db.execute(
        "UPDATE license_keys SET duration = ? WHERE id = ? AND status = 'unused'", seconds, key_id
    )


async def existing_keys(db: Executor, app_id: int, keys: Sequence[str]) -> set[str]:
    """Which of these keys the application already has (whoever generated them)."""
    if not keys:
        return set()
    rows = await db.fetch_all(
        f"SELECT key FROM license_keys WHERE app_id = ? AND key IN ({_marks(len(keys))})", app_id, *keys
    )
    return {row["key"] for row in rows}


async def set_level_if_unused(db: Executor, key_id: int, level: str) -> int:
    return await db.execute(
        "UPDATE license_keys SET level = ? WHERE id = ? AND status = 'unused'", level, key_id
    )


async def set_ban(db: Executor, key_id: int, reason: str | None) -> int:
    return await db.execute("UPDATE license_keys SET banned_reason = ? WHERE id = ?", reason, key_id)


class Redeemed(TypedDict):
    """What `mark_used` answers: the key's level and duration as they were when it was redeemed."""

    level: str
    duration: int


async def mark_used(
    db: Executor, app_id: int, key_id: int, *, user_id: int, username: str, now: int, counted: bool = True
) -> Redeemed | None:
    """Redeem the key if it is still unused and not banned; its level and duration as they
    were at that moment, or None when another redemption (or a ban) came first. `counted`
    False: the caller counts it for the overview (with what else it counts, in one statement)."""
    row = await db.fetch_one(
        "UPDATE license_keys SET status = 'used', used_at = ?, used_by_user_id = ?, used_by = ? "
        "WHERE id = ? AND app_id = ? AND status = 'unused' AND banned_reason IS NULL "
        "RETURNING level, duration",
        now,
        user_id,
        username,
        key_id,
        app_id,
    )
    if row is not None and counted:
        await overview.bump(db, app_id, now, "key")
    return cast("Redeemed | None", row)


async def insert_grant(
    db: Executor, *, user_id: int, subscription_id: int, expires_at: int, key_id: int, now: int
) -> None:
    await insert_grants(db, user_id=user_id, key_id=key_id, grants=[(subscription_id, expires_at)], now=now)


async def insert_grants(
    db: Executor, *, user_id: int, key_id: int, grants: list[tuple[int, int]], now: int
) -> None:
    """The grants a key gives (subscription id, expiry), in one statement."""
    await db.execute(
        "INSERT INTO user_subscriptions (user_id, subscription_id, expires_at, key_id, created_at) VALUES "
        + ", ".join("(?, ?, ?, ?, ?)" for _ in grants),
        *(value for sub_id, expires_at in grants for value in (user_id, sub_id, expires_at, key_id, now)),
    )


# --- browsing (the dashboard's list) ------------------------------------------------------------

# What the list sorts by: each is an indexed column, so every page is an index seek.
SORTS = {"created": "id", "key": "key", "level": "level"}
_EXPIRES = "(SELECT MAX(g.expires_at) FROM user_subscriptions g WHERE g.key_id = license_keys.id)"


@dataclass(frozen=True, slots=True)
class KeyQuery:
    """Which keys a list shows: every field narrows it; None/'' means any."""

    status: str = "all"  # a FILTERS name
    level: str = ""
    note: str = ""  # contained in the note
    generated_by: str = ""
    search: str = ""  # the start of the key, or of the redeeming user's name
    created_from: int | None = None
    created_to: int | None = None
    used_from: int | None = None
    used_to: int | None = None
    expires_from: int | None = None
    expires_to: int | None = None
    reseller_id: int | None = None
    ids: tuple[int, ...] | None = None  # only these keys (the rows checked in a list)


def _note_match(db: Executor, note: str) -> tuple[str, str]:
    """The condition "the note contains `note`", ignoring case on both databases (SQLite's LIKE
    does for ASCII; PostgreSQL needs ILIKE, which its trigram index answers), and its value."""
    like = "ILIKE" if db.dialect == "postgresql" else "LIKE"
    return f" AND note {like} ? ESCAPE '\\'", f"%{escape_like(note)}%"


def _where(db: Executor, app_id: int, query: KeyQuery, *, note: bool = True) -> tuple[str, list[Any]]:
    """The WHERE clause after `app_id = ?`: fixed fragments, values bound (`note=False` leaves
    the note's condition out)."""
    parts: list[str] = [FILTERS[query.status]]
    args: list[Any] = []

    def add(fragment: str, *values: Any) -> None:
        parts.append(fragment)
        args.extend(values)

    if query.level:
        add(" AND level = ?", query.level)
    if query.note and note:
        add(*_note_match(db, query.note))
    if query.generated_by:
        add(" AND generated_by = ?", query.generated_by)
    if query.search:
        # Exactly a key, or the user who redeemed keys: both index lookups, however many keys.
        # Not correlated with the outer row, so PostgreSQL runs it once, not once per key.
        add(
            " AND id IN (SELECT k.id FROM license_keys k WHERE k.app_id = ? AND k.key = ?"
            " UNION ALL SELECT k.id FROM license_keys k WHERE k.used_by_user_id IN"
            " (SELECT u.id FROM users u WHERE u.app_id = ? AND u.username = ?))",
            app_id,
            query.search,
            app_id,
            query.search,
        )
    dates, date_args = time_ranges(
        (
            ("created_at", query.created_from, query.created_to),
            ("used_at", query.used_from, query.used_to),
        ),
        "g.key_id = license_keys.id",
        (query.expires_from, query.expires_to),
    )
    add(dates, *date_args)
    if query.reseller_id is not None:
        add(" AND generated_by_account_id = ?", query.reseller_id)
    if query.ids is not None:
        add(f" AND id IN ({_marks(len(query.ids))})" if query.ids else " AND 1 = 0", *query.ids)
    return "".join(parts), args


async def browse(
    db: Executor, app_id: int, query: KeyQuery, request: PageRequest
) -> tuple[list[Row], int | None]:
    """One page of the keys the query selects (`request.size + 1` rows: see `paging.finish`),
    each with the latest expiry of the subscriptions its redemption granted; and how many keys
    the query selects, when reading the page had to count them anyway (else None).

    The page's ids are read first and each key's expiry only for them: a sort computed the expiry
    of every matching key before sorting (SQLite: every banned key, for banned keys by key)."""
    after, after_args, order = keyset(SORTS[request.sort], request)
    ids, ids_args, matched = await _page_ids(db, app_id, query, request, after, after_args, order)
    rows = await db.fetch_all(
        f"SELECT {COLUMNS}, {_EXPIRES} AS expires_at FROM license_keys WHERE id IN ({ids}) {order}",
        *ids_args,
    )
    return rows, matched


# A note filter first looks this far along the list's order before it reads every match.
NOTE_WINDOW = 20_000


async def _page_ids(
    db: Executor,
    app_id: int,
    query: KeyQuery,
    request: PageRequest,
    after: str,
    after_args: tuple[Any, ...],
    order: str,
) -> tuple[str, list[Any], int | None]:
    """The query of the page's ids, its values, and how many keys match when that was counted.

    A note filter is a substring: both planners guess how many keys it matches and, guessing
    many, walk the list's order dropping every key whose note differs, which reads the whole
    application when the matches lie far along that order (0.3-1.5 s at 1,000,000 keys). So the
    first NOTE_WINDOW keys in the list's order are filtered first, which holds the page whenever
    matches are not rare there; otherwise every match is read (PostgreSQL: its trigram index;
    SQLite: a scan of the (app_id, id, note) index) and sorted, a materialised set the planner
    cannot turn back into that walk; having read every match, it counts them too, which spares
    the list a second reading of them for its count."""
    where, args = _where(db, app_id, query)
    limit = request.size + 1
    if not query.note:
        inner = await newest_first_by_range(
            db, "license_keys", app_id, query.created_from, query.created_to, order
        )
        page = f"SELECT id FROM license_keys WHERE app_id = ?{where}{after} {inner} LIMIT ?"
        return page, [app_id, *args, *after_args, limit], None
    rest, rest_args = _where(db, app_id, query, note=False)
    note, pattern = _note_match(db, query.note)
    window = (
        f"WITH w AS MATERIALIZED (SELECT id, key, level, note FROM license_keys "
        f"WHERE app_id = ?{rest}{after} {order} LIMIT ?) SELECT id FROM w WHERE 1 = 1{note} {order} LIMIT ?"
    )
    window_args = [app_id, *rest_args, *after_args, NOTE_WINDOW, pattern, limit]
    found = [row["id"] for row in await db.fetch_all(window, *window_args)]
    if len(found) == limit:
        return _marks(limit), found, None
    every = await db.fetch_all(
        f"WITH m AS MATERIALIZED (SELECT id, key, level FROM license_keys WHERE app_id = ?{where}) "
        f"SELECT id, (SELECT COUNT(*) FROM m) AS matched FROM m WHERE 1 = 1{after} {order} LIMIT ?",
        app_id,
        *args,
        *after_args,
        limit,
    )
    ids = [row["id"] for row in every]
    matched: int | None = every[0]["matched"] if every else None
    return (_marks(len(ids)) if ids else "NULL"), ids, matched


async def count_matching(db: Executor, app_id: int, query: KeyQuery, cap: int) -> int:
    """How many keys the query selects, counting no further than `cap` + 1 (a list says "more
    than N" rather than count a million rows for every page)."""
    where, args = _where(db, app_id, query)
    total: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM license_keys WHERE app_id = ?{where} LIMIT ?) AS m",
        app_id,
        *args,
        cap + 1,
    )
    return total


async def keys_matching(db: Executor, app_id: int, query: KeyQuery, limit: int) -> list[str]:
    """The keys the query selects, oldest first, at most `limit` (bulk actions)."""
    where, args = _where(db, app_id, query)
    rows = await db.fetch_all(
        f"SELECT key FROM license_keys WHERE app_id = ?{where} ORDER BY id LIMIT ?", app_id, *args, limit
    )
    return [row["key"] for row in rows]


async def key_of_user(
    db: Executor, app_id: int, username: str, *, reseller_id: int | None = None
) -> str | None:
    """The first key the user redeemed (None when they redeemed none)."""
    mine, mine_args = _creator(reseller_id)
    key: str | None = await db.fetch_value(
        "SELECT k.key FROM license_keys k JOIN users u ON u.id = k.used_by_user_id "
        f"WHERE k.app_id = ? AND u.app_id = ? AND u.username = ?{mine} ORDER BY k.used_at, k.id LIMIT 1",
        app_id,
        app_id,
        username,
        *mine_args,
    )
    return key


# --- one key, and a user's keys (the dashboard's detail pages) --------------------------------


async def find_by_id(db: Executor, app_id: int, key_id: int, *, reseller_id: int | None = None) -> Row | None:
    mine, mine_args = _creator(reseller_id)
    return await db.fetch_one(
        f"SELECT {COLUMNS}, {_EXPIRES} AS expires_at FROM license_keys WHERE app_id = ? AND id = ?{mine}",
        app_id,
        key_id,
        *mine_args,
    )


async def of_user(db: Executor, app_id: int, user_id: int, *, reseller_id: int | None = None) -> list[Row]:
    """The keys a user redeemed, in the order redeemed (an index lookup by the redeeming user)."""
    mine, mine_args = _creator(reseller_id)
    return await db.fetch_all(
        f"SELECT {COLUMNS}, {_EXPIRES} AS expires_at FROM license_keys "
        f"WHERE used_by_user_id = ? AND app_id = ?{mine} ORDER BY used_at, id",
        user_id,
        app_id,
        *mine_args,
    )
