"""note search and grant keys: the Licenses list's "note contains" answered by a trigram index on
PostgreSQL and an index of the notes in id order on SQLite (both read every key of the
application), and the grants of a key indexed only where a
key is set (SQLite's statistics over an index of mostly NULL key_id made it scan every grant for
each key of a list page)

Revision ID: 0027
Revises: 0018
Create Date: 2026-11-25 07:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0027"
down_revision = "0018"
branch_labels = None
depends_on = None

_GRANT_KEY = "ix_user_subscriptions_key_id"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        # pg_trgm ships with PostgreSQL and is a trusted extension: the database's owner may add it.
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.create_index(
            "ix_license_keys_note_trigram",
            "license_keys",
            ["note"],
            postgresql_using="gin",
            postgresql_ops={"note": "gin_trgm_ops"},
        )
    else:
        op.create_index("ix_license_keys_note_scan", "license_keys", ["app_id", "id", "note"])
    keyed = sa.text("key_id IS NOT NULL")
    op.drop_index(_GRANT_KEY, table_name="user_subscriptions")
    op.create_index(_GRANT_KEY, "user_subscriptions", ["key_id"], sqlite_where=keyed, postgresql_where=keyed)


def downgrade() -> None:
    op.drop_index(_GRANT_KEY, table_name="user_subscriptions")
    op.create_index(_GRANT_KEY, "user_subscriptions", ["key_id"])
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_license_keys_note_trigram", table_name="license_keys")
    else:
        op.drop_index("ix_license_keys_note_scan", table_name="license_keys")
