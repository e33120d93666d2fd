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

from tests import databases  # noqa: E402
from tests.live import create_app, execute_sql, start_server  # noqa: E402

from bench.run import (  # noqa: E402
    UNLIMITED,
    Target,
    prepare_database,
    run_wrk,
    seed_client,
)
from licensegate.store import migrate  # noqa: E402

LABELS = ("License Login (re-check)", "License Login (re-check, seats on)", "Spend Credits")


def bench(flavour: str, args: argparse.Namespace) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="lgbench-seats-") as tmp:
        folder = Path(tmp)
        url = prepare_database(flavour, folder)
        migrate.upgrade(url)
        create_app(url, folder, "warmup", "warmup")
        server = start_server(
            url,
            folder,
            args.workers,
            LICENSEGATE_SELLER_RATE_LIMIT=UNLIMITED,
            LICENSEGATE_CLIENT_ADDRESS_LIMIT=UNLIMITED,
            LICENSEGATE_CLIENT_SESSION_LIMIT=UNLIMITED,
        )
        try:
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

            def measure(label: str, target: Target) -> None:
                for _ in range(args.rounds):
                    stats = run_wrk(server.url, target, folder, args.duration, args.connections, args.threads)
                    rps = stats["requests"] / (stats["duration_us"] / 1e6)
                    found.setdefault(f"{label} rps", []).append(rps)
                    found.setdefault(f"{label} p99", []).append(stats["p99_us"] / 1000)
                    errors = sum(v for k, v in stats.items() if k.startswith("errors_"))
                    print(f"{flavour} {label}: {rps:.0f} req/s, errors {errors}", file=sys.stderr)

            measure(LABELS[0], recheck)
            # What `setseats&sub=default&sessions=5&machines=2` writes.
            execute_sql(
                server.database_url,
                "INSERT INTO seat_rules (app_id, owner, owner_id, max_machines, max_sessions, created_at) "
                f"SELECT app_id, 'sub', id, 2, 5, 0 FROM subscriptions WHERE app_id = {app}",
                ownerid,
            )
            execute_sql(server.database_url, f"UPDATE apps SET seats = 1 WHERE id = {app}", ownerid)
            measure(LABELS[1], recheck)
            measure(LABELS[2], spend)
        finally:
            server.stop()
            if flavour == "postgres":
                databases.drop_database(url.rpartition("/")[2])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
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
