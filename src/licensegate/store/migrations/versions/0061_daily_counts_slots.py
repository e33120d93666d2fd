"""daily_counts: a `slot` in the primary key, so concurrent first uses do not queue on one row

Every key's first use (and every new user) adds one to the day's 'user' and 'key' counters in
its own transaction. With one row per (application, day, kind), each such transaction held that
row's lock until its commit was flushed, so on PostgreSQL first uses committed one after
another, one WAL flush each (bench: 336 req/s, against 464 with the counter left out). Each
transaction now adds to one of `store.overview.SLOTS` rows of the counter, picked at random,
and readers add the slots up.

Revision ID: 0061
Revises: 0060
Create Date: 2026-11-28 10:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0061"
down_revision = "0060"
branch_labels = None
depends_on = None

KEY = ["app_id", "day", "kind", "outcome"]


def upgrade() -> None:
    with op.batch_alter_table("daily_counts", recreate="auto") as batch:
        batch.add_column(sa.Column("slot", sa.Integer(), nullable=False, server_default="0"))
        batch.drop_constraint("pk_daily_counts", type_="primary")
        batch.create_primary_key("pk_daily_counts", [*KEY, "slot"])


def downgrade() -> None:
    # The slots of each counter added up into slot 0 first, so that no count is lost.
    op.execute(
        "UPDATE daily_counts SET count = (SELECT SUM(d.count) FROM daily_counts d "
        "WHERE d.app_id = daily_counts.app_id AND d.day = daily_counts.day "
        "AND d.kind = daily_counts.kind AND d.outcome = daily_counts.outcome) WHERE slot = 0"
    )
    op.execute(
        "INSERT INTO daily_counts (app_id, day, kind, outcome, count, slot) "
        "SELECT app_id, day, kind, outcome, SUM(count), 0 FROM daily_counts d "
        "GROUP BY app_id, day, kind, outcome "
        "HAVING NOT EXISTS (SELECT 1 FROM daily_counts z WHERE z.app_id = d.app_id AND z.day = d.day "
        "AND z.kind = d.kind AND z.outcome = d.outcome AND z.slot = 0)"
    )
    op.execute("DELETE FROM daily_counts WHERE slot <> 0")
    with op.batch_alter_table("daily_counts", recreate="auto") as batch:
        batch.drop_constraint("pk_daily_counts", type_="primary")
        batch.create_primary_key("pk_daily_counts", KEY)
        batch.drop_column("slot")
