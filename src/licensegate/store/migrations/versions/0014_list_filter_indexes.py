"""list filter indexes: the Licenses list by creator and by creation time, the Users list by
creation time (each was a scan of every row of the application at 1,000,000 rows)

Revision ID: 0014
Revises: 0017
Create Date: 2026-11-25 05:20:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("license_keys", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_license_keys_app_id_generated_by_id"),
            ["app_id", "generated_by", "id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_license_keys_app_id_created_at"), ["app_id", "created_at"], unique=False
        )
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_users_app_id_created_at"), ["app_id", "created_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_users_app_id_created_at"))
    with op.batch_alter_table("license_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_license_keys_app_id_created_at"))
        batch_op.drop_index(batch_op.f("ix_license_keys_app_id_generated_by_id"))
