"""usage credits: a balance of a user or a key, with an optional periodic refill

Revision ID: 0049
Revises: 0048
Create Date: 2026-11-28 00:45:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0049"
down_revision = "0048"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "credit_balances",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("key_id", sa.BigInteger(), nullable=True),
        sa.Column("balance", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("spent", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("refill_amount", sa.BigInteger(), nullable=True),
        sa.Column("refill_period", sa.Text(), nullable=True),
        sa.Column("refill_minute", sa.Integer(), server_default="0", nullable=False),
        sa.Column("refilled_at", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_credit_balances_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["key_id"],
            ["license_keys.id"],
            name=op.f("fk_credit_balances_key_id_license_keys"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_credit_balances_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credit_balances")),
        sa.UniqueConstraint("key_id", name=op.f("uq_credit_balances_key_id")),
        sa.UniqueConstraint("user_id", name=op.f("uq_credit_balances_user_id")),
    )
    op.create_index(op.f("ix_credit_balances_app_id_id"), "credit_balances", ["app_id", "id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_credit_balances_app_id_id"), table_name="credit_balances")
    op.drop_table("credit_balances")
