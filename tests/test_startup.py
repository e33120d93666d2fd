"""`serve`'s start-up work tried again while the database cannot be used (`startup.keep_trying`):
the real processes are in tests/test_database_outage.py; here the rules of the loop."""

from __future__ import annotations

import os

import pytest

from licensegate import startup
from licensegate.store.database import DatabaseError, DatabaseUnavailable


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "FIRST_WAIT", 0.001)
    monkeypatch.setattr(startup, "LONGEST_WAIT", 0.004)


def test_it_tries_until_the_database_answers_and_says_each_reason_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    reasons = iter(["refused", "refused", "timeout"])
    tries = []

    def attempt() -> None:
        tries.append(1)
        reason = next(reasons, None)
        if reason is not None:
            raise DatabaseUnavailable(reason)

    stopped: list[int] = []
    assert startup.keep_trying(attempt, os.getppid(), stopped.append) == 0
    assert len(tries) == 4
    assert stopped == []
    said = capsys.readouterr().err
    assert said.count("(refused)") == 1
    assert said.count("(timeout)") == 1
    assert "the database answers" in said


def test_a_refused_database_stops_serve(capsys: pytest.CaptureFixture[str]) -> None:
    def attempt() -> None:
        raise DatabaseError("the database schema is at revision 0000: run `licensegate migrate` first")

    stopped: list[int] = []
    assert startup.keep_trying(attempt, os.getppid(), stopped.append) == startup.REFUSED
    assert stopped == [os.getppid()]
    assert "run `licensegate migrate` first; stopping" in capsys.readouterr().err


def test_it_gives_up_when_serve_is_gone() -> None:
    def attempt() -> None:
        raise AssertionError("not tried: serve is gone")

    assert startup.keep_trying(attempt, -1, lambda _pid: None) == 1
