"""`store/schema.py` and the migrations describe the same database.

An empty SQLite file and an empty PostgreSQL database are migrated with Alembic to head and
compared with the metadata: tables, columns (types loosely, nullability), indexes and unique
constraints through Alembic's own comparison, then what that comparison does not look at (the
condition of a partial index, PostgreSQL's operator classes). The migration chain has one base
and one head, so a migration added beside another rather than on top of it fails here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from licensegate.store import migrate
from licensegate.store.schema import SQLITE_SEARCH_INDEXES, metadata
from tests import databases


@pytest.fixture(scope="module", params=databases.FLAVOURS)
def migrated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[sa.Engine]:
    """An engine on a database migrated from empty to head (dropped afterwards)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('schema') / 'migrated.db'}"
        migrate.upgrade(url)
        name = None
    else:
        name = databases.unique_name("lgschema")
        url = databases.create_postgres_database(name, durable=False)
    engine = sa.create_engine(migrate.sqlalchemy_url(url), poolclass=sa.pool.NullPool)
    try:
        yield engine
    finally:
        engine.dispose()
        if name is not None:
            databases.drop_database(name)


def differences(engine: sa.Engine, target: sa.MetaData) -> list[Any]:
    with engine.connect() as conn:
        dialect = conn.dialect.name

        def include(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
            """Leave out what the schema makes on another database only (an index declared
            with `.ddl_if(dialect=...)`)."""
            if type_ == "table" and reflected and _sqlite_search_index(name or ""):
                return False
            condition = getattr(obj, "_ddl_if", None)
            return reflected or condition is None or condition.dialect in (None, dialect)

        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": include, "target_metadata": target}
        )
        return list(compare_metadata(context, target))


def _sqlite_search_index(name: str) -> bool:
    """An FTS5 table of a log search (SQLite) or one of the tables FTS5 keeps for it."""
    return any(name == index or name.startswith(f"{index}_") for index in SQLITE_SEARCH_INDEXES)


def test_sqlite_log_searches_have_their_index(migrated: sa.Engine) -> None:
    tables = set(sa.inspect(migrated).get_table_names())
    expected = set(SQLITE_SEARCH_INDEXES) if migrated.dialect.name == "sqlite" else set()
    assert {name for name in tables if name in SQLITE_SEARCH_INDEXES} == expected


def _normal(clause: object) -> str:
    """A partial index's condition with brackets, spacing and case left out ('' for none)."""
    return "" if clause is None else re.sub(r"[\s()]", "", str(clause)).lower()


def test_migrations_build_what_the_schema_declares(migrated: sa.Engine) -> None:
    assert differences(migrated, metadata) == []


def test_partial_indexes_and_operator_classes_match(migrated: sa.Engine) -> None:
    dialect = migrated.dialect.name
    inspector = sa.inspect(migrated)
    checked = 0
    for table in metadata.tables.values():
        reflected = {index["name"]: index for index in inspector.get_indexes(table.name)}
        for index in table.indexes:
            condition = getattr(index, "_ddl_if", None)
            if condition is not None and condition.dialect not in (None, dialect):
                assert index.name not in reflected, f"{index.name} exists only on {condition.dialect}"
                continue
            assert index.name in reflected, f"{table.name}: no index {index.name}"
            options = reflected[index.name].get("dialect_options", {})
            where = index.dialect_kwargs.get(f"{dialect}_where")
            found = options.get(f"{dialect}_where")
            assert _normal(where) == _normal(found), f"{index.name}: WHERE {found} != {where}"
            if dialect == "postgresql":
                ops = index.dialect_kwargs.get("postgresql_ops") or {}
                assert (options.get("postgresql_ops") or {}) == ops, index.name
            checked += 1
    assert checked > 0


# Where a migration leaves a default as it was on purpose: 0007 raised the application-wide
# client limit but kept SQLite's DDL default (changing it copies `apps`); every INSERT names it.
KEPT_DEFAULTS = {("sqlite", "apps", "client_rate_limit")}


def _default(text: object) -> str | None:
    """A column default without quotes, brackets or PostgreSQL's cast (`'0'::bigint` is `0`)."""
    if text is None:
        return None
    return re.sub(r"::[a-z ]+$", "", str(text)).strip("()").strip("'")


def test_column_defaults_match(migrated: sa.Engine) -> None:
    dialect = migrated.dialect.name
    inspector = sa.inspect(migrated)
    for table in metadata.tables.values():
        reflected = {column["name"]: column for column in inspector.get_columns(table.name)}
        for column in table.columns:
            found = reflected[column.name].get("default")
            if found is not None and str(found).startswith("nextval("):
                continue  # the sequence of a PostgreSQL identity column
            declared = (
                column.server_default.arg if isinstance(column.server_default, sa.DefaultClause) else None
            )
            if (dialect, table.name, column.name) in KEPT_DEFAULTS:
                assert _default(found) != _default(declared), "the kept default has since been changed"
                continue
            assert _default(found) == _default(declared), f"{table.name}.{column.name}: {found} != {declared}"


def test_the_comparison_sees_drift(migrated: sa.Engine) -> None:
    """A column, an index or a nullability the migrations do not make is reported (the test
    above is not blind)."""
    drifted = sa.MetaData()
    for table in metadata.tables.values():
        table.to_metadata(drifted)
    users = drifted.tables["users"]
    users.append_column(sa.Column("nickname", sa.Text))
    sa.Index("ix_users_nickname", users.c.nickname)
    users.c.last_ip.nullable = False
    kinds = {
        change[0] if isinstance(change, tuple) else change[0][0] for change in differences(migrated, drifted)
    }
    assert {"add_column", "add_index", "modify_nullable"} <= kinds


def test_the_migrations_form_one_chain() -> None:
    scripts = ScriptDirectory(str(migrate.MIGRATIONS_DIR))
    assert len(scripts.get_bases()) == 1
    assert scripts.get_heads() == [migrate.head_revision()]
    revisions = list(scripts.walk_revisions())
    assert len(revisions) == len(list(Path(migrate.MIGRATIONS_DIR, "versions").glob("[0-9]*.py")))
