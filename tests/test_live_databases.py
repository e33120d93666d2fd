"""The PostgreSQL databases the live servers of a test process reuse (`tests/databases.py`): one
given back is empty for the next server, whatever sessions were still on it."""

from __future__ import annotations

import psycopg
import pytest

from licensegate.store import backup
from tests import databases


def test_a_database_given_back_ends_its_other_sessions_and_is_empty() -> None:
    url = databases.take_live_database()
    # As a worker that exits with its transaction still open: its row must not outlive it.
    pending = psycopg.connect(url)
    pending.execute("INSERT INTO time_checks (user_id) VALUES (1)")
    # And one that committed and stayed connected.
    idle = psycopg.connect(url, autocommit=True)
    idle.execute("INSERT INTO time_checks (user_id) VALUES (2)")
    try:
        databases.give_back_live_database(url)
        assert backup.rows_in(url) == 0
        for ended in (pending, idle):
            with pytest.raises(psycopg.OperationalError):
                ended.execute("SELECT 1")
    finally:
        pending.close()
        idle.close()
    assert databases.take_live_database() == url  # the next server gets it, empty
    databases.give_back_live_database(url)
