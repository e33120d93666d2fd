"""Measures licensegate's hot operations under concurrent load and writes docs/benchmarks.md.

For each database it starts a real `licensegate serve` (two workers by default), seeds data
through the seller API, and drives each target with wrk (Debian package `wrk`), interleaving the
targets over several rounds so drift hits all of them alike. `/healthz` is the ceiling: it
touches no database.

    .venv/bin/python bench/run.py                      # SQLite and PostgreSQL, 3 rounds of 10 s
    .venv/bin/python bench/run.py --databases sqlite --duration 5 --rounds 1
    .venv/bin/python bench/run.py --databases postgres --targets "License Login (first use)" \
        --output /tmp/first-use.md                   # some targets only
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402  (reuses the test suite's database set-up)
from tests.live import LiveServer, create_app, execute_sql, start_server  # noqa: E402

from licensegate.store import migrate  # noqa: E402

LUA = Path(__file__).with_name("wrk.lua")
UNLIMITED = str(10**9)


@dataclass
class Target:
    name: str
    method: str
    paths: Callable[[], list[str]]  # asked again before every run (first uses need fresh keys)
    sequential: bool = False  # each path sent at most once
    url: str = ""  # the server it is sent to, when not the bench's main one (--signing)


@dataclass
class Result:
    database: str
    target: str
    rps: list[float] = field(default_factory=list)
    p50: list[float] = field(default_factory=list)
    p99: list[float] = field(default_factory=list)
    errors: int = 0


def seller_query(sellerkey: str, type_: str, **params: str) -> str:
    return "/api/seller/?" + urlencode({"sellerkey": sellerkey, "type": type_, **params})


def client_query(app: dict[str, str], type_: str, version: str = "1.0", **params: str) -> str:
    """A client call on `/api/<version>/` (KeyAuth's dialects read the query string too)."""
    query = urlencode({"ownerid": app["ownerid"], "name": app["name"], "type": type_, **params})
    return f"/api/{version}/?{query}"


def generate_keys(http: httpx.Client, sellerkey: str, count: int) -> list[str]:
    keys: list[str] = []
    while len(keys) < count:
        body = http.get(
            seller_query(sellerkey, "add", expiry="30", amount=str(min(100, count - len(keys))))
        ).json()
        keys.extend(body["keys"])
    return keys


def open_sessions(server: LiveServer, app: dict[str, str], count: int) -> list[str]:
    """`count` new sessions, opened 64 at a time."""

    async def run() -> list[str]:
        sessions: list[str] = []
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            while len(sessions) < count:
                batch = min(64, count - len(sessions))
                replies = await asyncio.gather(*(http.post(client_query(app, "init")) for _ in range(batch)))
                sessions.extend(r.json()["sessionid"] for r in replies)
        return sessions

    return asyncio.run(run())


def bench_app(server: LiveServer, owner: str) -> dict[str, str]:
    """An application whose rate limits do not get in the way of the load."""
    created = server.create_app(owner, "bench")
    execute_sql(
        server.database_url,
        "UPDATE apps SET client_rate_limit = 1000000000, auth_rate_limit = 1000000000 WHERE ownerid = ?",
        created["ownerid"],
    )
    return created


def seed_seller(server: LiveServer, _args: argparse.Namespace) -> list[Target]:
    """1,000 unused keys; `verify` asks for a random one of them."""
    created = bench_app(server, "bench-seller")
    with httpx.Client(base_url=server.url, timeout=60) as http:
        keys = generate_keys(http, created["sellerkey"], 1000)
    paths = [seller_query(created["sellerkey"], "verify", key=k) for k in keys]
    return [Target("seller verify", "GET", lambda: paths)]


def seed_client(server: LiveServer, args: argparse.Namespace) -> list[Target]:
    """init, and three kinds of License Login: re-checking the licence on a session already logged in
    as that user (no write), logging in on a new session (one write), and the first use of a fresh
    key (creates the user). 1,000 users whose HWIDs are bound."""
    app = bench_app(server, "bench-client")
    hwid = "S-1-5-21-1111111111-2222222222-3333333333-1001"
    with httpx.Client(base_url=server.url, timeout=60) as http:
        keys = generate_keys(http, app["sellerkey"], 1000)
    sessions = open_sessions(server, app, 1000)
    with httpx.Client(base_url=server.url, timeout=60) as http:
        for session, key in zip(sessions, keys, strict=True):
            response = http.post(client_query(app, "license", sessionid=session, key=key, hwid=hwid))
            assert response.status_code == 200, response.text
    recheck_paths = [
        client_query(app, "license", sessionid=session, key=key, hwid=hwid)
        for session, key in zip(sessions, keys, strict=True)
    ]
    # Enough fresh sessions and keys for a run at well above the rates these reach here.
    per_run = 2500 * args.duration

    def new_session_paths() -> list[str]:
        fresh = open_sessions(server, app, per_run)
        return [
            client_query(app, "license", sessionid=session, key=keys[i % len(keys)], hwid=hwid)
            for i, session in enumerate(fresh)
        ]

    def first_use_paths() -> list[str]:
        with httpx.Client(base_url=server.url, timeout=120) as http:
            fresh = generate_keys(http, app["sellerkey"], per_run)
        sessions = open_sessions(server, app, per_run)
        return [
            client_query(app, "license", sessionid=session, key=key, hwid=hwid)
            for session, key in zip(sessions, fresh, strict=True)
        ]

    recheck_paths_13 = [path.replace("/api/1.0/", "/api/1.3/", 1) for path in recheck_paths]
    init_path = [client_query(app, "init")]
    init_path_13 = [client_query(app, "init", "1.3")]
    return [
        Target("client init", "POST", lambda: init_path),
        Target("client init (1.3)", "POST", lambda: init_path_13),
        Target("License Login (re-check)", "POST", lambda: recheck_paths),
        Target("License Login (re-check, 1.3)", "POST", lambda: recheck_paths_13),
        Target("License Login (new session)", "POST", new_session_paths, sequential=True),
        Target("License Login (first use)", "POST", first_use_paths, sequential=True),
    ]


SEEDERS: list[Callable[[LiveServer, argparse.Namespace], list[Target]]] = [seed_client, seed_seller]
UNSIGNED_SERVE = [sys.executable, str(Path(__file__).with_name("unsigned.py"))]
SIGNED_TWINS = ("client init (1.3)", "License Login (re-check)", "License Login (re-check, 1.3)")


def unsigned_name(name: str) -> str:
    """`License Login (re-check)` -> `License Login (re-check, unsigned)`."""
    return name[:-1] + ", unsigned)" if name.endswith(")") else name + " (unsigned)"


def unsigned_twins(targets: list[Target], url: str) -> list[Target]:
    """The same calls sent to a server of the same code and database whose answers go unsigned
    (bench/unsigned.py): the difference is what signing costs under load."""
    return [
        Target(unsigned_name(target.name), target.method, target.paths, target.sequential, url)
        for target in targets
        if target.name in SIGNED_TWINS
    ]


def signing_costs(flavour: str, results: dict[tuple[str, str], Result]) -> list[str]:
    """One line per measured pair: the throughput signing takes away."""
    lines: list[str] = []
    for name in SIGNED_TWINS:
        signed, unsigned = results.get((flavour, name)), results.get((flavour, unsigned_name(name)))
        if signed is None or unsigned is None:
            continue
        with_rps, without_rps = statistics.median(signed.rps), statistics.median(unsigned.rps)
        lines.append(
            f"| {flavour} | {name} | {with_rps:,.0f} | {without_rps:,.0f} | "
            f"{100 * (1 - with_rps / without_rps):.1f}% |"
        )
    return lines


def run_wrk(
    url: str, target: Target, folder: Path, seconds: int, connections: int, threads: int
) -> dict[str, Any]:
    paths_file = folder / ("".join(ch if ch.isalnum() else "_" for ch in target.name) + ".txt")
    paths_file.write_text("\n".join(target.paths()) + "\n")
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{seconds}s",
        "--latency",
        "-s",
        str(LUA),
        url,
        "--",
        str(paths_file),
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "BENCH_METHOD": target.method,
            "BENCH_ORDER": "sequential" if target.sequential else "random",
            "BENCH_THREADS": str(threads),
        },
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("BENCH_JSON "))
    stats: dict[str, Any] = json.loads(line.removeprefix("BENCH_JSON "))
    return stats


