"""seats: rules of how many machines and concurrent sessions a user may hold (per subscription,
key or user), and the applications' flag that turns the count on at login

Revision ID: 0050
Revises: 0049
Create Date: 2026-11-28 00:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0050"
down_revision = "0049"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "seat_rules",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("owner", sa.Text(), nullable=False),
        sa.Column("owner_id", sa.BigInteger(), nullable=False),
        sa.Column("max_machines", sa.Integer(), nullable=True),
        sa.Column("max_sessions", sa.Integer(), nullable=True),
        sa.Column("count_by", sa.Text(), server_default="user", nullable=False),
        sa.Column("overage", sa.Text(), server_default="refuse", nullable=False),
        sa.Column("overage_percent", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_seat_rules_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seat_rules")),
        sa.UniqueConstraint("owner", "owner_id", name=op.f("uq_seat_rules_owner_owner_id")),
    )
    op.create_index(op.f("ix_seat_rules_app_id_id"), "seat_rules", ["app_id", "id"], unique=False)
    op.add_column("apps", sa.Column("seats", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    # Dropped in place: a batch copy of `apps` (or `users`) on SQLite drops the old table, and
    # with it (ON DELETE CASCADE) every user, key and grant of every application.
    op.execute("ALTER TABLE apps DROP COLUMN seats")
    op.drop_index(op.f("ix_seat_rules_app_id_id"), table_name="seat_rules")
    op.drop_table("seat_rules")
