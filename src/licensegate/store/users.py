"""SQL for end users of an application and their HWIDs.

`reseller_id`, where a function takes it, limits the statement to the users that reseller owns
(`owner_account_id`); None means every user of the application.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict, cast

from licensegate.store import bulk, overview
from licensegate.store.database import Database, Executor, Row
from licensegate.store.grants import LIVE_GRANT
from licensegate.store.paging import PageRequest, escape_like, keyset, newest_first_by_range, time_ranges
from licensegate.store.subscriptions import ACTIVE_GRANT


def _owned(reseller_id: int | None, table: str = "") -> tuple[str, tuple[int, ...]]:
    """The fixed clause limiting a statement to one reseller's users (none: every user)."""
    if reseller_id is None:
        return "", ()
    return f" AND {table}owner_account_id = ?", (reseller_id,)


# A user's `username_key` by the application's rule. Bind: app_id, the name's fold, the name.
_KEY = (
    "CASE WHEN (SELECT case_insensitive_usernames FROM apps WHERE id = ?) = 1 "
    "THEN CAST(? AS TEXT) ELSE CAST(? AS TEXT) END"
)


LICENSE_USER = "license"  # `created_by` of users a License Login made (their name is their key)


class UserRef(TypedDict):
    """A user as `find` and `find_by_id` read them."""

    id: int
    username: str
    banned_reason: str | None
    last_ip: str | None
    password_hash: str | None
    created_by: str  # LICENSE_USER: named by its key (events show the name masked)


_REF_COLUMNS = "id, username, banned_reason, last_ip, password_hash, created_by"
_REF = f"SELECT {_REF_COLUMNS} FROM users"


async def find(db: Executor, app_id: int, username: str, *, reseller_id: int | None = None) -> UserRef | None:
    mine, mine_args = _owned(reseller_id)
    row = await db.fetch_one(f"{_REF} WHERE app_id = ? AND username = ?{mine}", app_id, username, *mine_args)
    return cast("UserRef | None", row)


async def find_named(
    db: Executor, app_id: int, name: str, key_fold: str, key_nfkc: str, *, reseller_id: int | None = None
) -> UserRef | None:
    """The user called exactly `name`, else the one whose `username_key` the name gives by the
    application's rule (`key_fold` where it compares names case-insensitively, else `key_nfkc`).
    Two index lookups."""
    mine, mine_args = _owned(reseller_id)
    row = await db.fetch_one(
        f"SELECT {_REF_COLUMNS}, 0 AS tier FROM users WHERE app_id = ? AND username = ?{mine} "
        f"UNION ALL SELECT {_REF_COLUMNS}, 1 AS tier FROM users "
        f"WHERE app_id = ? AND username_key = {_KEY}{mine} ORDER BY tier LIMIT 1",
        app_id,
        name,
        *mine_args,
        app_id,
        app_id,
        key_fold,
        key_nfkc,
        *mine_args,
    )
    if row is None:
        return None
    del row["tier"]
    return cast("UserRef", row)


async def find_by_id(
    db: Executor, app_id: int, user_id: int, *, reseller_id: int | None = None
) -> UserRef | None:
    mine, mine_args = _owned(reseller_id)
    row = await db.fetch_one(f"{_REF} WHERE app_id = ? AND id = ?{mine}", app_id, user_id, *mine_args)
    return cast("UserRef | None", row)


async def hwids(db: Executor, user_id: int) -> list[str]:
    rows = await db.fetch_all("SELECT hwid FROM user_hwids WHERE user_id = ? ORDER BY id", user_id)
    return [row["hwid"] for row in rows]


async def set_ban(db: Executor, user_id: int, reason: str | None) -> int:
    return await db.execute("UPDATE users SET banned_reason = ? WHERE id = ?", reason, user_id)


async def lift_ban(db: Executor, user_id: int) -> bool:
    """Lift the user's ban; False when they were not banned."""
    lifted = await db.execute(
        "UPDATE users SET banned_reason = NULL WHERE id = ? AND banned_reason IS NOT NULL", user_id
    )
    return lifted == 1


