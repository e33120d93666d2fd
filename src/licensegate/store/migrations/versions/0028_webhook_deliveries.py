"""webhook deliveries: the delivery log of every call made to a webhook (a client's Webhook call
or the dashboard's test), the most recent ones per application

Revision ID: 0028
Revises: 0032
Create Date: 2026-11-26 15:00:00.000000

`webid` has no foreign key: an entry outlives a deleted webhook (the log is pruned per
application, so it stays small).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhook_deliveries",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("webid", sa.Text(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("method", sa.Text(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("error_code", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("excerpt", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_webhook_deliveries_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_deliveries_app_id_id"), ["app_id", "id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_app_id_webid_id"), ["app_id", "webid", "id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
