"""The targets of issue 24 ("Done means") and whether a run of `bench/run.py` met them: a pure
function of the run's medians, so the report's verdicts are tested (tests/test_bench_targets.py).

By Little's law a target driven by C connections that answers R requests/s has a mean latency
of C / R: at 64 connections and under 3,200 requests/s the mean alone exceeds 20 ms, so a p99
of 20 ms or less is only reachable by the fast operations (the re-checks and `check`), and
that is where it applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

HEALTHZ = "healthz"
RECHECK = "License Login (re-check)"
RECHECK_13 = "License Login (re-check, 1.3)"
CHECK = "Session check"
CHECK_13 = "Session check (1.3)"
INIT = "client init"
INIT_13 = "client init (1.3)"
FIRST_USE = "License Login (first use)"

P99_CONNECTIONS = 64
P99_LIMIT_MS = 20.0
# (target, share of the same database's /healthz it must reach), on SQLite.
SHARES = (
    (RECHECK, 0.33),
    (RECHECK_13, 0.33),
    (CHECK, 0.33),
    (CHECK_13, 0.33),
    (INIT, 0.15),
    (INIT_13, 0.15),
    (FIRST_USE, 0.10),
)
FAST = (RECHECK, RECHECK_13, CHECK, CHECK_13)  # the operations the p99 limit applies to
POSTGRES_OF_SQLITE = ((RECHECK, 0.60), (RECHECK_13, 0.60))
POSTGRES_FIRST_USE_RPS = 1000.0

MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"


@dataclass(frozen=True)
class Measured:
    """One target's medians over the rounds."""

    rps: float
    p99_ms: float


@dataclass(frozen=True)
class Verdict:
    database: str
    criterion: str
    measured: str  # the value, as the report shows it ("-" when not measured)
    outcome: str  # MET, NOT_MET or NOT_MEASURED


def _at_least(value: float, floor: float) -> str:
    return MET if value >= floor else NOT_MET


def verdicts(figures: Mapping[tuple[str, str], Measured], connections: int) -> list[Verdict]:
    """Each criterion of the issue with what the run measured: `figures` maps (database, target)
    to its medians (one database size); `connections`: how many the run held open."""
    found: list[Verdict] = []
    sqlite_ceiling = figures.get(("sqlite", HEALTHZ))
    for target, share in SHARES:
        criterion = f"{target} >= {share:.0%} of /healthz"
        here = figures.get(("sqlite", target))
        if here is None or sqlite_ceiling is None or sqlite_ceiling.rps <= 0:
            found.append(Verdict("sqlite", criterion, "-", NOT_MEASURED))
            continue
        ratio = here.rps / sqlite_ceiling.rps
        shown = f"{ratio:.1%} ({here.rps:,.0f} of {sqlite_ceiling.rps:,.0f} req/s)"
        found.append(Verdict("sqlite", criterion, shown, _at_least(ratio, share)))
    for target in FAST:
        criterion = f"{target}: p99 <= {P99_LIMIT_MS:.0f} ms at {P99_CONNECTIONS} connections"
        here = figures.get(("sqlite", target))
        if here is None:
            found.append(Verdict("sqlite", criterion, "-", NOT_MEASURED))
        elif connections != P99_CONNECTIONS:
            found.append(Verdict("sqlite", criterion, f"{here.p99_ms:.2f} ms at {connections}", NOT_MEASURED))
        else:
            met = MET if here.p99_ms <= P99_LIMIT_MS else NOT_MET
            found.append(Verdict("sqlite", criterion, f"{here.p99_ms:.2f} ms", met))
    for target, share in POSTGRES_OF_SQLITE:
        criterion = f"{target} >= {share:.0%} of SQLite's in the same run"
        here, there = figures.get(("postgres", target)), figures.get(("sqlite", target))
        if here is None or there is None or there.rps <= 0:
            found.append(Verdict("postgres", criterion, "-", NOT_MEASURED))
            continue
        ratio = here.rps / there.rps
        shown = f"{ratio:.1%} ({here.rps:,.0f} of {there.rps:,.0f} req/s)"
        found.append(Verdict("postgres", criterion, shown, _at_least(ratio, share)))
    criterion = f"{FIRST_USE} >= {POSTGRES_FIRST_USE_RPS:,.0f} req/s"
    first_use = figures.get(("postgres", FIRST_USE))
    if first_use is None:
        found.append(Verdict("postgres", criterion, "-", NOT_MEASURED))
    else:
        met = _at_least(first_use.rps, POSTGRES_FIRST_USE_RPS)
        found.append(Verdict("postgres", criterion, f"{first_use.rps:,.0f} req/s", met))
    return found