async def delete(db: Executor, user_id: int) -> int:
    """Delete the user; HWIDs, grants, variables, sessions and mutes go with it (foreign keys)."""
    return await db.execute("DELETE FROM users WHERE id = ?", user_id)


# --- creating, listing and changing users ------------------------------------------------------

_DETAIL_COLUMNS = (
    "id, username, email, banned_reason, created_at, last_login_at, last_ip, created_by, "
    "hwid_lock, hwid_cooldown, hwid_reset_at, failed_logins, locked_until, lockouts"
)


class UserDetails(TypedDict):
    """A row of `_DETAIL_COLUMNS` (never the password hash)."""

    id: int
    username: str
    email: str | None
    banned_reason: str | None
    created_at: int
    last_login_at: int | None
    last_ip: str | None
    created_by: str
    hwid_lock: int
    hwid_cooldown: int | None
    hwid_reset_at: int | None
    failed_logins: int
    locked_until: int | None
    lockouts: int


async def insert(
    db: Executor,
    *,
    app_id: int,
    username: str,
    username_fold: str,
    password_hash: str | None,
    email: str | None,
    hwid_lock: bool,
    created_by: str,
    now: int,
    owner_account_id: int | None = None,
    logged_in_from: str | None = None,
    counted: bool = True,
) -> int | None:
    """Create the user; None when the name is taken in this application (by its rule: exactly,
    or case-insensitively). `owner_account_id`: the reseller the user belongs to.
    `logged_in_from`: the address the user logs in from now (a key's first use). `counted`
    False: the caller counts the user for the overview (with what else it counts)."""
    user_id: int | None = await db.fetch_value(
        "INSERT INTO users (app_id, username, username_fold, username_key, password_hash, email, "
        "email_lower, hwid_lock, created_by, owner_account_id, created_at, last_login_at, last_ip) "
        f"VALUES (?, ?, ?, {_KEY}, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        app_id,
        username,
        username_fold,
        app_id,
        username_fold,
        username,
        password_hash,
        email,
        email.lower() if email is not None else None,
        1 if hwid_lock else 0,
        created_by,
        owner_account_id,
        now,
        None if logged_in_from is None else now,
        logged_in_from,
    )
    if user_id is not None and counted:
        await overview.bump(db, app_id, now, "user")
    return user_id


async def insert_imported(
    db: Executor,
    *,
    app_id: int,
    username: str,
    username_fold: str,
    password_hash: str | None,
    email_sha1: str | None,
    hwid: str | None,
    banned_reason: str | None,
    created_at: int,
    last_login_at: int | None,
    last_ip: str | None,
    hwid_reset_at: int | None,
    created_by: str,
    owner_account_id: int | None = None,
) -> int | None:
    """Create a user imported from KeyAuth, with KeyAuth's values as KeyAuth keeps them; None when
    the name is taken in this application (by its rule). `password_hash`: KeyAuth's bcrypt hash
    (`$2y$10$...`), or None for "the next login sets it" (`created_by` must then not be
    `LICENSE_USER`, whose users sign in with their key only). `email_sha1`: the
    SHA-1 hex of the lower-cased address (`email` stays NULL). `hwid`: KeyAuth's HWID string,
    kept whole as one `user_hwids` row marked `appended` (a device matches by containment).
    `hwid_reset_at`: when the HWID-reset cooldown started (KeyAuth's `cooldown` is when it ends).
    The overview's daily count of new users is not bumped: an import is not a day's sign-ups."""
    user_id: int | None = await db.fetch_value(
        "INSERT INTO users (app_id, username, username_fold, username_key, password_hash, "
        "email_sha1, banned_reason, hwid_lock, created_by, owner_account_id, created_at, "
        "last_login_at, last_ip, hwid_reset_at) "
        f"VALUES (?, ?, ?, {_KEY}, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
        app_id,
        username,
        username_fold,
        app_id,
        username_fold,
        username,
        password_hash,
        email_sha1,
        banned_reason,
        created_by,
        owner_account_id,
        created_at,
        last_login_at,
        last_ip,
        hwid_reset_at,
    )
    if user_id is not None and hwid:
        await db.execute(
            "INSERT INTO user_hwids (user_id, hwid, created_at, appended) VALUES (?, ?, ?, 1)",
            user_id,
            hwid,
            created_at,
        )
    return user_id


