"""session list indexes: the Sessions page pages newest first by (created_at, id), which no index
held (each page sorted every session of the application); who is online is counted from an
index that also holds the user (no row read per session); and the users people named are
indexed by name, so the users online can be looked for among them when an application has
a great many sessions, most of them License Logins' users

Revision ID: 0055
Revises: 0054
Create Date: 2026-11-28 03:15:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0055"
down_revision = "0054"
branch_labels = None
depends_on = None

_NAMED = sa.text("created_by <> 'license'")
_NAMED_PG = sa.text("created_by <> 'license'::text")


def upgrade() -> None:
    op.create_index("ix_sessions_app_id_created_at_id", "sessions", ["app_id", "created_at", "id"])
    op.drop_index("ix_sessions_app_id_validated_expires_at", table_name="sessions")
    op.create_index(
        "ix_sessions_app_id_validated_expires_at_user_id",
        "sessions",
        ["app_id", "validated", "expires_at", "user_id"],
    )
    op.create_index(
        "ix_users_named", "users", ["app_id", "username"], sqlite_where=_NAMED, postgresql_where=_NAMED_PG
    )


def downgrade() -> None:
    op.drop_index("ix_users_named", table_name="users")
    op.drop_index("ix_sessions_app_id_validated_expires_at_user_id", table_name="sessions")
    op.create_index(
        "ix_sessions_app_id_validated_expires_at", "sessions", ["app_id", "validated", "expires_at"]
    )
    op.drop_index("ix_sessions_app_id_created_at_id", table_name="sessions")
