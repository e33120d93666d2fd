"""named rate limits: requests per window set on a user or a key, and the per-application flag

Revision ID: 0053
Revises: 0052
Create Date: 2026-11-28 01:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0053"
down_revision = "0052"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("apps", sa.Column("named_limits", sa.Integer(), server_default="0", nullable=False))
    op.create_table(
        "named_limits",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("key_id", sa.BigInteger(), nullable=True),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("max_requests", sa.Integer(), nullable=False),
        sa.Column("window_seconds", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_named_limits_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["key_id"],
            ["license_keys.id"],
            name=op.f("fk_named_limits_key_id_license_keys"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_named_limits_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_named_limits")),
        sa.UniqueConstraint("key_id", "name", name=op.f("uq_named_limits_key_id_name")),
        sa.UniqueConstraint("user_id", "name", name=op.f("uq_named_limits_user_id_name")),
    )
    op.create_index(op.f("ix_named_limits_app_id_id"), "named_limits", ["app_id", "id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_named_limits_app_id_id"), table_name="named_limits")
    op.drop_table("named_limits")
    # Dropped in place: a batch copy of `apps` (or `users`) on SQLite drops the old table, and
    # with it (ON DELETE CASCADE) every user, key and grant of every application.
    op.execute("ALTER TABLE apps DROP COLUMN named_limits")
