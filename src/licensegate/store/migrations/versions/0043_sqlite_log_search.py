"""log search on SQLite served by an index: an FTS5 table with the trigram tokenizer over each log
table's searched columns (external content: the text is not stored twice), kept by triggers.
PostgreSQL has its trigram indexes (0031); nothing changes there.

Revision ID: 0043
Revises: 0042
Create Date: 2026-11-28 00:10:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0043"
down_revision = "0042"
branch_labels = None
depends_on = None

# (table, its searched columns): the same as store.logs' LogTable.searched.
SEARCHED = (("client_logs", ("message", "pcuser")), ("tamper_logs", ("reason", "details", "hwid")))


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table, columns in SEARCHED:
        index = f"{table}_search"
        listed = ", ".join(columns)
        new = ", ".join(f"new.{c}" for c in columns)
        old = ", ".join(f"old.{c}" for c in columns)
        op.execute(
            f"CREATE VIRTUAL TABLE {index} USING fts5({listed}, content='{table}', "
            "content_rowid='id', tokenize='trigram')"
        )
        op.execute(
            f"CREATE TRIGGER {index}_insert AFTER INSERT ON {table} BEGIN "
            f"INSERT INTO {index}(rowid, {listed}) VALUES (new.id, {new}); END"
        )
        op.execute(
            f"CREATE TRIGGER {index}_delete AFTER DELETE ON {table} BEGIN "
            f"INSERT INTO {index}({index}, rowid, {listed}) VALUES ('delete', old.id, {old}); END"
        )
        op.execute(
            f"CREATE TRIGGER {index}_update AFTER UPDATE ON {table} BEGIN "
            f"INSERT INTO {index}({index}, rowid, {listed}) VALUES ('delete', old.id, {old}); "
            f"INSERT INTO {index}(rowid, {listed}) VALUES (new.id, {new}); END"
        )
        op.execute(f"INSERT INTO {index}({index}) VALUES ('rebuild')")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for table, _columns in SEARCHED:
        index = f"{table}_search"
        for event in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS {index}_{event}")
        op.execute(f"DROP TABLE IF EXISTS {index}")
