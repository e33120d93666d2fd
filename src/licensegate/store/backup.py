"""A consistent copy of the whole database taken while the service runs, and loading it back.

SQLite: the online backup API copies the database into `licensegate.db` in one step, so the copy
is the database as it was at one moment (writers go on meanwhile; WAL mode lets them).
PostgreSQL: every table is exported with `COPY ... TO STDOUT` inside one read-only transaction
at `REPEATABLE READ`, so all tables are read at one snapshot, into `tables/<table>.copy`
(PostgreSQL's text format, streamed: never a whole table in memory); loading it back runs
`COPY ... FROM STDIN` in one transaction, table by table in the order of their foreign keys, and
moves every sequence past the largest id. Used by `licensegate backup` and `licensegate restore`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from licensegate import private
from licensegate.store.database import DatabaseError, dialect_of, sqlite_path
from licensegate.store.schema import metadata

SQLITE_FILE = "licensegate.db"
TABLES_FOLDER = "tables"
VERSION_TABLE = "alembic_version"


def _ordered(names: list[str]) -> list[str]:
    """Tables in the order of their foreign keys (parents first), then any the schema does not know."""
    known = [table.name for table in metadata.sorted_tables if table.name in names]
    return known + sorted(set(names) - set(known))


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# SQLite


def _sqlite_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    return [row[0] for row in rows]


def _sqlite_counts(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    return [
        {"name": name, "rows": conn.execute(f"SELECT count(*) FROM {_quoted(name)}").fetchone()[0]}
        for name in _ordered(_sqlite_tables(conn))
    ]


def export_sqlite(url: str, folder: Path) -> list[dict[str, Any]]:
    """Copy the database into `folder`; return its tables with their row counts."""
    source = sqlite3.connect(sqlite_path(url), timeout=30)
    target_path = folder / SQLITE_FILE
    private.touch(target_path)
    target = sqlite3.connect(target_path)
    try:
        source.backup(target)  # every page in one step: one consistent moment
        return _sqlite_counts(target)
    finally:
        target.close()
        source.close()


def sqlite_rows(url: str) -> int:
    """Rows in every table but the schema version (0 for a database that does not exist)."""
    path = Path(sqlite_path(url))
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=30)
    try:
        return sum(t["rows"] for t in _sqlite_counts(conn) if t["name"] != VERSION_TABLE)
    finally:
        conn.close()


def import_sqlite(url: str, folder: Path) -> None:
    """Replace the database's content with the copy in `folder` (the service must be stopped)."""
    path = Path(sqlite_path(url))
    private.touch(path)
    source = sqlite3.connect(folder / SQLITE_FILE)
    target = sqlite3.connect(path, timeout=30)
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


# PostgreSQL


def _connect(url: str) -> Any:
    import psycopg

    try:
        return psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://", 1))
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseError(f"cannot reach the database: {first}") from exc


def _pg_tables(cur: Any) -> list[str]:
    cur.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
    )
    return [row[0] for row in cur.fetchall()]


def _pg_columns(cur: Any, table: str) -> list[str]:
    cur.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
        (table,),
    )
    return [row[0] for row in cur.fetchall()]


def export_postgres(url: str, folder: Path) -> list[dict[str, Any]]:
    """Every table into `folder/tables/`, all read at one snapshot; return the tables with their
    columns and row counts."""
    import psycopg

    private.folder(folder / TABLES_FOLDER)
    conn = _connect(url)
    exported: list[dict[str, Any]] = []
    try:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction(), conn.cursor() as cur:
            for name in _ordered(_pg_tables(cur)):
                columns = _pg_columns(cur, name)
                listed = ", ".join(_quoted(column) for column in columns)
                rows = 0
                with (
                    private.create(folder / TABLES_FOLDER / f"{name}.copy") as out,
                    cur.copy(f"COPY {_quoted(name)} ({listed}) TO STDOUT") as copy,
                ):
                    for chunk in copy:
                        out.write(chunk)
                        rows += bytes(chunk).count(b"\n")  # one line per row (text format)
                exported.append({"name": name, "columns": columns, "rows": rows})
    except psycopg.Error as exc:
        raise DatabaseError(f"database error: {str(exc).strip().splitlines()[0]}") from exc
    finally:
        conn.close()
    return exported


def postgres_rows(url: str) -> int:
    conn = _connect(url)
    try:
        with conn.cursor() as cur:
            total = 0
            for name in _pg_tables(cur):
                if name != VERSION_TABLE:
                    cur.execute(f"SELECT count(*) FROM {_quoted(name)}")
                    total += cur.fetchone()[0]
            return int(total)
    finally:
        conn.close()


def import_postgres(url: str, folder: Path, tables: list[dict[str, Any]]) -> None:
    """Empty every table the export holds and load it, in one transaction; then move each
    sequence past the largest value its column holds."""
    import psycopg

    conn = _connect(url)
    try:
        with conn.transaction(), conn.cursor() as cur:
            present = set(_pg_tables(cur))
            missing = [t["name"] for t in tables if t["name"] not in present]
            if missing:
                raise DatabaseError(
                    f"the database has no table {missing[0]!r}: is it at the backup's schema?"
                )
            for table in reversed(tables):
                cur.execute(f"DELETE FROM {_quoted(table['name'])}")
            for table in tables:
                listed = ", ".join(_quoted(column) for column in table["columns"])
                with (
                    cur.copy(f"COPY {_quoted(table['name'])} ({listed}) FROM STDIN") as copy,
                    open(folder / TABLES_FOLDER / f"{table['name']}.copy", "rb") as source,
                ):
                    while chunk := source.read(1 << 20):
                        copy.write(chunk)
            cur.execute(
                "SELECT table_name, column_name, sequence FROM (SELECT table_name, column_name, "
                "pg_get_serial_sequence(quote_ident(table_name), column_name) AS sequence "
                "FROM information_schema.columns WHERE table_schema = current_schema()) AS c "
                "WHERE sequence IS NOT NULL"
            )
            for table_name, column, sequence in cur.fetchall():
                largest = f"MAX({_quoted(column)})"
                cur.execute(
                    f"SELECT setval(%s, COALESCE({largest}, 1), {largest} IS NOT NULL) "
                    f"FROM {_quoted(table_name)}",
                    (sequence,),
                )
    except psycopg.Error as exc:
        raise DatabaseError(f"database error: {str(exc).strip().splitlines()[0]}") from exc
    finally:
        conn.close()


def export(url: str, folder: Path) -> list[dict[str, Any]]:
    return export_sqlite(url, folder) if dialect_of(url) == "sqlite" else export_postgres(url, folder)


def rows_in(url: str) -> int:
    return sqlite_rows(url) if dialect_of(url) == "sqlite" else postgres_rows(url)


def load(url: str, folder: Path, tables: list[dict[str, Any]]) -> None:
    if dialect_of(url) == "sqlite":
        import_sqlite(url, folder)
    else:
        import_postgres(url, folder, tables)
