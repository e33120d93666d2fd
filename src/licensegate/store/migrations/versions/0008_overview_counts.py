"""overview counts

Revision ID: 0008
Revises: 0012
Create Date: 2026-11-25 04:15:00.000000

The overview's charts: per-day counters (logins by outcome, new users, redeemed keys), and the
indexes that let it count banned keys, and grants by expiry, without reading the tables (banned
users have theirs since 0010).
The counters of new users and redeemed keys are filled from the rows already there.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0012"
branch_labels = None
depends_on = None

BANNED = sa.text("banned_reason IS NOT NULL")


def upgrade() -> None:
    op.create_table(
        "daily_counts",
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("day", sa.Integer(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("count", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_daily_counts_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("app_id", "day", "kind", "outcome", name=op.f("pk_daily_counts")),
    )
    op.create_index(
        "ix_license_keys_banned",
        "license_keys",
        ["app_id", "status"],
        sqlite_where=BANNED,
        postgresql_where=BANNED,
    )
    op.create_index(
        "ix_user_subscriptions_expiry", "user_subscriptions", ["subscription_id", "expires_at", "user_id"]
    )
    # What happened before the counters existed: users by the day they were made, keys by the day
    # they were redeemed (integer division: whole UTC days on both databases).
    op.execute(
        "INSERT INTO daily_counts (app_id, day, kind, outcome, count) "
        "SELECT app_id, created_at / 86400, 'user', '', COUNT(*) FROM users "
        "GROUP BY app_id, created_at / 86400"
    )
    op.execute(
        "INSERT INTO daily_counts (app_id, day, kind, outcome, count) "
        "SELECT app_id, used_at / 86400, 'key', '', COUNT(*) FROM license_keys "
        "WHERE used_at IS NOT NULL GROUP BY app_id, used_at / 86400"
    )


def downgrade() -> None:
    op.drop_index("ix_user_subscriptions_expiry", table_name="user_subscriptions")
    op.drop_index("ix_license_keys_banned", table_name="license_keys")
    op.drop_table("daily_counts")
