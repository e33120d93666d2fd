"""login versions in bulk: a statement that changes many grants, HWIDs or rows of an application's
lists bumps the versions at a cost close to the statement's own (0056 made every row call a
function that updated its user, which made extending every user's grant five times slower on
PostgreSQL and three and a half times on SQLite)

PostgreSQL: the tables whose every row bumps a version get statement-level triggers with
transition tables (one set-based UPDATE of the users or applications the statement touched).
SQLite, which has row triggers only: an UPDATE that keeps a row's user (or application) bumps it
by its primary key (`= NEW.user_id`, not `IN (OLD.user_id, NEW.user_id)`).

Revision ID: 0058
Revises: 0057
Create Date: 2026-11-28 03:45:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0058"
down_revision = "0057"
branch_labels = None
depends_on = None

APP_TABLES = ("subscriptions", "blacklist", "whitelist", "seat_rules")
USER_TABLES = ("user_hwids", "user_subscriptions")
OWNERS = {"app_id": "apps", "user_id": "users"}  # the column a table names its owner by, and its table
EVENTS = ("insert", "update", "delete")


def _tables() -> list[tuple[str, str]]:
    return [(table, "app_id") for table in APP_TABLES] + [(table, "user_id") for table in USER_TABLES]


def _bump(column: str) -> str:
    return f"UPDATE {OWNERS[column]} SET login_version = login_version + 1 WHERE id"


# --- SQLite ----------------------------------------------------------------------------------------


def _sqlite_update(table: str, column: str, *, by_key: bool) -> str:
    if by_key:
        moved = f"{_bump(column)} = OLD.{column} AND OLD.{column} IS NOT NEW.{column};"
        body = f"{_bump(column)} = NEW.{column}; {moved}"
    else:
        body = f"{_bump(column)} IN (OLD.{column}, NEW.{column});"
    return f"CREATE TRIGGER {table}_login_version_update AFTER UPDATE ON {table} BEGIN {body} END"


# --- PostgreSQL ------------------------------------------------------------------------------------


def _pg_function(column: str, event: str) -> tuple[str, str]:
    owner = OWNERS[column]
    rows = {
        "insert": f"SELECT {column} FROM new_rows",
        "delete": f"SELECT {column} FROM old_rows",
        "update": f"SELECT {column} FROM old_rows UNION SELECT {column} FROM new_rows",
    }[event]
    name = f"lg_bump_{owner}_{event}d_login_version"
    return name, f"BEGIN {_bump(column)} IN ({rows}); RETURN NULL; END"


def _pg_trigger(table: str, column: str, event: str) -> str:
    function, _ = _pg_function(column, event)
    referencing = {
        "insert": "NEW TABLE AS new_rows",
        "delete": "OLD TABLE AS old_rows",
        "update": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
    }[event]
    return (
        f"CREATE TRIGGER {table}_login_version_{event} AFTER {event.upper()} ON {table} "
        f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
    )


# 0056's row triggers, made again by the downgrade.
ROW_FUNCTIONS = {
    "lg_bump_app_login_version": "BEGIN IF TG_OP <> 'INSERT' THEN UPDATE apps SET login_version = "
    "login_version + 1 WHERE id = OLD.app_id; END IF; IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND "
    "NEW.app_id IS DISTINCT FROM OLD.app_id) THEN UPDATE apps SET login_version = login_version + 1 "
    "WHERE id = NEW.app_id; END IF; RETURN NULL; END",
    "lg_bump_user_login_version": "BEGIN IF TG_OP <> 'INSERT' THEN UPDATE users SET login_version = "
    "login_version + 1 WHERE id = OLD.user_id; END IF; IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND "
    "NEW.user_id IS DISTINCT FROM OLD.user_id) THEN UPDATE users SET login_version = login_version + 1 "
    "WHERE id = NEW.user_id; END IF; RETURN NULL; END",
}


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table, column in _tables():
            op.execute(f"DROP TRIGGER {table}_login_version_update")
            op.execute(_sqlite_update(table, column, by_key=True))
        return
    for column in OWNERS:
        for event in EVENTS:
            name, body = _pg_function(column, event)
            op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$")
    for table, column in _tables():
        op.execute(f"DROP TRIGGER {table}_login_version ON {table}")
        for event in EVENTS:
            op.execute(_pg_trigger(table, column, event))
    for name in ROW_FUNCTIONS:
        op.execute(f"DROP FUNCTION {name}()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for table, column in _tables():
            op.execute(f"DROP TRIGGER {table}_login_version_update")
            op.execute(_sqlite_update(table, column, by_key=False))
        return
    for name, body in ROW_FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$")
    for table, column in _tables():
        for event in EVENTS:
            op.execute(f"DROP TRIGGER {table}_login_version_{event} ON {table}")
        function = "lg_bump_app_login_version" if column == "app_id" else "lg_bump_user_login_version"
        op.execute(
            f"CREATE TRIGGER {table}_login_version AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {function}()"
        )
    for column in OWNERS:
        for event in EVENTS:
            name, _ = _pg_function(column, event)
            op.execute(f"DROP FUNCTION {name}()")
