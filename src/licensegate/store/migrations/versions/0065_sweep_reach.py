"""the sweep for users without time: how far its last run looked, users to look at, a daily walk

The sweep that ends the sessions of users without time left walked every session every five
minutes: at 1,200,000 sessions, 12 s of one worker's CPU each time (a quarter of a core for about
a minute on a slow machine), a cost that grew with the data. Now it looks every five minutes
only at the grants that ran out since its last run (found by ix_user_subscriptions_expiry), and
remembers in `periodic_turns.reached` the time it looked up to. A key's deletion, which takes
away the grants it made, notes their users in `time_checks` for the next sweep to look at. The
walk of every session remains as a daily backstop, its turn `sessions walk` (app.py). That turn
is dated now here, so that a database (a new one, or one upgraded) is first walked a day from
now, not in the first minutes of its service.

Revision ID: 0065
Revises: 0064
Create Date: 2026-11-29 08:30:00.000000
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from alembic import op

revision = "0065"
down_revision = "0064"
branch_labels = None
depends_on = None

WALK_TURN = "sessions walk"  # app.WALK_TURN, frozen here


def upgrade() -> None:
    with op.batch_alter_table("periodic_turns", recreate="auto") as batch:
        batch.add_column(sa.Column("reached", sa.BigInteger(), nullable=True))
    turns = sa.table("periodic_turns", sa.column("name", sa.Text()), sa.column("taken_at", sa.BigInteger()))
    op.bulk_insert(turns, [{"name": WALK_TURN, "taken_at": int(time.time())}])
    op.create_table(
        "time_checks",
        sa.Column("user_id", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_time_checks")),
    )


def downgrade() -> None:
    op.drop_table("time_checks")
    turns = sa.table("periodic_turns", sa.column("name", sa.Text()))
    op.execute(turns.delete().where(turns.c.name == WALK_TURN))
    with op.batch_alter_table("periodic_turns", recreate="auto") as batch:
        batch.drop_column("reached")
