"""entitlements: named features of an application, attached to subscriptions and, as extras, to
single keys and users (issue 21)

Revision ID: 0041
Revises: 0036
Create Date: 2026-11-27 23:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0041"
down_revision = "0036"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ATTACHED = (
    ("subscription_entitlements", "subscriptions", "subscription_id"),
    ("key_entitlements", "license_keys", "key_id"),
    ("user_entitlements", "users", "user_id"),
)


def upgrade() -> None:
    op.create_table(
        "entitlements",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_entitlements_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_entitlements")),
        sa.UniqueConstraint("app_id", "code", name=op.f("uq_entitlements_app_id_code")),
    )
    for table, owner, column in ATTACHED:
        op.create_table(
            table,
            sa.Column(column, sa.BigInteger(), nullable=False),
            sa.Column("entitlement_id", sa.BigInteger(), nullable=False),
            sa.Column("created_at", sa.BigInteger(), nullable=False),
            sa.ForeignKeyConstraint(
                [column], [f"{owner}.id"], name=op.f(f"fk_{table}_{column}_{owner}"), ondelete="CASCADE"
            ),
            sa.ForeignKeyConstraint(
                ["entitlement_id"],
                ["entitlements.id"],
                name=op.f(f"fk_{table}_entitlement_id_entitlements"),
                ondelete="CASCADE",
            ),
            sa.PrimaryKeyConstraint(column, "entitlement_id", name=op.f(f"pk_{table}")),
        )
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(batch_op.f(f"ix_{table}_entitlement_id"), ["entitlement_id"], unique=False)


def downgrade() -> None:
    for table, _owner, _column in ATTACHED:
        op.drop_table(table)
    op.drop_table("entitlements")
