"""log page indexes: the Logs and Tamper logs pages list newest first by (created_at, id), so an
address filter reads (app_id, ip, created_at) in that order instead of sorting every row of the
address; and on PostgreSQL a search of their text is answered by trigram indexes (pg_trgm, as
for the license notes of 0027) instead of reading every row of the application

Revision ID: 0031
Revises: 0029
Create Date: 2026-11-26 15:50:00.000000

SQLite has no trigrams: a search there reads the application's rows newest first until a page
is found (about half a second for a rare word in 1,000,000 lines); a user, address or date
filter narrows what it reads.
"""

from __future__ import annotations

from alembic import op

revision = "0031"
down_revision = "0029"
branch_labels = None
depends_on = None

_TRIGRAMS = {
    "client_logs": ("message", "pcuser"),
    "tamper_logs": ("reason", "details", "hwid"),
}


def upgrade() -> None:
    op.drop_index("ix_client_logs_app_id_ip", table_name="client_logs")
    for table in _TRIGRAMS:
        op.create_index(f"ix_{table}_app_id_ip_created_at", table, ["app_id", "ip", "created_at"])
    if op.get_bind().dialect.name == "postgresql":
        # pg_trgm ships with PostgreSQL and is a trusted extension (0027 added it already).
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        for table, columns in _TRIGRAMS.items():
            op.create_index(
                f"ix_{table}_search_trigram",
                table,
                list(columns),
                postgresql_using="gin",
                postgresql_ops=dict.fromkeys(columns, "gin_trgm_ops"),
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in _TRIGRAMS:
            op.drop_index(f"ix_{table}_search_trigram", table_name=table)
    for table in _TRIGRAMS:
        op.drop_index(f"ix_{table}_app_id_ip_created_at", table_name=table)
    op.create_index("ix_client_logs_app_id_ip", "client_logs", ["app_id", "ip"])
