"""SQL of the login versions: what a worker checks before it trusts what it holds of a session
(domain/recheck.py). The `login_version` of `apps`, `users` and `sessions` is bumped by triggers
in the transaction of every change that can refuse or change a login (migrations 0056, 0058; the
columns they watch are listed below), so one read of the three sees every change committed before
it, made by any process on any machine. On PostgreSQL the database also announces each bump, and
each deleted application, user or session, on `licensegate_login` (migration 0060), and the
adapter tells this machine's workers of every statement it committed that may have changed one
(`may_change_logins`), so a worker may trust an entry without this read (invalidation.LoginNotify)."""

from __future__ import annotations

import re
from functools import lru_cache

from licensegate.store.database import Executor

# Through the session's own row: a session that is gone (ended, or its user or application
# deleted) has no versions, even where SQLite gave a deleted row's id to a new one.
_OF_SESSION = (
    "SELECT a.login_version AS app_version, u.login_version AS user_version, "
    "s.login_version AS session_version FROM sessions s JOIN apps a ON a.id = s.app_id "
    "JOIN users u ON u.id = s.user_id WHERE s.id = ?"
)

Versions = tuple[int, int, int]  # the application's, the user's and the session's


async def of_session(db: Executor, session_id: str) -> Versions | None:
    """The versions of a logged-in session, or None when the session, its user or its
    application is gone."""
    row = await db.fetch_one(_OF_SESSION, session_id)
    return None if row is None else (row["app_version"], row["user_version"], row["session_version"])


# What the triggers watch (store/schema.py says why; tests/store/test_login_versions.py checks
# that every column of these tables is in exactly one list and that the triggers watch these).
LOGIN_COLUMNS = {
    "users": (
        "app_id",
        "username",
        "password_hash",
        "banned_reason",
        "created_at",
        "created_by",
        "hwid_lock",
        "otp_secret",
        "otp_enabled",
    ),
    "sessions": (
        "app_id",
        "user_id",
        "credential",
        "validated",
        "expires_at",
        "hwid",
        "os",
        "architecture",
        "device",
        "cpu_cores",
        "ram",
        "client_version",
        "client_token",
        "enckey",
        "beat_state",  # what a heartbeat compares with
    ),
    "license_keys": (
        "key",
        "level",
        "duration",
        "status",
        "banned_reason",
        "generated_by_account_id",
        "used_by_user_id",
    ),
}
# What a login does not read, or writes itself as bookkeeping (its last login and address, its
# lock-out counters, a one-time code's step, a beat): changing them bumps nothing.
NOT_LOGIN_COLUMNS = {
    "users": (
        "id",
        "email",
        "email_lower",
        "email_sha1",
        "last_login_at",
        "last_ip",
        "owner_account_id",
        "hwid_reset_at",  # a reset deletes the HWIDs, which bumps
        "hwid_cooldown",
        "otp_last_step",
        "otp_pending_secret",
        "otp_pending_expires",
        "failed_logins",
        "locked_until",
        "lockouts",
        "username_fold",
        "username_key",  # what `login` finds a name by; its rule is an `apps` column
        "license_file_at",
        "login_version",
    ),
    "sessions": (
        "id",
        "created_at",
        "opened_ns",  # written once, at init; seats order by it
        "ip",
        "log_lines",
        "tamper_reports",
        "last_beat_at",
        "login_version",
    ),
    "license_keys": ("id", "app_id", "note", "generated_by", "created_at", "used_at", "used_by"),
}

# Every table whose write can move a login version or delete the rows the versions live on: the
# tables with login-version triggers and every table whose deletes cascade into them
# (tests/store/test_login_versions.py checks both against the schema).
LOGIN_TABLES = frozenset(
    {
        "accounts",
        "apps",
        "users",
        "sessions",
        "license_keys",
        "subscriptions",
        "blacklist",
        "whitelist",
        "seat_rules",
        "user_hwids",
        "user_subscriptions",
    }
)
# An insert into these changes no version and no row a held session depends on (an upsert does).
_INSERT_CHANGES_NOTHING = frozenset({"accounts", "apps", "users", "sessions", "license_keys"})
_TARGET = re.compile(
    r"\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?|MERGE\s+INTO|COPY)\s+(?:ONLY\s+)?(\w+)",
    re.IGNORECASE,
)
_SET = re.compile(r"\bSET\b", re.IGNORECASE)
_ASSIGNED = re.compile(r"(\w+)\s*=")
# Columns an update may write without moving a version (`login_version` itself does move it).
_BOOKKEEPING = {table: frozenset(columns) - {"login_version"} for table, columns in NOT_LOGIN_COLUMNS.items()}


@lru_cache(maxsize=4096)
def may_change_logins(sql: str) -> bool:
    """Whether a statement may move a login version or delete a row one lives on (erring towards
    yes): it writes one of LOGIN_TABLES, other than a plain insert of a new row there or an update
    whose every `name =` of the statement is a column no login reads (a login's own bookkeeping:
    its last login, a beat, a one-time code's step)."""
    for verb, table in _TARGET.findall(sql):
        table = table.lower()
        if table not in LOGIN_TABLES:
            continue
        verb = verb.split()[0].upper()
        if verb == "INSERT" and table in _INSERT_CHANGES_NOTHING and not re.search(r"DO\s+UPDATE", sql, re.I):
            continue
        if verb == "UPDATE" and table in NOT_LOGIN_COLUMNS:
            assigned = set(_ASSIGNED.findall(_SET.split(sql, maxsplit=1)[-1]))
            if assigned and assigned <= _BOOKKEEPING[table]:
                continue
        return True
    return False
