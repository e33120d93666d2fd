"""users: drop the (app_id, email_lower) and (app_id, email_sha1) indexes, which no query uses (an
address is only ever compared on the user a `username_key` lookup found: `store.passwordreset`),
so every new user (a License Login's first use, a registration) writes two index entries fewer

Revision ID: 0059
Revises: 0058
Create Date: 2026-11-28 06:30:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0059"
down_revision = "0058"
branch_labels = None
depends_on = None

INDEXES = {"ix_users_app_id_email_lower": "email_lower", "ix_users_app_id_email_sha1": "email_sha1"}


def upgrade() -> None:
    for name in INDEXES:
        op.drop_index(name, table_name="users")


def downgrade() -> None:
    for name, column in INDEXES.items():
        op.create_index(name, "users", ["app_id", column], unique=False)
