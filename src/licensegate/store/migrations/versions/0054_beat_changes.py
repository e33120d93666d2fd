"""heartbeat changes: what a session's last login or beat answered, and why a ban or pause ended a session

Revision ID: 0054
Revises: 0053
Create Date: 2026-11-28 03:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0054"
down_revision = "0053"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sessions", sa.Column("beat_state", sa.Text(), nullable=True))
    op.create_table(
        "ended_sessions",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_ended_sessions_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ended_sessions")),
    )
    op.create_index(op.f("ix_ended_sessions_expires_at"), "ended_sessions", ["expires_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_ended_sessions_expires_at"), table_name="ended_sessions")
    op.drop_table("ended_sessions")
    op.execute("ALTER TABLE sessions DROP COLUMN beat_state")
