"""bench/targets.py: the report's verdicts on issue 24's targets, from made-up medians."""

from __future__ import annotations

import pytest
from bench import targets
from bench.targets import MET, NOT_MEASURED, NOT_MET, Measured, Verdict


def _by_criterion(found: list[Verdict]) -> dict[str, Verdict]:
    return {verdict.criterion: verdict for verdict in found}


def _run(**overrides: Measured) -> dict[tuple[str, str], Measured]:
    """A run that meets every target, with some figures replaced ("database/target" keys)."""
    figures = {
        ("sqlite", targets.HEALTHZ): Measured(30_000, 3.0),
        ("sqlite", targets.RECHECK): Measured(10_000, 12.0),
        ("sqlite", targets.RECHECK_13): Measured(9_900, 19.9),
        ("sqlite", targets.CHECK): Measured(12_000, 8.0),
        ("sqlite", targets.CHECK_13): Measured(12_000, 20.0),
        ("sqlite", targets.INIT): Measured(4_500, 20.0),
        ("sqlite", targets.INIT_13): Measured(4_600, 20.0),
        ("sqlite", targets.FIRST_USE): Measured(3_000, 40.0),
        ("postgres", targets.HEALTHZ): Measured(30_000, 3.0),
        ("postgres", targets.RECHECK): Measured(6_000, 15.0),
        ("postgres", targets.RECHECK_13): Measured(6_000, 15.0),
        ("postgres", targets.FIRST_USE): Measured(1_000, 60.0),
    }
    for key, value in overrides.items():
        database, target = key.split("/")
        figures[(database, target)] = value
    return figures


def test_a_run_at_every_floor_meets_every_target() -> None:
    found = targets.verdicts(_run(), 64)
    assert [verdict.outcome for verdict in found] == [MET] * len(found)
    assert len(found) == len(targets.SHARES) + len(targets.FAST) + len(targets.POSTGRES_OF_SQLITE) + 1


def test_each_criterion_just_below_its_floor_is_not_met() -> None:
    found = _by_criterion(
        targets.verdicts(
            _run(
                **{
                    f"sqlite/{targets.RECHECK}": Measured(9_899, 12.0),  # 32.997% of 30,000
                    f"sqlite/{targets.INIT}": Measured(4_499, 20.0),
                    f"sqlite/{targets.CHECK_13}": Measured(12_000, 20.01),
                    f"postgres/{targets.RECHECK_13}": Measured(5_939, 15.0),  # 59.99% of 9,900
                    f"postgres/{targets.FIRST_USE}": Measured(999, 60.0),
                }
            ),
            64,
        )
    )
    assert found["License Login (re-check) >= 33% of /healthz"].outcome == NOT_MET
    assert found["License Login (re-check) >= 33% of /healthz"].measured == "33.0% (9,899 of 30,000 req/s)"
    assert found["client init >= 15% of /healthz"].outcome == NOT_MET
    assert found["Session check (1.3): p99 <= 20 ms at 64 connections"].outcome == NOT_MET
    assert found["License Login (re-check, 1.3) >= 60% of SQLite's in the same run"].outcome == NOT_MET
    assert found["License Login (first use) >= 1,000 req/s"].outcome == NOT_MET
    # The others are untouched.
    assert found["License Login (re-check, 1.3) >= 33% of /healthz"].outcome == MET
    assert found["License Login (re-check) >= 60% of SQLite's in the same run"].outcome == MET  # 60.6%


def test_postgres_is_compared_with_sqlite_of_the_same_run() -> None:
    found = _by_criterion(targets.verdicts(_run(**{f"sqlite/{targets.RECHECK}": Measured(10_001, 1.0)}), 64))
    verdict = found["License Login (re-check) >= 60% of SQLite's in the same run"]
    assert (verdict.outcome, verdict.measured) == (NOT_MET, "60.0% (6,000 of 10,001 req/s)")


def test_what_was_not_run_is_not_measured() -> None:
    sqlite_only = {key: value for key, value in _run().items() if key[0] == "sqlite"}
    found = _by_criterion(targets.verdicts(sqlite_only, 64))
    assert found["License Login (first use) >= 1,000 req/s"] == Verdict(
        "postgres", "License Login (first use) >= 1,000 req/s", "-", NOT_MEASURED
    )
    assert found["License Login (re-check) >= 60% of SQLite's in the same run"].outcome == NOT_MEASURED
    no_healthz = {key: value for key, value in _run().items() if key != ("sqlite", targets.HEALTHZ)}
    shares = [v for v in targets.verdicts(no_healthz, 64) if "/healthz" in v.criterion]
    assert {verdict.outcome for verdict in shares} == {NOT_MEASURED}


def test_p99_is_judged_only_at_64_connections() -> None:
    found = _by_criterion(targets.verdicts(_run(), 32))
    verdict = found["License Login (re-check): p99 <= 20 ms at 64 connections"]
    assert (verdict.outcome, verdict.measured) == (NOT_MEASURED, "12.00 ms at 32")


def test_the_report_says_how_the_service_was_scheduled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run under LICENSEGATE_SCHEDULING=batch (the servers inherit it) is not read as one
    without: the report's machine section names the policy."""
    from bench import run

    monkeypatch.delenv("LICENSEGATE_SCHEDULING", raising=False)
    assert "- the service's scheduling: `normal` (`LICENSEGATE_SCHEDULING`)" in run.machine()
    monkeypatch.setenv("LICENSEGATE_SCHEDULING", "batch")
    assert "- the service's scheduling: `batch` (`LICENSEGATE_SCHEDULING`)" in run.machine()
