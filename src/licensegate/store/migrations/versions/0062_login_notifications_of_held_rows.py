"""login notifications only for what a worker may hold: not a session's first login, not a user
made by the announcing transaction itself

Every announcement costs its transaction PostgreSQL's notification-queue lock, which is held
until the commit is flushed, so transactions that announce commit one after another (bench: a
first use at 321 req/s, 444 with nothing announced). A worker holds logged-in sessions only
(`domain.recheck.Rechecks.hold`), so a session's move from not validated to validated changes
nothing anyone holds; and a user made by the same transaction cannot be held anywhere before
it commits (a first use marks it: `licensegate.made_user`, a transaction-local setting that
`store.logins.key_or_first_use` sets). Every other move is announced as by migration 0060.

Revision ID: 0062
Revises: 0061
Create Date: 2026-11-28 10:45:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0062"
down_revision = "0061"
branch_labels = None
depends_on = None

MOVED = "OLD.login_version IS DISTINCT FROM NEW.login_version"
MADE_USER = "licensegate.made_user"  # store.logins.MADE_USER
WHEN = {
    "users": f"{MOVED} AND NEW.id::text IS DISTINCT FROM current_setting('{MADE_USER}', true)",
    "sessions": f"{MOVED} AND OLD.validated <> 0",
}
PREFIX = {"users": "u", "sessions": "s"}


def _replace(table: str, when: str) -> None:
    op.execute(f"DROP TRIGGER IF EXISTS {table}_login_notify_update ON {table}")
    op.execute(
        f"CREATE TRIGGER {table}_login_notify_update AFTER UPDATE ON {table} FOR EACH ROW "
        f"WHEN ({when}) EXECUTE FUNCTION lg_notify_login('{PREFIX[table]}')"
    )


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for table, when in WHEN.items():
        _replace(table, when)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        return
    for table in WHEN:
        _replace(table, MOVED)
