"""License Login's first use on PostgreSQL under load, by pool size and `synchronous_commit`.

For each setting it makes a database (durable unless the setting turns `synchronous_commit` off
for it, `ALTER DATABASE ... SET`), starts a real `licensegate serve` (two workers) with that
pool size, and drives first uses of fresh keys with wrk (each key on its own session, sent
once). The guidance in docs/operations.md ("PostgreSQL: pool size and synchronous_commit")
comes from here.

    .venv/bin/python bench/pg_settings.py [--duration 3] [--settings 10:on,10:off,4:on,20:on]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402
from tests.live import create_app, start_server  # noqa: E402

from bench.run import LIMITS_OFF, Target, bench_app, client_query, generate_keys, open_sessions, run_wrk  # noqa: E402
from licensegate.store import migrate  # noqa: E402

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


def measure(pool: int, synchronous: bool, args: argparse.Namespace) -> tuple[float, float, int]:
    """(requests/s, p99 ms, errors) of first uses with this pool size and commit setting."""
    name = f"lgpgset_{os.getpid()}"
    url = databases.create_postgres_database(name)
    try:
        if not synchronous:
            with psycopg.connect(databases.POSTGRES_ADMIN_URL, autocommit=True) as admin:
                admin.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
        migrate.upgrade(url)
        with tempfile.TemporaryDirectory(prefix="lgpgset-") as tmp:
            folder = Path(tmp)
            create_app(url, folder, "warmup", "warmup")
            env = {**LIMITS_OFF, "LICENSEGATE_PG_POOL_SIZE": str(pool)}
            server = start_server(url, folder, args.workers, **env)
            try:
                app = bench_app(server, "bench-pg")
                count = 2000 * (args.duration + 1)
                with httpx.Client(base_url=server.url, timeout=120) as http:
                    keys = generate_keys(http, app["sellerkey"], count)
                sessions = open_sessions(server, app, count)
                paths = [
                    client_query(app, "license", sessionid=session, key=key, hwid=HWID)
                    for session, key in zip(sessions, keys, strict=True)
                ]
                warm, timed = paths[:2000], paths[2000:]
                run_wrk(server.url, Target("warm-up", "POST", lambda: warm, True), folder, 1, 64, 2)
                stats = run_wrk(
                    server.url, Target("first use", "POST", lambda: timed, True), folder, args.duration, 64, 2
                )
            finally:
                server.stop()
    finally:
        databases.drop_database(name)
    rps = stats["requests"] / (stats["duration_us"] / 1e6)
    errors = sum(v for k, v in stats.items() if k.startswith("errors_"))
    return rps, stats["p99_us"] / 1000, errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--settings", default="10:on,10:off,4:on,20:on", help="pool:on|off, comma-separated")
    args = parser.parse_args()
    for setting in args.settings.split(","):
        pool, commit = setting.split(":")
        before = os.getloadavg()[0]
        rps, p99, errors = measure(int(pool), commit == "on", args)
        print(
            f"pool {pool}, synchronous_commit {commit}: {rps:,.0f} first uses/s, p99 {p99:.1f} ms, "
            f"errors {errors}, load average {before:.1f} -> {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
