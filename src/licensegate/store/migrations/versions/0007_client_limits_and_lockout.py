"""client limits per address and sign-in lock-out

Revision ID: 0007
Revises: 0010
Create Date: 2026-11-25 04:20:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0010"
branch_labels = None
depends_on = None

OLD_CLIENT_RATE_LIMIT = 1200
CLIENT_RATE_LIMIT = 60_000


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("failed_logins", sa.Integer(), server_default="0", nullable=False))
        batch_op.add_column(sa.Column("locked_until", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("lockouts", sa.Integer(), server_default="0", nullable=False))
    # The application-wide client limit becomes a ceiling far above the per-address limit: the
    # applications still at the old default get the new one. On SQLite the column's DDL default
    # stays (changing it would copy `apps`, and with foreign keys on delete what refers to it);
    # every INSERT names the value.
    op.execute(
        f"UPDATE apps SET client_rate_limit = {CLIENT_RATE_LIMIT} "
        f"WHERE client_rate_limit = {OLD_CLIENT_RATE_LIMIT}"
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE apps ALTER COLUMN client_rate_limit SET DEFAULT {CLIENT_RATE_LIMIT}")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE apps ALTER COLUMN client_rate_limit SET DEFAULT {OLD_CLIENT_RATE_LIMIT}")
    op.execute(
        f"UPDATE apps SET client_rate_limit = {OLD_CLIENT_RATE_LIMIT} "
        f"WHERE client_rate_limit = {CLIENT_RATE_LIMIT}"
    )
    op.execute("ALTER TABLE users DROP COLUMN lockouts")
    op.execute("ALTER TABLE users DROP COLUMN locked_until")
    op.execute("ALTER TABLE users DROP COLUMN failed_logins")
