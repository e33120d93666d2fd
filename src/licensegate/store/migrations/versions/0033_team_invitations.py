"""team invitations: a link with which a new reseller or manager chooses its own password (the
link's digest only)

Revision ID: 0033
Revises: 0030
Create Date: 2026-11-26 16:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "team_invitations",
        sa.Column(
            "id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False
        ),
        sa.Column("account_id", sa.BigInteger(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_team_invitations_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_team_invitations")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_team_invitations_token_hash")),
    )
    with op.batch_alter_table("team_invitations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_team_invitations_account_id"), ["account_id"], unique=False)


def downgrade() -> None:
    op.drop_table("team_invitations")