async def details(
    db: Executor, app_id: int, username: str, *, reseller_id: int | None = None
) -> UserDetails | None:
    mine, mine_args = _owned(reseller_id)
    row = await db.fetch_one(
        f"SELECT {_DETAIL_COLUMNS} FROM users WHERE app_id = ? AND username = ?{mine}",
        app_id,
        username,
        *mine_args,
    )
    return cast("UserDetails | None", row)


async def count(db: Executor, app_id: int, *, reseller_id: int | None = None) -> int:
    mine, mine_args = _owned(reseller_id)
    total: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM users WHERE app_id = ?{mine}", app_id, *mine_args
    )
    return total


async def page(
    db: Executor, app_id: int, *, limit: int, offset: int, reseller_id: int | None = None
) -> list[UserDetails]:
    mine, mine_args = _owned(reseller_id)
    rows = await db.fetch_all(
        f"SELECT {_DETAIL_COLUMNS} FROM users WHERE app_id = ?{mine} ORDER BY id LIMIT ? OFFSET ?",
        app_id,
        *mine_args,
        limit,
        offset,
    )
    return cast("list[UserDetails]", rows)


async def usernames(
    db: Executor, app_id: int, *, limit: int, offset: int, reseller_id: int | None = None
) -> list[str]:
    mine, mine_args = _owned(reseller_id)
    rows = await db.fetch_all(
        f"SELECT username FROM users WHERE app_id = ?{mine} ORDER BY id LIMIT ? OFFSET ?",
        app_id,
        *mine_args,
        limit,
        offset,
    )
    return [row["username"] for row in rows]


async def hwids_of_page(
    db: Executor, app_id: int, *, limit: int, offset: int, reseller_id: int | None = None
) -> dict[int, list[str]]:
    """The HWIDs of the users `page` returns, by user id."""
    mine, mine_args = _owned(reseller_id)
    rows = await db.fetch_all(
        "SELECT user_id, hwid FROM user_hwids WHERE user_id IN "
        f"(SELECT id FROM users WHERE app_id = ?{mine} ORDER BY id LIMIT ? OFFSET ?) ORDER BY id",
        app_id,
        *mine_args,
        limit,
        offset,
    )
    found: dict[int, list[str]] = {}
    for row in rows:
        found.setdefault(row["user_id"], []).append(row["hwid"])
    return found


async def add_hwid(db: Executor, user_id: int, hwid: str, now: int) -> int:
    """1 when added, 0 when the user already held it."""
    return await db.execute(
        "INSERT INTO user_hwids (user_id, hwid, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id, hwid) DO NOTHING",
        user_id,
        hwid,
        now,
    )


async def reset_hwids(db: Executor, user_id: int, now: int) -> int:
    """Forget the user's HWIDs (the next login records a new one); returns how many were held."""
    await db.execute("UPDATE users SET hwid_reset_at = ? WHERE id = ?", now, user_id)
    return await db.execute("DELETE FROM user_hwids WHERE user_id = ?", user_id)


async def reset_all_hwids(db: Executor, app_id: int, now: int, *, reseller_id: int | None = None) -> int:
    """Forget every HWID of the application's users; returns how many users held any."""
    mine, mine_args = _owned(reseller_id)
    users = await db.execute(
        f"UPDATE users SET hwid_reset_at = ? WHERE app_id = ?{mine} "
        "AND EXISTS (SELECT 1 FROM user_hwids h WHERE h.user_id = users.id)",
        now,
        app_id,
        *mine_args,
    )
    await db.execute(
        f"DELETE FROM user_hwids WHERE user_id IN (SELECT id FROM users WHERE app_id = ?{mine})",
        app_id,
        *mine_args,
    )
    return users