def prepare_database(flavour: str, folder: Path) -> str:
    if flavour == "sqlite":
        return f"sqlite:///{folder / 'bench.db'}"
    # Its own name, so that two runs at once (before and after a change) do not share a database.
    return databases.create_postgres_database(f"lgbench_{os.getpid()}")


# The load comes from one address, so the per-address and per-session limits are lifted.
LIMITS_OFF = {
    "LICENSEGATE_SELLER_RATE_LIMIT": UNLIMITED,
    "LICENSEGATE_CLIENT_ADDRESS_LIMIT": UNLIMITED,
    "LICENSEGATE_CLIENT_SESSION_LIMIT": UNLIMITED,
}


@contextlib.contextmanager
def bench_server(flavour: str, folder: Path, workers: int, **env: str) -> Iterator[tuple[str, LiveServer]]:
    """A migrated database of `flavour` (with the warm-up application) and a real `serve` on it,
    the limits lifted; the server stopped and a PostgreSQL database dropped afterwards. Yields
    the database's URL and the server."""
    url = prepare_database(flavour, folder)
    try:
        migrate.upgrade(url)  # before the server starts
        create_app(url, folder, "warmup", "warmup")
        server = start_server(url, folder, workers, **LIMITS_OFF, **env)
        try:
            yield url, server
        finally:
            server.stop()
    finally:
        if flavour == "postgres":
            databases.drop_database(url.rpartition("/")[2])


