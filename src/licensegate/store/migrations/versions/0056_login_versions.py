"""login versions: apps, users and sessions get a login_version, bumped by triggers in the
transaction of every change that can refuse or change a login (domain/recheck.py trusts what a
worker holds of a session only while all three are unchanged)

Revision ID: 0056
Revises: 0055
Create Date: 2026-11-28 03:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0056"
down_revision = "0055"
branch_labels = None
depends_on = None

# Frozen here as they are at this revision (store/schema.py names the current ones; a column
# added to a list later comes with a migration that makes its trigger again).
APP_COLUMNS = [
    "id",
    "account_id",
    "ownerid",
    "name",
    "secret",
    "signing_key",
    "public_key",
    "version",
    "download_link",
    "enabled",
    "paused_at",
    "hwid_lock",
    "force_hwid",
    "min_hwid_length",
    "max_hwids",
    "hwid_reset_cooldown",
    "session_seconds",
    "min_username_length",
    "hash_check",
    "seller_log",
    "log_webhook_url",
    "tamper_action",
    "client_rate_limit",
    "client_rate_window",
    "auth_rate_limit",
    "auth_rate_window",
    "chat_history",
    "log_retention_days",
    "token_validation",
    "case_insensitive_usernames",
    "web_loader_download",
    "customer_panel",
    "license_file_ttl",
    "license_file_cooldown",
    "seats",
    "named_limits",
    "heartbeat_interval",
    "heartbeat_grace",
    "created_at",
    "updated_at",
]
USER_COLUMNS = [
    "app_id",
    "username",
    "password_hash",
    "banned_reason",
    "created_at",
    "created_by",
    "hwid_lock",
    "otp_secret",
    "otp_enabled",
]
SESSION_COLUMNS = [
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
    "beat_state",
]
KEY_COLUMNS = [
    "key",
    "level",
    "duration",
    "status",
    "banned_reason",
    "generated_by_account_id",
    "used_by_user_id",
]
ACCOUNT_COLUMNS = ("username", "ownerid", "disabled")
# Every row of these changes the application's logins.
APP_TABLES = ("subscriptions", "blacklist", "whitelist", "seat_rules")
# Every row of these changes its user's logins.
USER_TABLES = ("user_hwids", "user_subscriptions")

BUMP_APP = "UPDATE apps SET login_version = login_version + 1 WHERE id"
BUMP_USER = "UPDATE users SET login_version = login_version + 1 WHERE id"


def _changed(columns: list[str] | tuple[str, ...], differ: str) -> str:
    return " OR ".join(f"OLD.{column} {differ} NEW.{column}" for column in columns)


def _sqlite_triggers() -> dict[str, str]:
    triggers = {
        "apps_login_version": "AFTER UPDATE ON apps WHEN NEW.login_version = OLD.login_version AND "
        f"({_changed(APP_COLUMNS, 'IS NOT')}) BEGIN {BUMP_APP} = NEW.id; END",
        "users_login_version": f"AFTER UPDATE OF {', '.join(USER_COLUMNS)} ON users "
        f"WHEN {_changed(USER_COLUMNS, 'IS NOT')} BEGIN {BUMP_USER} = NEW.id; END",
        "accounts_login_version": f"AFTER UPDATE OF {', '.join(ACCOUNT_COLUMNS)} ON accounts "
        f"WHEN {_changed(ACCOUNT_COLUMNS, 'IS NOT')} BEGIN {BUMP_APP} IN "
        "(SELECT id FROM apps WHERE account_id = NEW.id); END",
        "sessions_login_version": f"AFTER UPDATE OF {', '.join(SESSION_COLUMNS)} ON sessions "
        f"WHEN {_changed(SESSION_COLUMNS, 'IS NOT')} BEGIN UPDATE sessions SET login_version = "
        "login_version + 1 WHERE id = NEW.id; END",
        "license_keys_login_version_update": f"AFTER UPDATE OF {', '.join(KEY_COLUMNS)} ON license_keys "
        f"WHEN {_changed(KEY_COLUMNS, 'IS NOT')} BEGIN {BUMP_USER} IN "
        "(OLD.used_by_user_id, NEW.used_by_user_id); END",
        "license_keys_login_version_delete": "AFTER DELETE ON license_keys WHEN OLD.used_by_user_id "
        f"IS NOT NULL BEGIN {BUMP_USER} = OLD.used_by_user_id; END",
    }
    for tables, bump, column in ((APP_TABLES, BUMP_APP, "app_id"), (USER_TABLES, BUMP_USER, "user_id")):
        for table in tables:
            triggers[f"{table}_login_version_insert"] = (
                f"AFTER INSERT ON {table} BEGIN {bump} = NEW.{column}; END"
            )
            triggers[f"{table}_login_version_update"] = (
                f"AFTER UPDATE ON {table} BEGIN {bump} IN (OLD.{column}, NEW.{column}); END"
            )
            triggers[f"{table}_login_version_delete"] = (
                f"AFTER DELETE ON {table} BEGIN {bump} = OLD.{column}; END"
            )
    return triggers


# PostgreSQL: one function per kind of bump; a row's own version is bumped before it is written.
PG_FUNCTIONS = {
    "lg_bump_own_login_version": "BEGIN IF NEW.login_version = OLD.login_version THEN "
    "NEW.login_version := OLD.login_version + 1; END IF; RETURN NEW; END",
    "lg_bump_app_login_version": f"BEGIN IF TG_OP <> 'INSERT' THEN {BUMP_APP} = OLD.app_id; END IF; "
    f"IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.app_id IS DISTINCT FROM OLD.app_id) THEN "
    f"{BUMP_APP} = NEW.app_id; END IF; RETURN NULL; END",
    "lg_bump_user_login_version": f"BEGIN IF TG_OP <> 'INSERT' THEN {BUMP_USER} = OLD.user_id; END IF; "
    f"IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.user_id IS DISTINCT FROM OLD.user_id) THEN "
    f"{BUMP_USER} = NEW.user_id; END IF; RETURN NULL; END",
    "lg_bump_key_user_login_version": f"BEGIN IF TG_OP <> 'INSERT' THEN {BUMP_USER} = OLD.used_by_user_id; "
    "END IF; IF TG_OP = 'UPDATE' AND NEW.used_by_user_id IS DISTINCT FROM OLD.used_by_user_id THEN "
    f"{BUMP_USER} = NEW.used_by_user_id; END IF; RETURN NULL; END",
    "lg_bump_account_login_version": f"BEGIN {BUMP_APP} IN (SELECT id FROM apps WHERE account_id = NEW.id); "
    "RETURN NULL; END",
}


def _postgres_triggers() -> dict[str, str]:
    triggers = {
        "apps_login_version": "BEFORE UPDATE ON apps FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) "
        "EXECUTE FUNCTION lg_bump_own_login_version()",
        "users_login_version": f"BEFORE UPDATE OF {', '.join(USER_COLUMNS)} ON users FOR EACH ROW "
        f"WHEN ({_changed(USER_COLUMNS, 'IS DISTINCT FROM')}) EXECUTE FUNCTION lg_bump_own_login_version()",
        "accounts_login_version": f"AFTER UPDATE OF {', '.join(ACCOUNT_COLUMNS)} ON accounts FOR EACH ROW "
        f"WHEN ({_changed(ACCOUNT_COLUMNS, 'IS DISTINCT FROM')}) "
        "EXECUTE FUNCTION lg_bump_account_login_version()",
        "sessions_login_version": f"BEFORE UPDATE OF {', '.join(SESSION_COLUMNS)} ON sessions "
        f"FOR EACH ROW WHEN ({_changed(SESSION_COLUMNS, 'IS DISTINCT FROM')}) "
        "EXECUTE FUNCTION lg_bump_own_login_version()",
        "license_keys_login_version_update": f"AFTER UPDATE OF {', '.join(KEY_COLUMNS)} ON license_keys "
        f"FOR EACH ROW WHEN ({_changed(KEY_COLUMNS, 'IS DISTINCT FROM')}) "
        "EXECUTE FUNCTION lg_bump_key_user_login_version()",
        "license_keys_login_version_delete": "AFTER DELETE ON license_keys FOR EACH ROW "
        "WHEN (OLD.used_by_user_id IS NOT NULL) EXECUTE FUNCTION lg_bump_key_user_login_version()",
    }
    for tables, function in (
        (APP_TABLES, "lg_bump_app_login_version"),
        (USER_TABLES, "lg_bump_user_login_version"),
    ):
        for table in tables:
            triggers[f"{table}_login_version"] = (
                f"AFTER INSERT OR UPDATE OR DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION {function}()"
            )
    return triggers


def _table(trigger: str) -> str:
    """The table a trigger of this migration is on: its name is the table's, then `_login_version`."""
    return trigger.partition("_login_version")[0]


def upgrade() -> None:
    op.add_column("apps", sa.Column("login_version", sa.BigInteger(), server_default="0", nullable=False))
    op.add_column("users", sa.Column("login_version", sa.BigInteger(), server_default="0", nullable=False))
    op.add_column("sessions", sa.Column("login_version", sa.BigInteger(), server_default="0", nullable=False))
    if op.get_bind().dialect.name == "sqlite":
        for name, body in _sqlite_triggers().items():
            op.execute(f"CREATE TRIGGER {name} {body}")
        return
    for name, body in PG_FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$")
    for name, body in _postgres_triggers().items():
        op.execute(f"CREATE TRIGGER {name} {body}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in _sqlite_triggers():
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        for name in _postgres_triggers():
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON {_table(name)}")
        for name in PG_FUNCTIONS:
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
    # Dropped in place: a batch copy of `apps` (or `users`) on SQLite drops the old table, and
    # with it (ON DELETE CASCADE) every user, key and grant of every application.
    op.execute("ALTER TABLE sessions DROP COLUMN login_version")
    op.execute("ALTER TABLE users DROP COLUMN login_version")
    op.execute("ALTER TABLE apps DROP COLUMN login_version")
