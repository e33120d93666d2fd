"""account and balance history: every sign-in attempt of a dashboard account, pending e-mail
address changes (the link's digest only), and every change of a reseller's balance

Revision ID: 0032
Revises: 0027
Create Date: 2026-11-26 15:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0032"
down_revision = "0027"
branch_labels = None
depends_on = None


def _id() -> sa.Column[int]:
    return sa.Column(
        "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
    )


def _account(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["account_id"], ["accounts.id"], name=op.f(f"fk_{table}_account_id_accounts"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "signin_history",
        _id(),
        sa.Column("account_id", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("ip", sa.Text(), nullable=True),
        sa.Column("user_agent", sa.Text(), nullable=True),
        sa.Column("result", sa.Text(), nullable=False),
        _account("signin_history"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signin_history")),
    )
    with op.batch_alter_table("signin_history", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_signin_history_account_id_id"), ["account_id", "id"], unique=False
        )
    op.create_table(
        "email_changes",
        _id(),
        sa.Column("account_id", sa.BigInteger(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("new_email", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        _account("email_changes"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_email_changes")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_email_changes_token_hash")),
    )
    with op.batch_alter_table("email_changes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_email_changes_account_id"), ["account_id"], unique=False)
    op.create_table(
        "balance_history",
        _id(),
        sa.Column("account_id", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("bucket", sa.Text(), nullable=False),
        sa.Column("amount", sa.Integer(), server_default="0", nullable=False),
        sa.Column("balance_after", sa.Integer(), server_default="0", nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        _account("balance_history"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_balance_history")),
    )
    with op.batch_alter_table("balance_history", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_balance_history_account_id_id"), ["account_id", "id"], unique=False
        )


def downgrade() -> None:
    for table in ("balance_history", "email_changes", "signin_history"):
        op.drop_table(table)
