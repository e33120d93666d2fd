"""What a License Login re-check and a `check` cost, measured in one process (CPU only, no
network), on SQLite and PostgreSQL.

Runs re-checks (on `/api/1.0/` and `/api/1.3/`) and Session Checks of one logged-in session
through the ASGI application (called directly, so only the service's own work is timed, in
process CPU time; PostgreSQL's own work runs in its server processes and is not counted), in
alternating batches with the session held by the worker (domain/recheck.py; on PostgreSQL both
in notify mode, the default, and in query mode, which reads the login versions at every call)
and not held (a cache that holds nothing), and prints the fastest batch of each in microseconds
per call. The figures of docs/design.md ("The client API's hot path") come from here.

    .venv/bin/python bench/recheck_cache.py [--calls 200] [--rounds 20] [--databases sqlite,postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402
from tests.conftest import make_settings  # noqa: E402

from bench.signing import _discard, _receive, _scope, logged_in  # noqa: E402
from licensegate.app import build_app  # noqa: E402
from licensegate.domain.recheck import Rechecks  # noqa: E402
from licensegate.services import Services  # noqa: E402

UNLIMITED = 10**9


def _database(flavour: str, folder: Path) -> tuple[str, str | None]:
    """A migrated database of `flavour`: its URL, and the PostgreSQL database's name to drop."""
    if flavour == "sqlite":
        return databases.sqlite_copy(databases.create_sqlite_template(folder), folder / "bench.db"), None
    name = databases.unique_name("lgbench_recheck")
    return databases.create_postgres_database(name), name


async def measure(flavour: str, calls: int, rounds: int) -> dict[str, list[float]]:
    folder = Path(tempfile.mkdtemp(prefix="lgrecheck"))
    url, dropped = _database(flavour, folder)
    settings = make_settings(
        url, folder / "data", client_address_limit=UNLIMITED, client_session_limit=UNLIMITED, pg_pool_size=2
    )
    services = await Services.open(settings)
    results: dict[str, list[float]] = {}
    try:
        app = build_app(services.settings, services)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as http:
            login, _sellerkey = await logged_in(services, http)
            check = {key: login[key] for key in ("ownerid", "name", "sessionid")} | {"type": "check"}
            kinds = {
                "re-check 1.0": _scope("/api/1.0/", urlencode(login)),
                "re-check 1.3": _scope("/api/1.3/", urlencode(login)),
                "check 1.0": _scope("/api/1.0/", urlencode(check)),
            }
            modes = {"held": services.rechecks, "not held": Rechecks(0)}
            if services.login_notify is not None:
                modes["held (query mode)"] = Rechecks(settings.recheck_sessions)
            for _round in range(rounds):
                for mode, rechecks in modes.items():
                    services.rechecks = rechecks
                    for name, scope in kinds.items():
                        started = time.process_time()
                        for _ in range(calls):
                            await app(dict(scope), _receive, _discard)
                        spent = (time.process_time() - started) / calls * 1e6
                        results.setdefault(f"{name} {mode}", []).append(spent)
    finally:
        await services.close()
        if dropped is not None:
            databases.drop_database(dropped)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=20, help="batches of each kind")
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    for flavour in args.databases.split(","):
        results = asyncio.run(measure(flavour, args.calls, args.rounds))
        for name, values in results.items():
            print(f"{flavour} {name}: {min(values):.0f} us per call (fastest of {len(values)} batches)")
    print(f"load average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
