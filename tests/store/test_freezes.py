"""The one rule that gives paused time back, evaluated alone in each database: when a freeze that
began at `lifted` ends now, a grant gets back the time until the earliest other freeze still on
it began (that freeze gives back the rest when it ends), or until now when there is none; never
less than nothing. tests/domain/test_freezes.py checks the same rule through real pauses."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from licensegate.store.freezes import give_back
from tests.databases import FLAVOURS, POSTGRES_ADMIN_URL

NOW = 1000


def evaluate(flavour: str, lifted: int, others: tuple[int | None, int | None]) -> int:
    dialect = "sqlite" if flavour == "sqlite" else "postgres"
    column = "CAST(? AS BIGINT)"  # stands for a column or subquery of that type
    sql = f"SELECT {give_back(dialect, column, (column, column))}"
    # Placeholders in order: the first other freeze, now, the second, now, now, the lifted one.
    params = (others[0], NOW, others[1], NOW, NOW, lifted)
    if flavour == "sqlite":
        with sqlite3.connect(":memory:") as conn:
            value: int = conn.execute(sql, params).fetchone()[0]
            return value
    with psycopg.connect(POSTGRES_ADMIN_URL) as conn:
        row = conn.execute(sql.replace("?", "%s"), params).fetchone()
        assert row is not None
        return int(row[0])


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize(
    ("lifted", "others", "given_back"),
    [
        (100, (None, None), NOW - 100),  # no other freeze: all the stopped time
        (100, (400, None), 300),  # another began later and goes on: only up to its start
        (100, (None, 400), 300),
        (100, (700, 400), 300),  # two others: up to the earliest
        (400, (100, None), 0),  # another began earlier: it gives back everything when it ends
        (400, (100, 700), 0),
        (400, (400, None), 0),  # began together: given back once, by the last to end
        (NOW, (None, None), 0),  # paused and unpaused within the same second
    ],
)
def test_each_stopped_second_is_given_back_once(
    flavour: str, lifted: int, others: tuple[int | None, int | None], given_back: int
) -> None:
    assert evaluate(flavour, lifted, others) == given_back
