"""login notifications: on PostgreSQL, a change of a login version (or a deleted application, user
or session) is announced on the channel `licensegate_login`, so that a worker may trust what it
holds of a session without reading the versions at every call (domain/recheck.py, notify mode)

The triggers watch the three rows the versions live on, not the changes that bump them: whatever
moves `login_version` (the triggers of 0056 and 0058, a migration to come, SQL by hand) or deletes
one of those rows is announced, which is exactly what `store.loginversions.of_session` would see.
The payload is `a<id>`, `u<id>` or `s<session id>`; PostgreSQL delivers it at commit (never for a
rolled-back change) and folds identical ones of a transaction. A transaction that touches very
many rows (a bulk extension of every user's grants, the expired sessions' sweep) announces its
first 100 and then `*` ("anything may have changed") instead of thousands. SQLite has nothing to
announce to: its workers read the versions at every call.

Revision ID: 0060
Revises: 0059
Create Date: 2026-11-28 06:15:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0060"
down_revision = "0059"
branch_labels = None
depends_on = None

CHANNEL = "licensegate_login"  # invalidation.LOGIN_CHANNEL
EACH = 100  # announcements of one transaction before it says `*` instead
TABLES = {"apps": "a", "users": "u", "sessions": "s"}  # each table's payload prefix

# A transaction-local setting counts what this transaction announced (a setting made with
# is_local = true is undone at its end, whether it commits or rolls back).
NOTIFY_ROW = (
    (
        "DECLARE sent integer := coalesce(nullif(current_setting('licensegate.login_notices', true), ''), "
        "'0')::integer; BEGIN IF sent > $EACH THEN RETURN NULL; END IF; "
        "IF sent = $EACH THEN PERFORM pg_notify('$CHANNEL', '*'); "
        "ELSIF TG_OP = 'DELETE' THEN PERFORM pg_notify('$CHANNEL', TG_ARGV[0] || OLD.id::text); "
        "ELSE PERFORM pg_notify('$CHANNEL', TG_ARGV[0] || NEW.id::text); END IF; "
        "PERFORM set_config('licensegate.login_notices', (sent + 1)::text, true); RETURN NULL; END"
    )
    .replace("$EACH", str(EACH))
    .replace("$CHANNEL", CHANNEL)
)
NOTIFY_EVERYTHING = f"BEGIN PERFORM pg_notify('{CHANNEL}', '*'); RETURN NULL; END"
FUNCTIONS = {"lg_notify_login": NOTIFY_ROW, "lg_notify_login_everything": NOTIFY_EVERYTHING}


def _triggers() -> dict[str, tuple[str, str]]:
    """name: (table, the rest of its CREATE TRIGGER)"""
    triggers = {}
    for table, prefix in TABLES.items():
        triggers[f"{table}_login_notify_update"] = (
            table,
            f"AFTER UPDATE ON {table} FOR EACH ROW WHEN (OLD.login_version IS DISTINCT FROM "
            f"NEW.login_version) EXECUTE FUNCTION lg_notify_login('{prefix}')",
        )
        triggers[f"{table}_login_notify_delete"] = (
            table,
            f"AFTER DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION lg_notify_login('{prefix}')",
        )
        triggers[f"{table}_login_notify_truncate"] = (
            table,
            f"AFTER TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION lg_notify_login_everything()",
        )
    return triggers


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for name, body in FUNCTIONS.items():
        op.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$")
    for name, (_table, body) in _triggers().items():
        op.execute(f"CREATE TRIGGER {name} {body}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for name, (table, _body) in _triggers().items():
        op.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
    for name in FUNCTIONS:
        op.execute(f"DROP FUNCTION IF EXISTS {name}()")
