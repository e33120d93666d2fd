"""What a key's first use and a new session cost, measured in one process on SQLite and PostgreSQL.

Runs through the ASGI application (called directly: no network, no HTTP server), in alternating
batches: License Login's first use of a fresh key (which makes the user) on a session opened
for it, and a new session (`init`, then a License Login of a known, bound key on it). Prints,
for the fastest batch of each kind, the process's CPU per call and, on PostgreSQL, the wall
time per call (one call at a time, so mostly round trips) and the round trips per call (each
statement, BEGIN and COMMIT counted); on SQLite, with `--statements`, the statements per call
(BEGIN and COMMIT too; counting them costs CPU, so not in a timed run). The figures in
docs/benchmarks.md come from here.

    .venv/bin/python bench/first_use.py [--calls 100] [--rounds 10] [--databases sqlite,postgres]
        [--statements]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402
from tests.conftest import make_settings  # noqa: E402

from bench.signing import _discard, _receive, _scope, logged_in  # noqa: E402
from licensegate.app import build_app  # noqa: E402
from licensegate.services import Services  # noqa: E402


class RoundTrips:
    """Counts the statements asyncpg sends (a prepared statement's run, or a simple query such as
    BEGIN and COMMIT): each is one round trip."""

    def __init__(self) -> None:
        self.count = 0

    @contextmanager
    def counting(self) -> Iterator[None]:
        connection = asyncpg.connection.Connection
        real_execute, real_run = connection.execute, connection._execute
        trips = self

        async def execute(conn: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            if not args:
                trips.count += 1  # a simple query; with arguments it goes through _execute
            return await real_execute(conn, query, *args, **kwargs)

        async def run(conn: Any, *args: Any, **kwargs: Any) -> Any:
            trips.count += 1
            return await real_run(conn, *args, **kwargs)

        connection.execute, connection._execute = execute, run
        try:
            yield
        finally:
            connection.execute, connection._execute = real_execute, real_run


@contextmanager
def database(flavour: str) -> Iterator[tuple[str, Path]]:
    folder = Path(tempfile.mkdtemp(prefix="lgfirstuse"))
    if flavour == "sqlite":
        yield databases.sqlite_copy(databases.create_sqlite_template(folder), folder / "bench.db"), folder
        return
    name = f"lgfirstuse_{os.getpid()}"
    try:
        yield databases.create_postgres_database(name), folder
    finally:
        databases.drop_database(name)


async def measure(flavour: str, calls: int, rounds: int, statements: bool) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    trips = RoundTrips()
    unlimited = 10**9
    with database(flavour) as (url, folder):
        settings = make_settings(
            url,
            folder / "data",
            client_address_limit=unlimited,
            client_session_limit=unlimited,
            pg_pool_size=10,
        )
        services = await Services.open(settings)
        try:
            app = build_app(services.settings, services)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
                login, sellerkey = await logged_in(services, http)
                base = {"ownerid": login["ownerid"], "name": login["name"]}

                async def fresh_keys(amount: int) -> list[str]:
                    made: list[str] = []
                    while len(made) < amount:
                        batch = min(100, amount - len(made))
                        params = {"sellerkey": sellerkey, "type": "add", "expiry": "30", "amount": str(batch)}
                        body = (await http.get("/api/seller/", params=params)).json()
                        made += list(body["keys"]) if "keys" in body else [body["key"]]
                    return made

                async def sessions(amount: int) -> list[str]:
                    return [
                        (await http.post("/api/1.0/", params={**base, "type": "init"})).json()["sessionid"]
                        for _ in range(amount)
                    ]

                keys = await fresh_keys(calls * rounds)
                init = _scope("/api/1.0/", urlencode({**base, "type": "init"}))
                known = {k: v for k, v in login.items() if k != "sessionid"}

                if flavour == "sqlite" and statements:  # each one, BEGIN and COMMIT too; not the triggers
                    connection = getattr(services.db, "_conn")  # noqa: B009

                    def traced(sql: str) -> None:
                        if not sql.startswith("--"):
                            trips.count += 1

                    connection.set_trace_callback(traced)

                async def timed(label: str, scopes: list[dict[str, Any]]) -> None:
                    gc.collect()
                    trips.count = 0
                    started, wall = time.process_time(), time.perf_counter()
                    with trips.counting():
                        for scope in scopes:
                            await app(scope, _receive, _discard)
                    spent, waited = time.process_time() - started, time.perf_counter() - wall
                    results.setdefault(f"{label} cpu", []).append(spent / len(scopes) * 1e6)
                    results.setdefault(f"{label} wall", []).append(waited / len(scopes) * 1e6)
                    results.setdefault(f"{label} trips", []).append(trips.count / len(scopes))

                for batch in range(rounds):
                    opened = await sessions(calls)
                    first = [
                        _scope("/api/1.0/", urlencode({**known, "sessionid": session, "key": keys.pop()}))
                        for session in opened
                    ]
                    kinds = ["first use", "new session"]
                    for kind in kinds if batch % 2 == 0 else reversed(kinds):
                        if kind == "first use":
                            await timed("first use", first)
                        else:
                            await timed("init", [dict(init) for _ in range(calls)])
                            again = await sessions(calls)
                            scopes = [
                                _scope("/api/1.0/", urlencode({**known, "sessionid": session}))
                                for session in again
                            ]
                            await timed("new session login", scopes)
                # Every first use made its user (a refusal would be cheaper and flatter the figure).
                made_users = await services.db.fetch_value("SELECT COUNT(*) FROM users")
                assert made_users == 1 + calls * rounds, made_users
        finally:
            await services.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=100, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=10, help="batches of each kind")
    parser.add_argument("--databases", type=lambda s: s.split(","), default=["sqlite", "postgres"])
    parser.add_argument(
        "--statements", action="store_true", help="SQLite: count the statements (costs CPU: not for timing)"
    )
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for flavour in args.databases:
        results = asyncio.run(measure(flavour, args.calls, args.rounds, args.statements))
        for kind in ("first use", "init", "new session login"):
            cpu, wall = min(results[f"{kind} cpu"]), min(results[f"{kind} wall"])
            trips = max(results[f"{kind} trips"])
            extra = f", {wall:.0f} us wall, {trips:.1f} round trips" if flavour == "postgres" else ""
            extra = extra or (f", {trips:.1f} statements" if args.statements else "")
            print(f"{flavour} {kind}: {cpu:.0f} us CPU{extra} per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
