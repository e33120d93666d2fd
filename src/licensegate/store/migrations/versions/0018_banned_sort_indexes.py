"""banned sort indexes: the Licenses list's banned keys by key and the Users list's banned users
by username (SQLite read and sorted every banned row of the application for one page)

Revision ID: 0018
Revises: 0014
Create Date: 2026-11-25 06:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0014"
branch_labels = None
depends_on = None

_BANNED = "banned_reason IS NOT NULL"


def upgrade() -> None:
    op.create_index(
        "ix_license_keys_banned_key",
        "license_keys",
        ["app_id", "key"],
        sqlite_where=sa.text(_BANNED),
        postgresql_where=sa.text(_BANNED),
    )
    op.create_index(
        "ix_users_banned_username",
        "users",
        ["app_id", "username"],
        sqlite_where=sa.text(_BANNED),
        postgresql_where=sa.text(_BANNED),
    )


def downgrade() -> None:
    op.drop_index("ix_users_banned_username", table_name="users")
    op.drop_index("ix_license_keys_banned_key", table_name="license_keys")