def measure_rounds(
    found: dict[str, list[float]],
    flavour: str,
    label: str,
    url: str,
    target: Target,
    folder: Path,
    args: argparse.Namespace,
) -> None:
    """`args.rounds` wrk runs of `target`: requests/s and p99 (ms) under `<label> rps`/`<label> p99`."""
    for _ in range(args.rounds):
        stats = run_wrk(url, target, folder, args.duration, args.connections, args.threads)
        rps = stats["requests"] / (stats["duration_us"] / 1e6)
        found.setdefault(f"{label} rps", []).append(rps)
        found.setdefault(f"{label} p99", []).append(stats["p99_us"] / 1000)
        errors = sum(v for k, v in stats.items() if k.startswith("errors_"))
        print(
            f"{flavour} {label}: {rps:.0f} req/s, p99 {stats['p99_us'] / 1000:.2f} ms, errors {errors}",
            file=sys.stderr,
        )


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """The load's options every wrk bench takes (the databases each bench declares itself)."""
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)


def bench_database(flavour: str, args: argparse.Namespace, results: dict[tuple[str, str], Result]) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="lgbench-") as tmp,
        bench_server(flavour, Path(tmp), args.workers) as (url, server),
    ):
        folder = Path(tmp)
        unsigned: LiveServer | None = None
        try:
            targets = [Target("healthz", "GET", lambda: ["/healthz"])]
            for seed in SEEDERS:
                targets.extend(seed(server, args))
            if args.signing:
                unsigned = start_server(
                    url, folder, args.workers, command=UNSIGNED_SERVE, log_name="unsigned.log", **LIMITS_OFF
                )
                targets.extend(unsigned_twins(targets, unsigned.url))
            if args.targets:
                targets = [target for target in targets if target.name in args.targets]
            for target in targets:  # warm-up: imports, statement caches, connection pools
                run_wrk(target.url or server.url, target, folder, 3, args.connections, args.threads)
            for round_no in range(args.rounds):
                order = targets if round_no % 2 == 0 else list(reversed(targets))
                for target in order:
                    stats = run_wrk(
                        target.url or server.url,
                        target,
                        folder,
                        args.duration,
                        args.connections,
                        args.threads,
                    )
                    result = results.setdefault((flavour, target.name), Result(flavour, target.name))
                    result.rps.append(stats["requests"] / (stats["duration_us"] / 1e6))
                    result.p50.append(stats["p50_us"] / 1000)
                    result.p99.append(stats["p99_us"] / 1000)
                    result.errors += sum(v for k, v in stats.items() if k.startswith("errors_"))
                    print(
                        f"{flavour:8} {target.name:22} {result.rps[-1]:9.0f} req/s "
                        f"p50 {result.p50[-1]:6.2f} ms p99 {result.p99[-1]:6.2f} ms",
                        file=sys.stderr,
                    )
        finally:
            if unsigned is not None:
                unsigned.stop()


def machine() -> list[str]:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    pg = subprocess.run(["psql", "--version"], capture_output=True, text=True).stdout.strip() or "n/a"
    wrk = subprocess.run(["wrk", "--version"], capture_output=True, text=True).stdout.splitlines()
    return [
        f"- CPU: {cpu}, {os.cpu_count()} cores; the load generator runs on the same cores",
        f"- {platform.platform()}; Python {platform.python_version()}; SQLite {sqlite3.sqlite_version}; {pg}",
        f"- {wrk[0] if wrk else 'wrk'}",
    ]


