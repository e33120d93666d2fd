"""file content in the database

Revision ID: 0012
Revises: 0006
Create Date: 2026-11-25 04:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "file_blobs",
        sa.Column("storage_key", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("storage_key", name=op.f("pk_file_blobs")),
    )
    op.create_table(
        "file_chunks",
        sa.Column("storage_key", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["storage_key"],
            ["file_blobs.storage_key"],
            name=op.f("fk_file_chunks_storage_key_file_blobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("storage_key", "seq", name=op.f("pk_file_chunks")),
    )


def downgrade() -> None:
    op.drop_table("file_chunks")
    op.drop_table("file_blobs")
