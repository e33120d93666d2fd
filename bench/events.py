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

from tests.httpservers import serving  # noqa: E402
from tests.live import create_app  # noqa: E402

from bench.run import (  # noqa: E402
    add_load_arguments,
    bench_server,
    generate_keys,
    measure_rounds,
    run_wrk,
    seed_client,
    seller_query,
)

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
        with bench_server(
            flavour,
            folder,
            args.workers,
            LICENSEGATE_OUTBOUND_ALLOW="127.0.0.1",
            LICENSEGATE_EVENT_TIMEOUT="5",
        ) as (url, server):
            targets = seed_client(server, args)
            recheck = next(t for t in targets if t.name == "License Login (re-check)")
            run_wrk(server.url, recheck, folder, 3, args.connections, args.threads)  # warm-up
            measure_rounds(found, flavour, "without", server.url, recheck, folder, args)
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
            measure_rounds(found, flavour, "with", server.url, recheck, folder, args)
            found["pending after"] = [float(queue_depth(server.url))]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    add_load_arguments(parser)
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
