"""deployment key: the id of the deployment key the database's secrets are sealed under (never
the key), so a command or node holding another key refuses the database; the first start after
this migration records the key in use

Revision ID: 0048
Revises: 0047
Create Date: 2026-11-27 23:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0048"
down_revision = "0047"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deployment_key",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("key_id", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_deployment_key")),
    )


def downgrade() -> None:
    op.drop_table("deployment_key")
