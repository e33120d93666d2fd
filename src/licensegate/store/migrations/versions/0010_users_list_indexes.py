"""users list indexes: newest first, banned, by last IP, by username prefix (PostgreSQL), by HWID

Revision ID: 0010
Revises: 0011
Create Date: 2026-11-25 04:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0011"
branch_labels = None
depends_on = None

BANNED = sa.text("banned_reason IS NOT NULL")


def upgrade() -> None:
    # The dashboard's Users list (see store/schema.py).
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_users_app_id_id"), ["app_id", "id"], unique=False)
        batch_op.create_index(
            "ix_users_app_id_banned",
            ["app_id", "id"],
            unique=False,
            sqlite_where=BANNED,
            postgresql_where=BANNED,
        )
        batch_op.create_index(batch_op.f("ix_users_app_id_last_ip"), ["app_id", "last_ip"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.create_index(
            "ix_users_app_id_username_pattern",
            "users",
            ["app_id", "username"],
            unique=False,
            postgresql_ops={"username": "text_pattern_ops"},
        )
    with op.batch_alter_table("user_hwids", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_user_hwids_hwid"), ["hwid"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("user_hwids", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_hwids_hwid"))
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_users_app_id_username_pattern", table_name="users")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_users_app_id_last_ip"))
        batch_op.drop_index("ix_users_app_id_banned")
        batch_op.drop_index(batch_op.f("ix_users_app_id_id"))
