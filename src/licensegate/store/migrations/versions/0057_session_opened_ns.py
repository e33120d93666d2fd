"""sessions.opened_ns: when a session opened, in nanoseconds, so the oldest of sessions opened in
the same second is known (seats' end_oldest)

Revision ID: 0057
Revises: 0056
Create Date: 2026-11-28 03:10:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0057"
down_revision = "0056"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # No default: adding the column rewrites no row (sessions opened before it order as 0).
    op.add_column("sessions", sa.Column("opened_ns", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE sessions DROP COLUMN opened_ns")
