"""What seats and credits cost: License Login (re-check) on a real `licensegate serve`, then the
same logins once the application has a seat rule (every login is counted in a transaction), and
a credit spend on the same sessions (one conditional UPDATE), in one run. The figures in
docs/benchmarks.md come from here.

    .venv/bin/python bench/seats_credits.py [--databases sqlite,postgres] [--duration 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.live import execute_sql  # noqa: E402

from bench.run import (  # noqa: E402
    Target,
    add_load_arguments,
    bench_server,
    measure_rounds,
    run_wrk,
    seed_client,
)

LABELS = ("License Login (re-check)", "License Login (re-check, seats on)", "Spend Credits")


def bench(flavour: str, args: argparse.Namespace) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="lgbench-seats-") as tmp,
        bench_server(flavour, Path(tmp), args.workers) as (_url, server),
    ):
        folder = Path(tmp)
        targets = seed_client(server, args)
        recheck = next(t for t in targets if t.name == "License Login (re-check)")
        paths = recheck.paths()
        first = parse_qs(urlsplit(paths[0]).query)
        ownerid = first["ownerid"][0]
        app = "(SELECT id FROM apps WHERE ownerid = ? AND name = 'bench')"
        # A balance far beyond what a run spends on every key (each session spends its key's).
        execute_sql(
            server.database_url,
            "INSERT INTO credit_balances (app_id, key_id, balance, refilled_at, created_at) "
            f"SELECT app_id, id, 1000000000, 0, 0 FROM license_keys WHERE app_id = {app}",
            ownerid,
        )
        spends = [p.replace("type=license", "type=spend", 1) for p in paths]
        spend = Target("Spend Credits", "POST", lambda: spends)
        run_wrk(server.url, recheck, folder, 3, args.connections, args.threads)  # warm-up
        measure_rounds(found, flavour, LABELS[0], server.url, recheck, folder, args)
        # What `setseats&sub=default&sessions=5&machines=2` writes.
        execute_sql(
            server.database_url,
            "INSERT INTO seat_rules (app_id, owner, owner_id, max_machines, max_sessions, created_at) "
            f"SELECT app_id, 'sub', id, 2, 5, 0 FROM subscriptions WHERE app_id = {app}",
            ownerid,
        )
        execute_sql(server.database_url, f"UPDATE apps SET seats = 1 WHERE id = {app}", ownerid)
        measure_rounds(found, flavour, LABELS[1], server.url, recheck, folder, args)
        measure_rounds(found, flavour, LABELS[2], server.url, spend, folder, args)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    add_load_arguments(parser)
    args = parser.parse_args()
    print("| database | operation | requests/s | p99 ms |")
    print("|---|---|---|---|")
    for flavour in args.databases.split(","):
        found = bench(flavour, args)
        for label in LABELS:
            rps = statistics.median(found[f"{label} rps"])
            p99 = statistics.median(found[f"{label} p99"])
            print(f"| {flavour} | {label} | {rps:,.0f} | {p99:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
