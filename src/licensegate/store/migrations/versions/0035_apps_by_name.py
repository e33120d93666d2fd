"""apps by name: an answer about a mistyped ownerid is signed with the key of the application of
that name the program most likely meant (`domain.apps.meant_by_client`), found through an index

Revision ID: 0035
Revises: 0034
Create Date: 2026-11-27 23:40:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(op.f("ix_apps_name"), "apps", ["name"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_apps_name"), table_name="apps")
