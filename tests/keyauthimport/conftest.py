"""A KeyAuth database in the real MariaDB for this test process, its mysqldump, and the loopback
server its `files` rows point at."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from tests import keyauthdb
from tests.conftest import make_settings
from tests.httpservers import LocalServer, serving

FILE_BODY = b"alpha file bytes"


@pytest.fixture(scope="session")
def file_server() -> Iterator[LocalServer]:
    with serving() as server:
        server.reply("/alpha.bin", FILE_BODY)
        yield server


@pytest.fixture(scope="session")
def keyauth_db(file_server: LocalServer) -> Iterator[keyauthdb.KeyAuthData]:
    database = f"keyauth_test_{os.getpid()}"
    data = keyauthdb.build(database, file_server.url("").rstrip("/"))
    yield data
    keyauthdb.drop(database)


@pytest.fixture(scope="session")
def keyauth_dump(keyauth_db: keyauthdb.KeyAuthData, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return keyauthdb.dump(keyauth_db.database, tmp_path_factory.mktemp("dump") / "keyauth.sql")


@pytest.fixture
def clock() -> MovableClock:
    """Today: the KeyAuth database is written as of the real time (its dump says when)."""
    return MovableClock(start=keyauthdb.NOW)


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    """The files' loopback server may be fetched from."""
    return make_settings(db_url, tmp_path, outbound_allow=("127.0.0.1",))
