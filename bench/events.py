"""Does a slow event receiver slow the API? License Login (re-check) on a real `licensegate serve`
without pending event deliveries, then with 1,000 of them queued for a receiver that never answers
in time (every attempt times out after LICENSEGATE_EVENT_TIMEOUT, so the workers' delivery tasks
keep claiming and waiting the whole run). The figures in docs/benchmarks.md come from here.

    .venv/bin/python bench/events.py [--databases sqlite,postgres] [--duration 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402
from tests.httpservers import serving  # noqa: E402
from tests.live import create_app, start_server  # noqa: E402

from bench.run import (  # noqa: E402
    UNLIMITED,
    Target,
    generate_keys,
    prepare_database,
    run_wrk,
    seed_client,
    seller_query,
)
from licensegate.store import migrate  # noqa: E402

PENDING = 1000


def queue_depth(url: str) -> int:
    for line in httpx.get(f"{url}/metrics", timeout=30).text.splitlines():
        if line.startswith("licensegate_event_queue_depth "):
            return int(float(line.split()[1]))
    return 0


def bench(flavour: str, args: argparse.Namespace) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="lgbench-events-") as tmp, serving() as receiver:
        receiver.reply("/slow", b"", delay=60.0)  # answers after the delivery's time limit
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
            LICENSEGATE_OUTBOUND_ALLOW="127.0.0.1",
            LICENSEGATE_EVENT_TIMEOUT="5",
        )
        try:
            targets = seed_client(server, args)
            recheck = next(t for t in targets if t.name == "License Login (re-check)")
            run_wrk(server.url, recheck, folder, 3, args.connections, args.threads)  # warm-up

            def measure(label: str, target: Target) -> None:
                for _ in range(args.rounds):
                    stats = run_wrk(server.url, target, folder, args.duration, args.connections, args.threads)
                    rps = stats["requests"] / (stats["duration_us"] / 1e6)
                    found.setdefault(f"{label} rps", []).append(rps)
                    found.setdefault(f"{label} p99", []).append(stats["p99_us"] / 1000)
                    print(
                        f"{flavour} {label}: {rps:.0f} req/s, p99 {stats['p99_us'] / 1000:.2f} ms",
                        file=sys.stderr,
                    )

            measure("without", recheck)
            shop = create_app(url, folder, "shop", "shop")
            with httpx.Client(base_url=server.url, timeout=120) as http:
                added = http.get(
                    seller_query(shop["sellerkey"], "addeventwebhook", url=receiver.url("/slow"))
                )
                assert added.json()["success"] is True, added.text
                generate_keys(http, shop["sellerkey"], PENDING)  # one key.created event each
            deadline = time.monotonic() + 60
            while queue_depth(server.url) < PENDING and time.monotonic() < deadline:
                time.sleep(0.2)
            found["pending before"] = [float(queue_depth(server.url))]
            measure("with", recheck)
            found["pending after"] = [float(queue_depth(server.url))]
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
    print("| database | pending deliveries | License Login (re-check) requests/s | p99 ms |")
    print("|---|---|---|---|")
    for flavour in args.databases.split(","):
        found = bench(flavour, args)
        for label, pending in (("without", "0"), ("with", f"{found['pending before'][0]:,.0f}")):
            rps = statistics.median(found[f"{label} rps"])
            p99 = statistics.median(found[f"{label} p99"])
            print(f"| {flavour} | {pending} | {rps:,.0f} | {p99:.2f} |")
        print(f"({flavour}: {found['pending after'][0]:,.0f} still pending after the run)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
