"""The login versions' triggers (migrations 0056, 0058) and `store/schema.py`'s list of what they watch
agree: every column of `users`, `sessions` and `license_keys` is named once, as read by logins
(its change bumps a version) or not; the migrated databases have exactly the declared triggers,
each watching exactly the declared columns; and every change of `apps` bumps its version while a
no-op update (the lock `store.apps.lock` takes) does not."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

from licensegate.store.schema import LOGIN_COLUMNS, LOGIN_VERSION_TRIGGERS, NOT_LOGIN_COLUMNS, metadata
from tests.store.test_schema_matches_migrations import migrated as migrated  # the fixture

# Which trigger watches the login columns of each table.
WATCHING = {"users": "users_login_version", "sessions": "sessions_login_version"}
KEYS = "license_keys_login_version_update"


@pytest.mark.parametrize("table", list(LOGIN_COLUMNS))
def test_every_column_is_either_read_by_logins_or_not(table: str) -> None:
    login, other = set(LOGIN_COLUMNS[table]), set(NOT_LOGIN_COLUMNS[table])
    assert not login & other, f"{table}: named in both lists: {sorted(login & other)}"
    columns = {column.name for column in metadata.tables[table].columns}
    assert columns - login - other == set(), (
        f"{table}: say whether a change of these columns must refuse or change a held login "
        "(LOGIN_COLUMNS, with a migration that makes the table's trigger again) or not "
        "(NOT_LOGIN_COLUMNS), in store/schema.py"
    )
    assert login | other <= columns


def _triggers(engine: sa.Engine) -> dict[str, str]:
    """Login-version triggers of the database: name -> SQLite's SQL, or PostgreSQL's definition."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            rows = conn.execute(sa.text("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
        else:
            rows = conn.execute(
                sa.text("SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal")
            )
        return {name: sql for name, sql in rows if "login_version" in name}


def _watched(definition: str, table: str) -> set[str]:
    """The columns of an `UPDATE OF a, b ON table` trigger."""
    found = re.search(rf"UPDATE OF (.+?) ON (?:public\.)?{table}\b", definition)
    assert found, definition
    return {column.strip() for column in found.group(1).split(",")}


def test_the_migrations_make_exactly_the_declared_triggers(migrated: sa.Engine) -> None:
    assert set(_triggers(migrated)) == LOGIN_VERSION_TRIGGERS


@pytest.mark.parametrize("table", list(WATCHING))
def test_each_trigger_watches_exactly_the_login_columns(migrated: sa.Engine, table: str) -> None:
    definition = _triggers(migrated)[WATCHING[table]]
    assert _watched(definition, table) == set(LOGIN_COLUMNS[table])


def test_a_key_bumps_its_user_for_exactly_its_login_columns(migrated: sa.Engine) -> None:
    assert _watched(_triggers(migrated)[KEYS], "license_keys") == set(LOGIN_COLUMNS["license_keys"])


def test_an_application_bumps_for_any_change_but_not_for_a_lock(migrated: sa.Engine) -> None:
    if migrated.dialect.name == "sqlite":  # PostgreSQL compares OLD.* with NEW.*: every column
        definition = _triggers(migrated)["apps_login_version"]
        compared = set(re.findall(r"OLD\.(\w+) IS NOT NEW\.", definition))
        assert compared == {column.name for column in metadata.tables["apps"].columns} - {"login_version"}
    with migrated.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO accounts (username, role, ownerid, disabled, created_at) "
                "VALUES ('versions', 'seller', 'VERSIONS01', 0, 0)"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO apps (account_id, ownerid, name, secret, created_at, updated_at, "
                "client_rate_limit) SELECT id, ownerid, 'v', 'versions-secret', 0, 0, 100 "
                "FROM accounts WHERE username = 'versions'"
            )
        )

        def version() -> int:
            value: int = conn.execute(sa.text("SELECT login_version FROM apps WHERE name = 'v'")).scalar_one()
            return value

        start = version()
        conn.execute(sa.text("UPDATE apps SET updated_at = updated_at WHERE name = 'v'"))
        assert version() == start
        conn.execute(sa.text("UPDATE apps SET max_hwids = 2 WHERE name = 'v'"))
        assert version() == start + 1
        conn.execute(
            sa.text(
                "INSERT INTO blacklist (app_id, kind, value, created_at) "
                "SELECT id, 'ip', '10.0.0.1', 0 FROM apps WHERE name = 'v'"
            )
        )
        assert version() == start + 2
        conn.execute(sa.text("UPDATE accounts SET username = 'renamed' WHERE username = 'versions'"))
        assert version() == start + 3
        conn.execute(sa.text("DELETE FROM apps WHERE name = 'v'"))  # its rows' triggers find no row to bump
        conn.execute(sa.text("DELETE FROM accounts WHERE username = 'renamed'"))
