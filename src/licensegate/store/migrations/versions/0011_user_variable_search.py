"""user variable search: indexes for the dashboard's keyset list by name and by value prefix

Revision ID: 0011
Revises: 0005
Create Date: 2026-11-25 04:20:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("user_vars", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_vars_app_id_name"))
        batch_op.create_index(batch_op.f("ix_user_vars_app_id_id"), ["app_id", "id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_user_vars_app_id_name_id"), ["app_id", "name", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_user_vars_app_id_value_id"),
            ["app_id", "value", "id"],
            unique=False,
            postgresql_ops={"value": "text_pattern_ops"},
        )


def downgrade() -> None:
    with op.batch_alter_table("user_vars", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_vars_app_id_value_id"))
        batch_op.drop_index(batch_op.f("ix_user_vars_app_id_name_id"))
        batch_op.drop_index(batch_op.f("ix_user_vars_app_id_id"))
        batch_op.create_index(batch_op.f("ix_user_vars_app_id_name"), ["app_id", "name"], unique=False)
