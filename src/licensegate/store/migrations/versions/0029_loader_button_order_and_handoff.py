"""loader button order and hand-off: the web loader's buttons get an order of their own (the
customer panel shows them in it), an application gets its web-loader download link and its
customer-panel switch, and end users signed in to the customer panel get sessions, each of which
can hold one single-use web-loader token (only SHA-256 digests are stored)

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-26 15:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("loader_buttons", schema=None) as batch_op:
        batch_op.add_column(sa.Column("position", sa.Integer(), server_default="0", nullable=False))
    # Existing buttons keep the order they were shown in (the order they were added).
    op.execute("UPDATE loader_buttons SET position = id")
    with op.batch_alter_table("apps", schema=None) as batch_op:
        batch_op.add_column(sa.Column("web_loader_download", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("customer_panel", sa.Integer(), server_default="0", nullable=False))
    op.create_table(
        "panel_sessions",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.Column("token_hash", sa.Text(), nullable=False),
        sa.Column("ip", sa.Text(), nullable=True),
        sa.Column("user_agent", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("last_seen_at", sa.BigInteger(), nullable=False),
        sa.Column("handoff_hash", sa.Text(), nullable=True),
        sa.Column("handoff_expires", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_panel_sessions_app_id_apps"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_panel_sessions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_panel_sessions")),
        sa.UniqueConstraint("handoff_hash", name=op.f("uq_panel_sessions_handoff_hash")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_panel_sessions_token_hash")),
    )
    with op.batch_alter_table("panel_sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_panel_sessions_expires_at"), ["expires_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_panel_sessions_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("panel_sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_panel_sessions_user_id"))
        batch_op.drop_index(batch_op.f("ix_panel_sessions_expires_at"))
    op.drop_table("panel_sessions")
    # Plain ALTER TABLE (SQLite 3.35+ drops a column in place): batch mode would copy `apps` into a
    # new table and drop the old one, and that DROP would cascade to every application's rows.
    op.execute("ALTER TABLE apps DROP COLUMN customer_panel")
    op.execute("ALTER TABLE apps DROP COLUMN web_loader_download")
    op.execute("ALTER TABLE loader_buttons DROP COLUMN position")
