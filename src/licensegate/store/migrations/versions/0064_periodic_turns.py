"""periodic turns: one worker of one node runs a periodic job over a whole table per interval

Every worker of every node swept all sessions for users without time left every five minutes:
at 1,200,000 sessions, 12 s of each worker's event loop each time. The worker that takes the
job's turn (a conditional UPDATE of its row here, store/turns.py) sweeps; the others skip it.

Revision ID: 0064
Revises: 0063
Create Date: 2026-11-29 02:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0064"
down_revision = "0063"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "periodic_turns",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("taken_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_periodic_turns")),
    )


def downgrade() -> None:
    op.drop_table("periodic_turns")
