"""signed license files: the files issued, each application's earlier signing keys, the file TTL
and cooldown of an application, and when a user's client last got a file (issue 21)

Revision ID: 0042
Revises: 0041
Create Date: 2026-11-27 23:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0042"
down_revision = "0041"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("apps", schema=None) as batch_op:
        batch_op.add_column(sa.Column("license_file_ttl", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("license_file_cooldown", sa.Integer(), nullable=True))
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("license_file_at", sa.BigInteger(), nullable=True))
    op.create_table(
        "license_files",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("serial", sa.Text(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=True),
        sa.Column("key_id", sa.BigInteger(), nullable=True),
        sa.Column("username", sa.Text(), nullable=False),
        sa.Column("hwid", sa.Text(), nullable=True),
        sa.Column("kid", sa.Text(), nullable=False),
        sa.Column("encrypted", sa.Integer(), server_default="0", nullable=False),
        sa.Column("issued_by", sa.Text(), nullable=False),
        sa.Column("issued_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_license_files_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["key_id"],
            ["license_keys.id"],
            name=op.f("fk_license_files_key_id_license_keys"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_license_files_user_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_license_files")),
        sa.UniqueConstraint("serial", name=op.f("uq_license_files_serial")),
    )
    with op.batch_alter_table("license_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_license_files_app_id_id"), ["app_id", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_license_files_user_id"), ["user_id"], unique=False)
    op.create_table(
        "app_key_history",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("kid", sa.Text(), nullable=False),
        sa.Column("public_key", sa.Text(), nullable=False),
        sa.Column("retired_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_app_key_history_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_app_key_history")),
    )
    with op.batch_alter_table("app_key_history", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_app_key_history_app_id_id"), ["app_id", "id"], unique=False)


def downgrade() -> None:
    op.drop_table("app_key_history")
    op.drop_table("license_files")
    # Dropped in place: a batch copy of `apps` (or `users`) on SQLite drops the old table, and
    # with it (ON DELETE CASCADE) every user, key and grant of every application.
    op.execute("ALTER TABLE users DROP COLUMN license_file_at")
    op.execute("ALTER TABLE apps DROP COLUMN license_file_cooldown")
    op.execute("ALTER TABLE apps DROP COLUMN license_file_ttl")
