"""file downloads: each file counts the downloads the client API served (Download File) and
keeps the time of the latest, which the dashboard's Files page and the seller API show

Revision ID: 0030
Revises: 0031
Create Date: 2026-11-26 16:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0030"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("files", schema=None) as batch_op:
        batch_op.add_column(sa.Column("downloads", sa.BigInteger(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("downloaded_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("files", schema=None) as batch_op:
        batch_op.drop_column("downloaded_at")
        batch_op.drop_column("downloads")
