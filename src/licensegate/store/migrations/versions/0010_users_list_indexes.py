"""users list and detail indexes: newest first, banned, by last IP, by username prefix (PostgreSQL),
by HWID; a user's or key's timeline (client logs, tamper reports, audit entries)

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
    # A user's (or a key's) page: its timeline.
    with op.batch_alter_table("client_logs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_client_logs_app_id_credential_created_at"),
            ["app_id", "credential", "created_at"],
            unique=False,
        )
    with op.batch_alter_table("tamper_logs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_tamper_logs_user_id_created_at"), ["user_id", "created_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_tamper_logs_app_id_credential_created_at"),
            ["app_id", "credential", "created_at"],
            unique=False,
        )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_audit_log_app_id_target_created_at"),
            ["app_id", "target", "created_at"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_log_app_id_target_created_at"))
    with op.batch_alter_table("tamper_logs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tamper_logs_app_id_credential_created_at"))
        batch_op.drop_index(batch_op.f("ix_tamper_logs_user_id_created_at"))
    with op.batch_alter_table("client_logs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_client_logs_app_id_credential_created_at"))
    with op.batch_alter_table("user_hwids", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_hwids_hwid"))
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_users_app_id_username_pattern", table_name="users")
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_users_app_id_last_ip"))
        batch_op.drop_index("ix_users_app_id_banned")
        batch_op.drop_index(batch_op.f("ix_users_app_id_id"))
