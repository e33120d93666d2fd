"""webhooks.enabled: 0 for a webhook imported from KeyAuth without its full URL (KeyAuth's seller
API gives only a short link); a client's Webhook call is refused until the seller enters the URL
again, which enables it. Every existing webhook stays enabled.

Revision ID: 0051
Revises: 0050
Create Date: 2026-11-28 00:50:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0051"
down_revision = "0050"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("webhooks", sa.Column("enabled", sa.Integer(), server_default="1", nullable=False))


def downgrade() -> None:
    # Dropped in place (both databases can): no batch copy of the table.
    op.execute("ALTER TABLE webhooks DROP COLUMN enabled")
