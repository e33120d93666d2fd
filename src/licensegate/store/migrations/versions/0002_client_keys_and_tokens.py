"""client keys and tokens: each application's sealed Ed25519 key and secret, the deployment's own
signing key, the 1.2 session key, and the token system

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 12:00:00

Existing applications get their key pair when they are first needed (`domain.appkeys`), and
their clear `secret` is sealed then: a migration cannot reach the deployment key. Nothing wrote
`tokens` before this revision, so it is made anew with its links to keys and users.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _create_tokens(columns: list[sa.Column[object]], constraints: list[sa.schema.SchemaItem]) -> None:
    op.create_table(
        "tokens",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("app_id", sa.BigInteger(), nullable=False),
        *columns,
        sa.ForeignKeyConstraint(
            ["app_id"], ["apps.id"], name=op.f("fk_tokens_app_id_apps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_tokens_token_hash")),
        *constraints,
    )


def upgrade() -> None:
    op.create_table(
        "signing_keys",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("signing_key", sa.Text(), nullable=False),
        sa.Column("public_key", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_signing_keys")),
    )
    op.add_column("apps", sa.Column("signing_key", sa.Text(), nullable=True))
    op.add_column("apps", sa.Column("public_key", sa.Text(), nullable=True))
    op.add_column("apps", sa.Column("token_validation", sa.Integer(), server_default="0", nullable=False))
    op.add_column("sessions", sa.Column("enckey", sa.Text(), nullable=True))

    op.drop_index(op.f("ix_tokens_app_id_assigned"), table_name="tokens")
    op.drop_table("tokens")
    _create_tokens(
        [
            sa.Column("token_hash", sa.Text(), nullable=False),
            sa.Column("token_sealed", sa.Text(), nullable=False),
            sa.Column("kind", sa.Text(), nullable=False),
            sa.Column("assigned", sa.Text(), nullable=False),
            sa.Column("user_id", sa.BigInteger(), nullable=True),
            sa.Column("license_key_id", sa.BigInteger(), nullable=True),
            sa.Column("banned_reason", sa.Text(), nullable=True),
            sa.Column("file_hash", sa.Text(), nullable=True),
            sa.Column("used_at", sa.BigInteger(), nullable=True),
            sa.Column("created_at", sa.BigInteger(), nullable=False),
        ],
        [
            sa.ForeignKeyConstraint(
                ["user_id"], ["users.id"], name=op.f("fk_tokens_user_id_users"), ondelete="CASCADE"
            ),
            sa.ForeignKeyConstraint(
                ["license_key_id"],
                ["license_keys.id"],
                name=op.f("fk_tokens_license_key_id_license_keys"),
                ondelete="CASCADE",
            ),
        ],
    )
    op.create_index(op.f("ix_tokens_app_id_assigned"), "tokens", ["app_id", "assigned"], unique=False)
    op.create_index(op.f("ix_tokens_user_id"), "tokens", ["user_id"], unique=False)
    op.create_index(op.f("ix_tokens_license_key_id"), "tokens", ["license_key_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_tokens_license_key_id"), table_name="tokens")
    op.drop_index(op.f("ix_tokens_user_id"), table_name="tokens")
    op.drop_index(op.f("ix_tokens_app_id_assigned"), table_name="tokens")
    op.drop_table("tokens")
    # 0001's columns, in 0001's order.
    required: list[sa.Column[object]] = [
        sa.Column(name, sa.Text(), nullable=False) for name in ("token_hash", "kind", "assigned")
    ]
    _create_tokens(
        [
            *required,
            sa.Column("banned_reason", sa.Text(), nullable=True),
            sa.Column("file_hash", sa.Text(), nullable=True),
            sa.Column("created_at", sa.BigInteger(), nullable=False),
        ],
        [],
    )
    op.create_index(op.f("ix_tokens_app_id_assigned"), "tokens", ["app_id", "assigned"], unique=False)
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.drop_column("enckey")
    with op.batch_alter_table("apps") as batch_op:
        batch_op.drop_column("token_validation")
        batch_op.drop_column("public_key")
        batch_op.drop_column("signing_key")
    op.drop_table("signing_keys")
