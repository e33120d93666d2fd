"""heartbeats: an application's beat interval and grace, and each session's last beat

Revision ID: 0052
Revises: 0051
Create Date: 2026-11-28 01:05:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0052"
down_revision = "0051"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("apps", sa.Column("heartbeat_interval", sa.Integer(), server_default="0", nullable=False))
    op.add_column("apps", sa.Column("heartbeat_grace", sa.Integer(), server_default="0", nullable=False))
    op.add_column("sessions", sa.Column("last_beat_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("last_beat_at")
    with op.batch_alter_table("apps") as batch:
        batch.drop_column("heartbeat_grace")
        batch.drop_column("heartbeat_interval")