def write_report(path: Path, args: argparse.Namespace, results: dict[tuple[str, str], Result]) -> None:
    today = time.strftime("%Y-%m-%d")
    lines = [
        "# Benchmarks",
        "",
        f"Measured {today} by `bench/run.py`; regenerate with the command below after any change that may",
        "touch speed. Figures are medians over the rounds; the load generator shares the machine's cores, so",
        "absolute numbers are understated and the ratios matter most.",
        "",
        "## Machine",
        "",
        *machine(),
        "",
        "## Command",
        "",
        "```",
        f".venv/bin/python bench/run.py --databases {','.join(args.databases)} --duration {args.duration} "
        f"--rounds {args.rounds} --connections {args.connections} --threads {args.threads} "
        f"--workers {args.workers}{' --signing' if args.signing else ''}",
        "```",
        "",
        f"Each target: `wrk -t{args.threads} -c{args.connections} -d{args.duration}s --latency "
        "-s bench/wrk.lua`,",
        f"after a 3 s warm-up, against `licensegate serve --workers {args.workers}`.",
        "",
        "## Results",
        "",
        "| database | operation | requests/s | % of /healthz | p50 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for flavour in args.databases:
        ceiling = results.get((flavour, "healthz"))
        ceiling_rps = statistics.median(ceiling.rps) if ceiling else 0.0
        for (db, _name), result in results.items():
            if db != flavour:
                continue
            rps = statistics.median(result.rps)
            share = f"{100 * rps / ceiling_rps:.0f}%" if ceiling_rps else "-"
            lines.append(
                f"| {db} | {result.target} | {rps:,.0f} | {share} | {statistics.median(result.p50):.2f} | "
                f"{statistics.median(result.p99):.2f} | {result.errors} |"
            )
    costs = [line for flavour in args.databases for line in signing_costs(flavour, results)]
    if costs:
        lines += [
            "",
            "## What signing costs",
            "",
            "The same calls against a second server of the same code and database whose answers go",
            "unsigned (`bench/unsigned.py`, a bench-only stand-in), measured in the same rounds:",
            "",
            "| database | operation | signed req/s | unsigned req/s | throughput signing takes |",
            "|---|---|---|---|---|",
            *costs,
        ]
    lines += [
        "",
        "## What the operations do",
        "",
        "- `healthz`: `GET /healthz`, no database: the ceiling of the HTTP stack on this machine.",
        "- `client init`: `POST /api/1.0/?type=init`: finds the application, opens a session (one INSERT).",
        "- `License Login (re-check)`: `POST /api/1.0/?type=license` for a random one of 1,000 users whose",
        "  HWID is bound, on the session that user already logged in (a program re-checking its licence):",
        "  the session with its application (one join), the key with its user, HWIDs and grants (one",
        "  query), the blacklist (one query); nothing to write unless the user's last-login second changed.",
        "- `client init (1.3)` and `License Login (re-check, 1.3)`: the same calls on KeyAuth's `/api/1.3/`",
        "  dialect. Every client answer on every path is signed (Ed25519 over timestamp and body, about",
        "  15 us with libsodium), so the 1.0 rows include signing too; compare with an unsigned run below.",
        "- `License Login (new session)`: the same for a session `init` just opened (each used once): as",
        "  above plus one write that marks the session logged in. This is a program's start-up.",
        "- `License Login (first use)`: a fresh, unused key each time: creates the user, redeems the key",
        "  (grants), binds the HWID and logs the session in, in one transaction.",
        "- `seller verify`: `GET /api/seller/?type=verify&key=...` for a random one of 1,000 keys:",
        "  seller-key authentication (one indexed lookup by the key's SHA-256), rate limiting, key lookup.",
        "",
        "## Reading the figures",
        "",
        "- The service's own CPU per request sets the pace: a License Login costs about 120-150 us of",
        "  Python in one process (4 SQL statements, ~45 us of them in SQLite; the rest is parsing,",
        "  validation, the rules and the envelope), and serving it adds about as much again under load.",
        "  Reads scale with worker processes (re-check, seller verify); writes far less, because SQLite",
        "  has one writer at a time and each process re-reads pages the other one wrote.",
        "- The rounds run one after another on one growing database: every first-use and new-session run",
        "  adds tens of thousands of sessions, keys and users, so the write-heavy figures fall from round",
        "  to round. On a fresh database a first use runs at about twice the rate shown.",
        "- PostgreSQL shares the two cores with the service and the load generator; its sessions mostly",
        "  wait for the service's next statement, and a first use is about ten round trips in one",
        "  transaction, each with asyncpg's overhead, plus an fsync at commit. Expect far more with the",
        "  database on its own machine; folding the first use into fewer statements is the next step.",
        "",
    ]
    path.write_text("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--databases", type=lambda s: s.split(","), default=["sqlite", "postgres"])
    add_load_arguments(parser)
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument(
        "--signing",
        action="store_true",
        help="also send the 1.3 and re-check calls to an unsigned server (bench/unsigned.py): "
        "what signing costs in throughput",
    )
    parser.add_argument(
        "--targets",
        type=lambda s: [name.strip() for name in s.split("|") if name.strip()],
        default=[],
        help="operation names to measure, separated by | (names hold commas; default: all)",
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("bench needs wrk: apt-get install -y wrk", file=sys.stderr)
        return 2
    results: dict[tuple[str, str], Result] = {}
    for flavour in args.databases:
        bench_database(flavour, args, results)
    write_report(args.output, args, results)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
