"""SQL of the KeyAuth importer: each row written only where it is not there yet (the unique
constraint decides, or a NOT EXISTS where the table has none), so running an import again adds
nothing. Every function answers whether it wrote (True/1) or found the row there (False/0).

Rows refer to their user, key, subscription or channel by KeyAuth's text (username, key,
name), resolved here by the indexes, so the importer keeps no map of a million ids in memory.
`import_seen` is a temporary table of what this run saw (by kind and KeyAuth's collation fold),
so a duplicate or a case variant later in the source is told from a row an earlier run wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate.store.database import Executor, Row

# --- what this run saw ---------------------------------------------------------------------------


async def start_seen(db: Executor) -> None:
    """An empty `import_seen` on this connection (a temporary table: never in the schema)."""
    await db.execute(
        "CREATE TEMPORARY TABLE IF NOT EXISTS import_seen "
        "(kind TEXT NOT NULL, fold TEXT NOT NULL, first TEXT NOT NULL, PRIMARY KEY (kind, fold))"
    )
    await db.execute("DELETE FROM import_seen")


async def end_seen(db: Executor) -> None:
    await db.execute("DELETE FROM import_seen")


# --- the owner and the application ---------------------------------------------------------------


async def account(db: Executor, username: str) -> Row | None:
    return await db.fetch_one("SELECT id, role, ownerid FROM accounts WHERE username = ?", username)


async def ownerid_holders(db: Executor, ownerid: str) -> list[Row]:
    """Accounts that have this ownerid, or whose applications answer to it."""
    return await db.fetch_all(
        "SELECT id FROM accounts WHERE ownerid = ? UNION SELECT account_id FROM apps WHERE ownerid = ?",
        ownerid,
        ownerid,
    )


async def find_app(db: Executor, ownerid: str, name: str) -> Row | None:
    return await db.fetch_one(
        "SELECT id, account_id, public_key FROM apps WHERE ownerid = ? AND name = ?", ownerid, name
    )


async def apply_settings(db: Executor, app_id: int, values: dict[str, Any]) -> None:
    """`values` by column name (names come from the importer's own table, never from input)."""
    if not values:
        return
    columns = ", ".join(f"{name} = ?" for name in values)
    await db.execute(f"UPDATE apps SET {columns} WHERE id = ?", *values.values(), app_id)


async def add_message(db: Executor, app_id: int, name: str, text: str) -> bool:
    return bool(
        await db.execute(
            "INSERT INTO app_messages (app_id, name, text) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            app_id,
            name,
            text,
        )
    )


async def add_hash(db: Executor, app_id: int, value: str, now: int) -> bool:
    return bool(
        await db.execute(
            "INSERT INTO app_hashes (app_id, hash, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            app_id,
            value,
            now,
        )
    )


async def add_seller_key(
    db: Executor, app_id: int, key_hash: str, prefix: str, permissions: int, now: int
) -> str:
    """'added', 'exists' (this application has it), or 'elsewhere' (another application does)."""
    holder = await db.fetch_value("SELECT app_id FROM seller_keys WHERE key_hash = ?", key_hash)
    if holder is not None:
        return "exists" if holder == app_id else "elsewhere"
    await db.execute(
        "INSERT INTO seller_keys (app_id, key_hash, prefix, name, permissions, created_at) "
        "VALUES (?, ?, ?, 'KeyAuth seller key', ?, ?)",
        app_id,
        key_hash,
        prefix,
        permissions,
        now,
    )
    return "added"


async def add_subscription(db: Executor, app_id: int, name: str, level: str, now: int) -> bool:
    return bool(
        await db.execute(
            "INSERT INTO subscriptions (app_id, name, level, created_at) VALUES (?, ?, ?, ?) ON "
            "CONFLICT DO NOTHING",
            app_id,
            name,
            level,
            now,
        )
    )


# --- the team ------------------------------------------------------------------------------------


async def team_member(db: Executor, username: str) -> Row | None:
    """The account of this name with the application it is a team member of (app_id NULL: none)."""
    return await db.fetch_one(
        "SELECT a.id, a.role, t.app_id FROM accounts a LEFT JOIN team_members t ON t.account_id = a.id "
        "WHERE a.username = ?",
        username,
    )


async def add_team_member(
    db: Executor,
    *,
    app_id: int,
    owner_id: int,
    username: str,
    role: str,
    password_hash: str,
    permissions: int,
    key_levels: str,
    balances: dict[str, int],
    now: int,
) -> int:
    account_id: int = await db.fetch_value(
        "INSERT INTO accounts (username, password_hash, role, parent_id, created_at) VALUES (?, ?, ?, ?, ?) "
        "RETURNING id",
        username,
        password_hash,
        role,
        owner_id,
        now,
    )
    columns = "".join(f", balance_{bucket}" for bucket in balances)
    marks = ", ?" * len(balances)
    await db.execute(
        f"INSERT INTO team_members (account_id, app_id, permissions, key_levels{columns}) VALUES (?, "
        f"?, ?, ?{marks})",
        account_id,
        app_id,
        permissions,
        key_levels,
        *balances.values(),
    )
    return account_id


# --- keys, users and their subscriptions ---------------------------------------------------------


async def team_account_id(db: Executor, app_id: int, username: str | None) -> int | None:
    if not username:
        return None
    found: int | None = await db.fetch_value(
        "SELECT a.id FROM accounts a JOIN team_members t ON t.account_id = a.id WHERE a.username = ? "
        "AND t.app_id = ?",
        username,
        app_id,
    )
    return found


async def link_used_keys(db: Executor, app_id: int) -> None:
    """Each used key to the user it names (KeyAuth's `usedby`), once both are written: one
    statement over every used key of the application."""
    await db.execute_long(
        "UPDATE license_keys SET used_by_user_id = (SELECT u.id FROM users u WHERE u.app_id = "
        "license_keys.app_id "
        "AND u.username = license_keys.used_by) WHERE app_id = ? AND used_by IS NOT NULL AND "
        "used_by_user_id IS NULL",
        app_id,
    )


async def subscription_id(db: Executor, app_id: int, name: str) -> int | None:
    """The subscription of that name (KeyAuth joined names without case where none matches exactly)."""
    found: int | None = await db.fetch_value(
        "SELECT id FROM subscriptions WHERE app_id = ? AND name = ? UNION ALL "
        "SELECT id FROM subscriptions WHERE app_id = ? AND LOWER(name) = LOWER(?) LIMIT 1",
        app_id,
        name,
        app_id,
        name,
    )
    return found


# --- everything else of an application -----------------------------------------------------------


async def add_global_var(db: Executor, app_id: int, name: str, value: str, authed: bool, now: int) -> bool:
    return bool(
        await db.execute(
            "INSERT INTO global_vars (app_id, name, value, authed, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            app_id,
            name,
            value,
            1 if authed else 0,
            now,
            now,
        )
    )


async def add_whitelisted(db: Executor, app_id: int, value: str, now: int) -> bool:
    return bool(
        await db.execute(
            "INSERT INTO whitelist (app_id, value, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            app_id,
            value,
            now,
        )
    )


async def add_webhook(
    db: Executor,
    app_id: int,
    webid: str,
    base_url: str,
    user_agent: str,
    authed: bool,
    *,
    enabled: bool,
    now: int,
) -> bool:
    """`base_url` sealed; `enabled` False for a URL that must be entered again."""
    return bool(
        await db.execute(
            "INSERT INTO webhooks (app_id, webid, base_url, user_agent, authed, enabled, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            app_id,
            webid,
            base_url,
            user_agent,
            1 if authed else 0,
            1 if enabled else 0,
            now,
        )
    )


async def add_channel(db: Executor, app_id: int, name: str, delay: int, now: int) -> bool:
    return bool(
        await db.execute(
            "INSERT INTO chat_channels (app_id, name, delay_seconds, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            app_id,
            name,
            delay,
            now,
        )
    )


async def add_chat_message(
    db: Executor, app_id: int, channel: str, author: str, message: str, at: int
) -> str:
    """'added', 'exists' or 'no_channel'."""
    channel_id = await db.fetch_value(
        "SELECT id FROM chat_channels WHERE app_id = ? AND name = ?", app_id, channel
    )
    if channel_id is None:
        return "no_channel"
    added = await db.execute(
        "INSERT INTO chat_messages (channel_id, author, role, message, created_at) "
        "SELECT CAST(? AS BIGINT), CAST(? AS TEXT), 'user', CAST(? AS TEXT), CAST(? AS BIGINT) "
        "WHERE NOT EXISTS (SELECT 1 FROM chat_messages WHERE channel_id = ? AND author = ? AND message = ? "
        "AND created_at = ?)",
        channel_id,
        author,
        message,
        at,
        channel_id,
        author,
        message,
        at,
    )
    return "added" if added else "exists"


async def add_mute(db: Executor, app_id: int, username: str, until: int, now: int) -> str:
    """'added', 'exists' or 'no_user'."""
    user_id = await db.fetch_value("SELECT id FROM users WHERE app_id = ? AND username = ?", app_id, username)
    if user_id is None:
        return "no_user"
    added = await db.execute(
        "INSERT INTO chat_mutes (app_id, user_id, until, created_at) VALUES (?, ?, ?, ?) ON CONFLICT "
        "DO NOTHING",
        app_id,
        user_id,
        until,
        now,
    )
    return "added" if added else "exists"


async def add_button(db: Executor, app_id: int, value: str, text: str, position: int) -> bool:
    return bool(
        await db.execute(
            "INSERT INTO loader_buttons (app_id, value, text, position) VALUES (?, ?, ?, ?) ON "
            "CONFLICT DO NOTHING",
            app_id,
            value,
            text,
            position,
        )
    )


async def add_token(
    db: Executor,
    *,
    app_id: int,
    token_hash: str,
    token_sealed: str,
    kind: str,
    assigned: str,
    banned_reason: str | None,
    file_hash: str | None,
    used_at: int | None,
    now: int,
) -> bool:
    if await db.fetch_value("SELECT 1 FROM tokens WHERE token_hash = ?", token_hash) is not None:
        return False
    await db.execute(
        "INSERT INTO tokens (app_id, token_hash, token_sealed, kind, assigned, user_id, license_key_id, "
        "banned_reason, file_hash, used_at, created_at) VALUES (?, ?, ?, ?, ?, "
        "(SELECT id FROM users WHERE app_id = ? AND username = ? AND ? = 'user'), "
        "(SELECT id FROM license_keys WHERE app_id = ? AND key = ? AND ? = 'license'), ?, ?, ?, ?)",
        app_id,
        token_hash,
        token_sealed,
        kind,
        assigned,
        app_id,
        assigned,
        kind,
        app_id,
        assigned,
        kind,
        banned_reason,
        file_hash,
        used_at,
        now,
    )
    return True


@dataclass
class LogRow:
    credential: str | None
    pcuser: str | None
    message: str
    at: int


async def add_logs(db: Executor, app_id: int, logs: list[LogRow]) -> int:
    """How many of `logs` were written: those with no entry of the same time, message and
    credential yet (equal ones within `logs` must have been merged by the caller)."""
    if not logs:
        return 0
    args: list[Any] = []
    for log in logs:
        args += [log.credential, log.pcuser, log.message, log.at]
    types = ("TEXT", "TEXT", "TEXT", "BIGINT")
    return await db.execute(
        "INSERT INTO client_logs (app_id, credential, pcuser, message, created_at) "
        f"SELECT CAST(? AS BIGINT), v.column1, v.column2, v.column3, v.column4 FROM (VALUES "
        f"{_typed_rows(types, len(logs))}) AS v WHERE NOT EXISTS (SELECT 1 FROM client_logs c "
        "WHERE c.app_id = ? AND c.created_at = v.column4 AND c.message = v.column3 "
        "AND COALESCE(c.credential, '') = COALESCE(v.column1, ''))",
        app_id,
        *args,
        app_id,
    )


async def file_exists(db: Executor, app_id: int, file_id: str) -> bool:
    return (
        await db.fetch_value("SELECT 1 FROM files WHERE app_id = ? AND file_id = ?", app_id, file_id)
        is not None
    )


# --- chunks of rows: one statement per table for up to CHUNK rows ---------------------------------

CHUNK = 500  # rows per statement: 500 x 14 values stays far below both databases' parameter caps


def _rows_of(width: int, count: int) -> str:
    """`(?, ?), (?, ?)`: the placeholders of a multi-row VALUES (only counts go into the text)."""
    return ", ".join(["(" + ", ".join(["?"] * width) + ")"] * count)


def _typed_rows(types: tuple[str, ...], count: int) -> str:
    """A VALUES list whose placeholders carry their types (PostgreSQL cannot infer them in a
    FROM (VALUES ...)); its columns are named column1, column2, ... by both databases."""
    row = "(" + ", ".join(f"CAST(? AS {kind})" for kind in types) + ")"
    return ", ".join([row] * count)


def _in(count: int) -> str:
    return ", ".join(["?"] * count)


async def see_many(db: Executor, kind: str, firsts: dict[str, str]) -> dict[str, str]:
    """Record the folds `firsts` (fold -> text, each new in this chunk) as seen; answer the ones an
    earlier chunk saw already, with the text first seen with each."""
    if not firsts:
        return {}
    args: list[Any] = []
    for fold, text in firsts.items():
        args += [kind, fold, text]
    added = await db.fetch_all(
        f"INSERT INTO import_seen (kind, fold, first) VALUES {_rows_of(3, len(firsts))} "
        "ON CONFLICT DO NOTHING RETURNING fold",
        *args,
    )
    new = {row["fold"] for row in added}
    earlier = [fold for fold in firsts if fold not in new]
    if not earlier:
        return {}
    rows = await db.fetch_all(
        f"SELECT fold, first FROM import_seen WHERE kind = ? AND fold IN ({_in(len(earlier))})",
        kind,
        *earlier,
    )
    return {row["fold"]: row["first"] for row in rows}


@dataclass
class KeyRow:
    key: str
    level: str
    duration: int
    note: str | None
    status: str
    banned_reason: str | None
    generated_by: str
    generated_by_account_id: int | None
    created_at: int
    used_at: int | None
    used_by: str | None


async def add_keys(db: Executor, app_id: int, keys: list[KeyRow]) -> int:
    """How many of `keys` were written (a key the application has already is left as it is)."""
    if not keys:
        return 0
    args: list[Any] = []
    for k in keys:
        args += [app_id, k.key, k.level, k.duration, k.note, k.status, k.banned_reason, k.generated_by]
        args += [k.generated_by_account_id, k.created_at, k.used_at, k.used_by]
    return await db.execute(
        "INSERT INTO license_keys (app_id, key, level, duration, note, status, banned_reason, "
        "generated_by, generated_by_account_id, created_at, used_at, used_by) "
        f"VALUES {_rows_of(12, len(keys))} ON CONFLICT DO NOTHING",
        *args,
    )


async def keys_among(db: Executor, app_id: int, texts: list[str]) -> set[str]:
    """Which of `texts` are keys of the application."""
    return await _among(db, "SELECT key AS found FROM license_keys WHERE app_id = ? AND key", app_id, texts)


async def users_among(db: Executor, app_id: int, names: list[str]) -> set[str]:
    """Which of `names` are users of the application."""
    return await _among(
        db, "SELECT username AS found FROM users WHERE app_id = ? AND username", app_id, names
    )


async def _among(db: Executor, select: str, app_id: int, values: list[str]) -> set[str]:
    """`select` (this module's own text, ending in the column) IN `values`: those it finds."""
    if not values:
        return set()
    rows = await db.fetch_all(f"{select} IN ({_in(len(values))})", app_id, *values)
    return {row["found"] for row in rows}


@dataclass
class UserRow:
    """An imported user as `store.users.insert_imported` documents its values."""

    username: str
    username_fold: str
    password_hash: str | None
    email_sha1: str | None
    hwid: str | None
    banned_reason: str | None
    created_at: int
    last_login_at: int | None
    last_ip: str | None
    hwid_reset_at: int | None
    created_by: str
    owner_account_id: int | None


async def add_users(db: Executor, app_id: int, users: list[UserRow]) -> int:
    """Write the users whose name is free in the application (by its rule), with their HWID
    strings; how many were written. Usernames must differ within `users`."""
    if not users:
        return 0
    insensitive = await db.fetch_value("SELECT case_insensitive_usernames FROM apps WHERE id = ?", app_id)
    args: list[Any] = []
    for u in users:
        name_key = u.username_fold if insensitive == 1 else u.username
        args += [app_id, u.username, u.username_fold, name_key, u.password_hash, u.email_sha1]
        args += [u.banned_reason, u.created_by, u.owner_account_id, u.created_at, u.last_login_at]
        args += [u.last_ip, u.hwid_reset_at]
    added = await db.fetch_all(
        "INSERT INTO users (app_id, username, username_fold, username_key, password_hash, "
        "email_sha1, banned_reason, created_by, owner_account_id, created_at, last_login_at, "
        f"last_ip, hwid_reset_at) VALUES {_rows_of(13, len(users))} ON CONFLICT DO NOTHING "
        "RETURNING id, username",
        *args,
    )
    by_name = {u.username: u for u in users}
    hwids: list[Any] = []
    for row in added:
        user = by_name[row["username"]]
        if user.hwid:
            hwids += [row["id"], user.hwid, user.created_at, 1]  # 1: appended, KeyAuth's string
    if hwids:
        await db.execute(
            "INSERT INTO user_hwids (user_id, hwid, created_at, appended) "
            f"VALUES {_rows_of(4, len(hwids) // 4)}",
            *hwids,
        )
    return len(added)


@dataclass
class GrantRow:
    username: str
    sub_id: int
    expires_at: int
    paused_at: int | None
    key: str | None


async def add_grants(db: Executor, app_id: int, grants: list[GrantRow], now: int) -> int:
    """How many of `grants` were written: those whose user is there and who has no such grant yet.
    A paused grant is the same grant when its time left is (a dump and a live read give it at
    different moments). Equal grants within `grants` must have been merged by the caller.
    `subscription_id + 0` keeps the check on the index by user (a user has a few grants): on the
    index by (subscription_id, expires_at, user_id) PostgreSQL read every grant of the
    subscription for each row, which made an import quadratic."""
    if not grants:
        return 0
    args: list[Any] = []
    for g in grants:
        args += [g.username, g.sub_id, g.expires_at, g.paused_at, g.key]
    types = ("TEXT", "BIGINT", "BIGINT", "BIGINT", "TEXT")
    return await db.execute(
        "INSERT INTO user_subscriptions (user_id, subscription_id, expires_at, paused_at, key_id, "
        "created_at) SELECT u.id, v.column2, v.column3, v.column4, "
        "(SELECT k.id FROM license_keys k WHERE k.app_id = u.app_id AND k.key = v.column5), "
        f"CAST(? AS BIGINT) FROM (VALUES {_typed_rows(types, len(grants))}) AS v "
        "JOIN users u ON u.app_id = ? AND u.username = v.column1 WHERE NOT EXISTS "
        "(SELECT 1 FROM user_subscriptions g WHERE g.user_id = u.id AND g.subscription_id + 0 = v.column2 "
        "AND g.expires_at - COALESCE(g.paused_at, 0) = v.column3 - COALESCE(v.column4, 0) "
        "AND CASE WHEN g.paused_at IS NULL THEN 0 ELSE 1 END = "
        "CASE WHEN v.column4 IS NULL THEN 0 ELSE 1 END)",
        now,
        *args,
        app_id,
    )


@dataclass
class UserVarRow:
    username: str
    name: str
    value: str
    read_only: bool


async def add_user_vars(db: Executor, app_id: int, variables: list[UserVarRow], now: int) -> int:
    """How many of `variables` were written: those whose user is there and has no such variable."""
    if not variables:
        return 0
    args: list[Any] = []
    for var in variables:
        args += [var.username, var.name, var.value, 1 if var.read_only else 0]
    types = ("TEXT", "TEXT", "TEXT", "INTEGER")
    return await db.execute(
        "INSERT INTO user_vars (app_id, user_id, name, value, read_only, created_at, updated_at) "
        "SELECT u.app_id, u.id, v.column2, v.column3, v.column4, CAST(? AS BIGINT), CAST(? AS BIGINT) "
        f"FROM (VALUES {_typed_rows(types, len(variables))}) AS v "
        "JOIN users u ON u.app_id = ? AND u.username = v.column1 WHERE u.id IS NOT NULL "
        "ON CONFLICT DO NOTHING",
        now,
        now,
        *args,
        app_id,
    )
