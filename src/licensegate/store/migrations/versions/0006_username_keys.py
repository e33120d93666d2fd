"""username keys: NFKC and case-insensitive usernames

Revision ID: 0006
Revises: 0007
Create Date: 2026-11-25 04:20:00.000000

Every user gains `username_fold` (the name in NFKC, case-folded) and `username_key`, the form
logins look names up by and that is unique per application: the name as stored while the
application compares names exactly (every application, until its owner turns on
`case_insensitive_usernames`), its fold otherwise. Existing users keep their names; their key is
their name, so every existing row stays unique and reachable.
"""

from __future__ import annotations

import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0007"
branch_labels = None
depends_on = None

BATCH = 1000


def fold(name: str) -> str:
    """As `licensegate.domain.users.fold` (kept here so the migration never changes with it)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def upgrade() -> None:
    with op.batch_alter_table("apps", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("case_insensitive_usernames", sa.Integer(), server_default="0", nullable=False)
        )
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("username_fold", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("username_key", sa.Text(), nullable=True))
    bind = op.get_bind()
    last = 0
    while True:
        rows = bind.execute(
            sa.text("SELECT id, username FROM users WHERE id > :last ORDER BY id LIMIT :batch"),
            {"last": last, "batch": BATCH},
        ).fetchall()
        if not rows:
            break
        bind.execute(
            sa.text("UPDATE users SET username_fold = :fold, username_key = username WHERE id = :id"),
            [{"id": row[0], "fold": fold(row[1])} for row in rows],
        )
        last = rows[-1][0]
    op.create_index("ix_users_app_id_username_key", "users", ["app_id", "username_key"], unique=True)


def downgrade() -> None:
    # Plain DROP COLUMN (SQLite 3.35+): a batch copy would drop the table, and with foreign keys
    # on that deletes every row referring to it.
    op.drop_index("ix_users_app_id_username_key", table_name="users")
    op.execute("ALTER TABLE users DROP COLUMN username_key")
    op.execute("ALTER TABLE users DROP COLUMN username_fold")
    op.execute("ALTER TABLE apps DROP COLUMN case_insensitive_usernames")