async def set_password(db: Executor, user_id: int, password_hash: str | None) -> int:
    return await db.execute("UPDATE users SET password_hash = ? WHERE id = ?", password_hash, user_id)


async def replace_password_hash(db: Executor, user_id: int, old_hash: str, new_hash: str) -> int:
    """Replace the hash only while it is still `old_hash`, so a password changed meanwhile (by the
    seller, a reset) is never overwritten with the old password's new hash; 1 when replaced."""
    return await db.execute(
        "UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?", new_hash, user_id, old_hash
    )


async def set_email(db: Executor, user_id: int, email: str) -> int:
    return await db.execute(
        "UPDATE users SET email = ?, email_lower = ?, email_sha1 = NULL WHERE id = ?",
        email,
        email.lower(),
        user_id,
    )


async def set_cooldown(db: Executor, user_id: int, seconds: int) -> int:
    return await db.execute("UPDATE users SET hwid_cooldown = ? WHERE id = ?", seconds, user_id)


async def rename(
    db: Executor, app_id: int, user_id: int, old_name: str, new_name: str, new_fold: str
) -> bool:
    """Rename the user and the copies of the name kept elsewhere: the `used_by` of the keys they
    redeemed, the author of their chat messages in this application's channels and their user
    token. False (nothing changed) when another user's name compares equal to the new one (by
    the application's rule). Run inside a transaction, after `store.apps.lock`."""
    taken = await db.fetch_value(
        f"SELECT id FROM users WHERE app_id = ? AND username_key = {_KEY} AND id <> ?",
        app_id,
        app_id,
        new_fold,
        new_name,
        user_id,
    )
    if taken is not None:
        return False
    await db.execute(
        f"UPDATE users SET username = ?, username_fold = ?, username_key = {_KEY} "
        "WHERE id = ? AND app_id = ?",
        new_name,
        new_fold,
        app_id,
        new_fold,
        new_name,
        user_id,
        app_id,
    )
    await db.execute(
        "UPDATE license_keys SET used_by = ? WHERE app_id = ? AND used_by_user_id = ?",
        new_name,
        app_id,
        user_id,
    )
    await db.execute(
        "UPDATE chat_messages SET author = ? WHERE author = ? AND role = 'user' "
        "AND channel_id IN (SELECT id FROM chat_channels WHERE app_id = ?)",
        new_name,
        old_name,
        app_id,
    )
    await db.execute(
        "UPDATE tokens SET assigned = ? WHERE app_id = ? AND kind = 'user' AND assigned = ?",
        new_name,
        app_id,
        old_name,
    )
    return True


async def rekey(db: Executor, app_id: int, *, case_insensitive: bool) -> None:
    """Make the application's usernames compare by their fold, or exactly again; a
    `UniqueViolation` when two names differ only in case (turning case-insensitivity on)."""
    source = "username_fold" if case_insensitive else "username"
    await db.execute_long(f"UPDATE users SET username_key = {source} WHERE app_id = ?", app_id)


async def case_twins(db: Executor, app_id: int, limit: int) -> list[str]:
    """Names of the application's users that share their fold with another user's."""
    rows = await db.fetch_all(
        "SELECT username FROM users WHERE app_id = ? AND username_fold IN "
        "(SELECT username_fold FROM users WHERE app_id = ? GROUP BY username_fold HAVING COUNT(*) > 1) "
        "ORDER BY username_fold, username LIMIT ?",
        app_id,
        app_id,
        limit,
    )
    return [row["username"] for row in rows]


# What a bulk delete's `report` is told of each user deleted.
DELETED_COLUMNS = "id, username, created_by"


async def delete_all(
    db: Database, app_id: int, *, reseller_id: int | None = None, report: bulk.Report | None = None
) -> int:
    mine, mine_args = _owned(reseller_id)
    return await bulk.delete(
        db, "users", f"app_id = ?{mine}", app_id, *mine_args, returning=DELETED_COLUMNS, report=report
    )


