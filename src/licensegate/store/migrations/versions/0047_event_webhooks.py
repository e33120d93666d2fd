"""event webhooks (issue 22): endpoints, the durable event outbox, its delivery queue, the delivery
log and the notices of expiring and expired grants already reported

Revision ID: 0047
Revises: 0043
Create Date: 2026-11-28 00:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0047"
down_revision = "0043"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _id() -> sa.Column[int]:
    return sa.Column("id", _ID, autoincrement=True, nullable=False)


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete="CASCADE"
    )


def _indexes(table: str, *columns: tuple[str, ...]) -> None:
    with op.batch_alter_table(table, schema=None) as batch_op:
        for cols in columns:
            batch_op.create_index(batch_op.f(f"ix_{table}_{'_'.join(cols)}"), list(cols), unique=False)


def upgrade() -> None:
    op.create_table(
        "event_endpoints",
        _id(),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("url_shown", sa.Text(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
        sa.Column("format", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Integer(), server_default="1", nullable=False),
        sa.Column("include_keys", sa.Integer(), server_default="0", nullable=False),
        sa.Column("failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("alerted_at", sa.BigInteger(), nullable=True),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        _fk("event_endpoints", "app_id", "apps"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_endpoints")),
    )
    _indexes("event_endpoints", ("app_id", "id"))
    op.create_table(
        "events",
        _id(),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("event_id", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("license_key", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        _fk("events", "app_id", "apps"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sa.UniqueConstraint("event_id", name=op.f("uq_events_event_id")),
    )
    _indexes("events", ("app_id", "id"), ("created_at",))
    op.create_table(
        "event_deliveries",
        _id(),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("event_id", sa.BigInteger(), nullable=False),
        sa.Column("endpoint_id", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("due_at", sa.BigInteger(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        _fk("event_deliveries", "app_id", "apps"),
        _fk("event_deliveries", "event_id", "events"),
        _fk("event_deliveries", "endpoint_id", "event_endpoints"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_deliveries")),
    )
    _indexes(
        "event_deliveries",
        ("state", "due_at"),
        ("app_id", "state", "id"),
        ("event_id",),
        ("endpoint_id", "state"),
    )
    op.create_table(
        "event_attempts",
        _id(),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("delivery_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.Integer(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.Text(), nullable=False),
        sa.Column("excerpt", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        _fk("event_attempts", "app_id", "apps"),
        _fk("event_attempts", "delivery_id", "event_deliveries"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_attempts")),
    )
    _indexes("event_attempts", ("app_id", "id"), ("delivery_id", "id"), ("created_at",))
    op.create_table(
        "event_notices",
        sa.Column("grant_id", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["grant_id"],
            ["user_subscriptions.id"],
            name=op.f("fk_event_notices_grant_id_user_subscriptions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("grant_id", "kind", "expires_at", name=op.f("pk_event_notices")),
    )


def downgrade() -> None:
    for table in ("event_notices", "event_attempts", "event_deliveries", "events", "event_endpoints"):
        op.drop_table(table)
