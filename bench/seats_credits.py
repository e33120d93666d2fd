"""What seats, heartbeats, named limits and credits cost.

Under load (wrk, a real `licensegate serve`): License Login (re-check), a Heartbeat of the same
sessions, the same logins under a named rate limit of their key, then with a seat rule (every login
is counted in a transaction), and a credit spend on the same sessions (one conditional UPDATE), in
one run.

With `--cpu`: the service's own CPU per call in one process (SQLite, no network: the ASGI
application called directly, as bench/signing.py does), for the same calls plus a heartbeat that
also compares entitlements and credits, each on its own application, in alternating batches; the
fastest batch of each is the figure, so it holds on a loaded machine where wrk's do not. The
figures in docs/benchmarks.md come from here.

    .venv/bin/python bench/seats_credits.py [--databases sqlite,postgres] [--duration 10] [--rounds 3]
    .venv/bin/python bench/seats_credits.py --cpu [--calls 300] [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

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
from bench.signing import HWID, _discard, _receive, _scope, open_services  # noqa: E402
from licensegate.app import FastPaths, build_app  # noqa: E402
from licensegate.domain.apps import create_application  # noqa: E402
from licensegate.services import Services  # noqa: E402

LABELS = (
    "License Login (re-check)",
    "Heartbeat",
    "License Login (re-check, named limit)",
    "License Login (re-check, seats on)",
    "Spend Credits",
)


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
        beats = [p.replace("type=license", "type=heartbeat", 1) for p in paths]
        beat = Target("Heartbeat", "POST", lambda: beats)
        run_wrk(server.url, recheck, folder, 3, args.connections, args.threads)  # warm-up
        measure_rounds(found, flavour, LABELS[0], server.url, recheck, folder, args)
        # What `setheartbeat&interval=60&grace=30` writes: every heartbeat is a beat.
        execute_sql(
            server.database_url,
            f"UPDATE apps SET heartbeat_interval = 60, heartbeat_grace = 30 WHERE id = {app}",
            ownerid,
        )
        measure_rounds(found, flavour, LABELS[1], server.url, beat, folder, args)
        execute_sql(server.database_url, f"UPDATE apps SET heartbeat_interval = 0 WHERE id = {app}", ownerid)
        # What `setratelimit&key=...&name=api&requests=1000000000&window=60` writes, on every key.
        execute_sql(
            server.database_url,
            "INSERT INTO named_limits (app_id, key_id, name, max_requests, window_seconds, created_at) "
            f"SELECT app_id, id, 'api', 1000000000, 60, 0 FROM license_keys WHERE app_id = {app}",
            ownerid,
        )
        execute_sql(server.database_url, f"UPDATE apps SET named_limits = 1 WHERE id = {app}", ownerid)
        measure_rounds(found, flavour, LABELS[2], server.url, recheck, folder, args)
        execute_sql(server.database_url, f"UPDATE apps SET named_limits = 0 WHERE id = {app}", ownerid)
        # What `setseats&sub=default&sessions=5&machines=2` writes.
        execute_sql(
            server.database_url,
            "INSERT INTO seat_rules (app_id, owner, owner_id, max_machines, max_sessions, created_at) "
            f"SELECT app_id, 'sub', id, 2, 5, 0 FROM subscriptions WHERE app_id = {app}",
            ownerid,
        )
        execute_sql(server.database_url, f"UPDATE apps SET seats = 1 WHERE id = {app}", ownerid)
        measure_rounds(found, flavour, LABELS[3], server.url, recheck, folder, args)
        measure_rounds(found, flavour, LABELS[4], server.url, spend, folder, args)
    return found


# --- CPU per call in one process ------------------------------------------------------------

CPU_CALLS = (
    "License Login (re-check)",
    "License Login (re-check, named limit)",
    "License Login (re-check, seats on)",
    "Heartbeat",
    "Heartbeat (entitlements, credits)",
    "Spend Credits",
)
# What each application has set, as seller API calls after the first login (`{key}`: its key).
SETUP: dict[str, list[dict[str, str]]] = {
    "License Login (re-check)": [],
    "License Login (re-check, named limit)": [
        {"type": "setratelimit", "key": "{key}", "name": "api", "requests": "1000000000", "window": "60"}
    ],
    "License Login (re-check, seats on)": [
        {"type": "setseats", "sub": "default", "sessions": "5", "machines": "2"}
    ],
    "Heartbeat": [{"type": "setheartbeat", "interval": "60", "grace": "30"}],
    "Heartbeat (entitlements, credits)": [
        {"type": "setheartbeat", "interval": "60", "grace": "30"},
        {"type": "addentitlement", "code": "export"},
        {"type": "attachentitlement", "code": "export", "sub": "default"},
        {"type": "setcredits", "key": "{key}", "balance": "1000000000"},
    ],
    "Spend Credits": [{"type": "setcredits", "key": "{key}", "balance": "1000000000"}],
}


async def _application(services: Services, http: httpx.AsyncClient, index: int, label: str) -> dict[str, Any]:
    """One application set up for `label`, logged in once: the ASGI scope of its measured call."""
    created = await create_application(
        services.db, services.secrets, owner="o", name=f"b{index}", now=services.clock.now()
    )
    await services.db.execute(
        "UPDATE apps SET client_rate_limit = 1000000000, auth_rate_limit = 1000000000 WHERE id = ?",
        created.app_id,
    )
    seller = {"sellerkey": created.sellerkey}
    key = (await http.get("/api/seller/", params={**seller, "type": "add", "expiry": "30"})).json()["key"]
    base = {"ownerid": created.ownerid, "name": f"b{index}"}
    session = (await http.post("/api/1.0/", params={**base, "type": "init"})).json()["sessionid"]
    login = {**base, "type": "license", "sessionid": session, "key": key, "hwid": HWID}
    assert (await http.post("/api/1.0/", params=login)).json()["success"]
    for call in SETUP[label]:
        params = {name: value.replace("{key}", key) for name, value in call.items()}
        body = (await http.get("/api/seller/", params={**seller, **params})).json()
        assert body["success"], body
    assert (await http.post("/api/1.0/", params=login)).json()["success"]  # the set-up in force
    if label.startswith("License Login"):
        return _scope("/api/1.0/", urlencode(login))
    kind = "spend" if label == "Spend Credits" else "heartbeat"
    return _scope("/api/1.0/", urlencode({**base, "type": kind, "sessionid": session}))


async def _run(app: FastPaths, scope: dict[str, Any], calls: int) -> None:
    for _ in range(calls):
        await app(dict(scope), _receive, _discard)


async def measure_cpu(calls: int, rounds: int) -> dict[str, float]:
    """The fastest batch of each call, in microseconds of process CPU per call."""
    services = await open_services("lgseats")
    best: dict[str, float] = {}
    try:
        transport = httpx.ASGITransport(app=build_app(services.settings, services))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            scopes = {
                label: await _application(services, http, i, label) for i, label in enumerate(CPU_CALLS)
            }
        app = build_app(services.settings, services)
        for scope in scopes.values():
            await _run(app, scope, 200)  # warm: caches filled, code paths taken once
        for _round in range(rounds):
            for label, scope in scopes.items():
                started = time.process_time()
                await _run(app, scope, calls)
                spent = (time.process_time() - started) / calls * 1e6
                best[label] = min(best.get(label, spent), spent)
    finally:
        await services.close()
    return best


def cpu_report(best: dict[str, float]) -> None:
    base = best[CPU_CALLS[0]]
    print(f"CPU per call in one process (SQLite), load average {os.getloadavg()[0]:.1f}:")
    print("")
    print("| call | µs per call | against License Login (re-check) |")
    print("|---|---|---|")
    for label in CPU_CALLS:
        print(f"| {label} | {best[label]:.0f} | {best[label] / base:.2f}× |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--cpu", action="store_true", help="CPU per call in one process instead of wrk")
    parser.add_argument("--calls", type=int, default=300, help="--cpu: calls per batch")
    add_load_arguments(parser)
    args = parser.parse_args()
    if args.cpu:
        cpu_report(asyncio.run(measure_cpu(args.calls, args.rounds)))
        return 0
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
