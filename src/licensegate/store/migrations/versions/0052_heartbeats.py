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
    # Dropped in place: a batch copy of `apps` (or `users`) on SQLite drops the old table, and
    # with it (ON DELETE CASCADE) every user, key and grant of every application.
    op.execute("ALTER TABLE sessions DROP COLUMN last_beat_at")
    op.execute("ALTER TABLE apps DROP COLUMN heartbeat_grace")
    op.execute("ALTER TABLE apps DROP COLUMN heartbeat_interval")
