"""seller keys and logs pages: where a seller key was last used from, which key made a seller log
entry, and the indexes the Audit log and Seller log pages filter by

Revision ID: 0016
Revises: 0008
Create Date: 2026-11-25 05:15:00.000000

`seller_log.key_id` has no foreign key: an entry outlives a revoked key, and `key_name` keeps
what the key was called (NULL on both: a call made signed in to an account, not with a key).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seller_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_used_ip", sa.Text(), nullable=True))
    with op.batch_alter_table("seller_log", schema=None) as batch_op:
        batch_op.add_column(sa.Column("key_id", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("key_name", sa.Text(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_seller_log_app_id_operation_id"), ["app_id", "operation", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_seller_log_app_id_status_id"), ["app_id", "status", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_seller_log_app_id_key_id_id"), ["app_id", "key_id", "id"], unique=False
        )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_audit_log_app_id_actor_id"), ["app_id", "actor", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_audit_log_app_id_action_id"), ["app_id", "action", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_audit_log_app_id_target_id"), ["app_id", "target", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_log_app_id_target_id"))
        batch_op.drop_index(batch_op.f("ix_audit_log_app_id_action_id"))
        batch_op.drop_index(batch_op.f("ix_audit_log_app_id_actor_id"))
    with op.batch_alter_table("seller_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_seller_log_app_id_key_id_id"))
        batch_op.drop_index(batch_op.f("ix_seller_log_app_id_status_id"))
        batch_op.drop_index(batch_op.f("ix_seller_log_app_id_operation_id"))
        batch_op.drop_column("key_name")
        batch_op.drop_column("key_id")
    with op.batch_alter_table("seller_keys", schema=None) as batch_op:
        batch_op.drop_column("last_used_ip")