async def delete_expired(
    db: Database, app_id: int, now: int, *, reseller_id: int | None = None, report: bulk.Report | None = None
) -> int:
    """Delete the users without a live grant (store.grants.LIVE_GRANT): a user whose
    time is frozen by a pause is not expired."""
    mine, mine_args = _owned(reseller_id)
    return await bulk.delete(
        db,
        "users",
        f"app_id = ?{mine} AND NOT EXISTS ("
        "SELECT 1 FROM user_subscriptions us JOIN subscriptions s ON s.id = us.subscription_id "
        f"WHERE us.user_id = users.id AND {LIVE_GRANT})",
        app_id,
        *mine_args,
        now,
        returning=DELETED_COLUMNS,
        report=report,
    )


# --- browsing (the dashboard's list) ------------------------------------------------------------

# What the list sorts by: each is an indexed column, so every page is an index seek.
SORTS = {"created": "id", "username": "username"}
STATUSES = ("all", "active", "paused", "expired", "banned")
# Bind: now. A grant giving access now, and a user's grants as the filters read them.
_GRANTS = "SELECT 1 FROM user_subscriptions us JOIN subscriptions s ON s.id = us.subscription_id"
_RUNNING = f"EXISTS ({_GRANTS} WHERE us.user_id = users.id AND {ACTIVE_GRANT})"
_LIVE = f"EXISTS ({_GRANTS} WHERE us.user_id = users.id AND {LIVE_GRANT})"
_STATUS_WHERE = {
    "all": ("", 0),
    "banned": (" AND banned_reason IS NOT NULL", 0),
    "active": (f" AND banned_reason IS NULL AND {_RUNNING}", 1),
    "paused": (f" AND banned_reason IS NULL AND NOT {_RUNNING} AND {_LIVE}", 2),
    "expired": (f" AND banned_reason IS NULL AND NOT {_LIVE}", 1),
}
_LIST_COLUMNS = (
    "id, username, email, banned_reason, created_at, last_login_at, last_ip, created_by, hwid_lock"
)
# The highest code point: a username starting with a prefix sorts before prefix + this (binary order).
_LAST_CHAR = "\U0010ffff"


@dataclass(frozen=True, slots=True)
class UserQuery:
    """Which users a list shows: every field narrows it; None/'' means any."""

    now: int
    status: str = "all"  # a STATUSES name
    subscription_id: int | None = None  # holds a grant of it (expired ones too)
    search: str = ""  # the start of a username, a whole HWID or a whole last IP
    hwid: str = ""  # 'set': holds an HWID; 'none': holds none
    created_from: int | None = None
    created_to: int | None = None
    login_from: int | None = None
    login_to: int | None = None
    expires_from: int | None = None  # holds a grant ending in this range
    expires_to: int | None = None
    reseller_id: int | None = None


def _prefix(db: Executor, app_id: int, prefix: str) -> tuple[str, list[Any]]:
    """Users whose name starts with `prefix`, through an index on both databases: SQLite compares
    names byte by byte (the unique (app_id, username) index serves a range); PostgreSQL's
    collation may not, so it matches LIKE 'prefix%' through the text_pattern_ops index."""
    if db.dialect == "postgresql":
        return "SELECT u.id FROM users u WHERE u.app_id = ? AND u.username LIKE ?", [
            app_id,
            escape_like(prefix) + "%",
        ]
    return "SELECT u.id FROM users u WHERE u.app_id = ? AND u.username >= ? AND u.username < ?", [
        app_id,
        prefix,
        prefix + _LAST_CHAR,
    ]


