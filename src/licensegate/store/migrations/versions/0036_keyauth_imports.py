"""imports from KeyAuth started on the dashboard

One row per import: its state and progress (a page shows them again after a reload, another
worker takes over a read whose worker stopped), the seller key sealed, the reports as JSON.

Revision ID: 0036
Revises: 0035
Create Date: 2026-11-27 23:45:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "keyauth_imports",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("account_id", sa.BigInteger(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("done", sa.Integer(), server_default="0", nullable=False),
        sa.Column("total", sa.Integer(), nullable=True),
        sa.Column("stage", sa.Text(), nullable=True),
        sa.Column("sellerkey_sealed", sa.Text(), nullable=True),
        sa.Column("options", sa.Text(), server_default="{}", nullable=False),
        sa.Column("report", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["accounts.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("keyauth_imports", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_keyauth_imports_account_id_id"), ["account_id", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("keyauth_imports", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_keyauth_imports_account_id_id"))
    op.drop_table("keyauth_imports")
