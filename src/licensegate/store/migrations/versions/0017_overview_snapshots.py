"""overview snapshots

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25 05:15:00.000000

The overview's status counts and expiries of large applications, computed in the background
(domain/overview.py): counting them on each view reads every index entry of a million keys or
users. Empty at first: a large application's first view computes its figures once.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "overview_snapshots",
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("computed_at", sa.BigInteger(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("figures", sa.Text(), nullable=False),
        sa.Column("viewed_at", sa.BigInteger(), nullable=False),
        sa.Column("claimed_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_overview_snapshots_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("app_id", name=op.f("pk_overview_snapshots")),
    )


def downgrade() -> None:
    op.drop_table("overview_snapshots")