def _where(db: Executor, app_id: int, query: UserQuery) -> tuple[str, list[Any]]:
    """The WHERE clause after `app_id = ?`: fixed fragments, values bound."""
    fragment, nows = _STATUS_WHERE[query.status]
    parts: list[str] = [fragment]
    args: list[Any] = [query.now] * nows

    def add(text: str, *values: Any) -> None:
        parts.append(text)
        args.extend(values)

    if query.search:
        # A username's start, a whole HWID or a whole address: each an index lookup, never a scan.
        # Not correlated with the outer row, so it runs once, not once per user.
        by_name, name_args = _prefix(db, app_id, query.search)
        add(
            f" AND id IN ({by_name} UNION ALL SELECT h.user_id FROM user_hwids h WHERE h.hwid = ?"
            " UNION ALL SELECT u.id FROM users u WHERE u.app_id = ? AND u.last_ip = ?)",
            *name_args,
            query.search,
            app_id,
            query.search,
        )
    if query.subscription_id is not None:
        add(
            " AND EXISTS (SELECT 1 FROM user_subscriptions g WHERE g.user_id = users.id"
            " AND g.subscription_id = ?)",
            query.subscription_id,
        )
    if query.hwid == "set":
        add(" AND EXISTS (SELECT 1 FROM user_hwids h WHERE h.user_id = users.id)")
    elif query.hwid == "none":
        add(" AND NOT EXISTS (SELECT 1 FROM user_hwids h WHERE h.user_id = users.id)")
    dates, date_args = time_ranges(
        (
            ("created_at", query.created_from, query.created_to),
            ("last_login_at", query.login_from, query.login_to),
        ),
        "g.user_id = users.id",
        (query.expires_from, query.expires_to),
    )
    add(dates, *date_args)
    if query.reseller_id is not None:
        add(" AND owner_account_id = ?", query.reseller_id)
    return "".join(parts), args


async def browse(db: Executor, app_id: int, query: UserQuery, request: PageRequest) -> list[Row]:
    """One page of the users the query selects (`request.size + 1` rows: see `paging.finish`)."""
    where, args = _where(db, app_id, query)
    after, after_args, order = keyset(SORTS[request.sort], request)
    order = await newest_first_by_range(db, "users", app_id, query.created_from, query.created_to, order)
    return await db.fetch_all(
        f"SELECT {_LIST_COLUMNS} FROM users WHERE app_id = ?{where}{after} {order} LIMIT ?",
        app_id,
        *args,
        *after_args,
        request.size + 1,
    )


async def count_matching(db: Executor, app_id: int, query: UserQuery, cap: int) -> int:
    """How many users the query selects, counting no further than `cap` + 1."""
    where, args = _where(db, app_id, query)
    total: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM users WHERE app_id = ?{where} LIMIT ?) AS m",
        app_id,
        *args,
        cap + 1,
    )
    return total


async def grants_of(db: Executor, user_ids: list[int]) -> list[Row]:
    """The grants of these users (a page of the list), with their subscription, oldest first."""
    if not user_ids:
        return []
    marks = ", ".join("?" * len(user_ids))
    return await db.fetch_all(
        "SELECT us.id, us.user_id, us.expires_at, us.paused_at, us.key_id, us.created_at, "
        "s.id AS subscription_id, s.name AS subscription, s.level, s.paused_at AS subscription_paused_at, "
        "(SELECT paused_at FROM apps WHERE id = s.app_id) AS app_paused_at "
        "FROM user_subscriptions us JOIN subscriptions s ON s.id = us.subscription_id "
        f"WHERE us.user_id IN ({marks}) ORDER BY us.id",
        *user_ids,
    )


async def hwids_of(db: Executor, user_ids: list[int]) -> list[Row]:
    """The HWIDs these users hold, oldest first."""
    if not user_ids:
        return []
    marks = ", ".join("?" * len(user_ids))
    return await db.fetch_all(
        f"SELECT user_id, hwid, created_at FROM user_hwids WHERE user_id IN ({marks}) ORDER BY id",
        *user_ids,
    )


async def one(db: Executor, app_id: int, user_id: int, *, reseller_id: int | None = None) -> Row | None:
    """One user as the dashboard shows it (never the password hash)."""
    mine, mine_args = _owned(reseller_id)
    return await db.fetch_one(
        f"SELECT {_DETAIL_COLUMNS}, owner_account_id FROM users WHERE app_id = ? AND id = ?{mine}",
        app_id,
        user_id,
        *mine_args,
    )
