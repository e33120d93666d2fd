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

_INDEXES = (
    ("ix_license_keys_banned_key", "license_keys", ["app_id", "key"]),
    ("ix_users_banned_username", "users", ["app_id", "username"]),
)


def upgrade() -> None:
    banned = sa.text("banned_reason IS NOT NULL")
    for name, table, columns in _INDEXES:
        op.create_index(name, table, columns, sqlite_where=banned, postgresql_where=banned)


def downgrade() -> None:
    for name, table, _ in reversed(_INDEXES):
        op.drop_index(name, table_name=table)
