"""The ceiling the database itself puts on `init` and on a key's first use, on this machine.

Runs the statements of those two calls, and nothing around them (no HTTP, no parsing, no rate
limits, no envelope, no signing), in a tight loop in `--processes` processes at once (two, like
`licensegate serve --workers 2`), on SQLite and PostgreSQL. Each process opens the service's own
database layer (`Services.open`: the same adapter, write lock, pool and statement cache) and
calls the domain functions the handlers call, one call after the other:

- `init`: the application read and the session's INSERT, as `init` did before its application
  was held (`init, reading the app`), and the INSERT alone, conditional on the application's
  login version, as `init` does with the application held (`init`);
- `first use`: the session read a License Login starts with (`store.sessions.find_with_app`),
  then `domain.logins.license_login` of a fresh key on that session (the key read, the
  blacklist, the first use's writes; on SQLite in its transaction, on PostgreSQL in one
  statement), on one pooled connection per call as the endpoint pins one.

On SQLite it also counts the pages each call writes to the write-ahead log (one process, the log
emptied first): what its COMMIT costs. Prints, per database and call, the calls per second of all
processes together (wall clock, from the moment all start to the moment the last ends), the CPU
each call cost in its process, and the load average. The rates are what the SQL allows with the
load generator and the service's own work absent: what a `bench/run.py` figure of these calls can
approach, never pass. The machine must be otherwise idle for the rates to mean anything; the CPU
per call holds either way.

    .venv/bin/python bench/write_floor.py [--calls 2000] [--processes 2] [--databases sqlite,postgres]
        [--synchronous-commit on|off]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402
from tests.conftest import make_settings  # noqa: E402

from bench.signing import logged_in  # noqa: E402
from licensegate import ids  # noqa: E402
from licensegate.app import build_app  # noqa: E402
from licensegate.domain import apps, logins, sessions  # noqa: E402
from licensegate.domain.apps import ClientApp  # noqa: E402
from licensegate.domain.messages import Messages  # noqa: E402
from licensegate.domain.openedapps import OpenedApps  # noqa: E402
from licensegate.services import Services  # noqa: E402
from licensegate.store import sessions as session_store  # noqa: E402
from licensegate.store.database import Database, sqlite_path  # noqa: E402

KINDS = ("init, reading the app", "init", "first use")
IP = "10.1.2.3"


async def _no_messages() -> Messages:
    return Messages({})


def _settings(url: str, folder: Path) -> Any:
    return make_settings(url, folder / "data", pg_pool_size=10)


async def _prepare(url: str, folder: Path, keys: int) -> tuple[str, str, list[str]]:
    """An application without rate limits and `keys` fresh keys: (ownerid, name, keys)."""
    services = await Services.open(_settings(url, folder))
    try:
        transport = httpx.ASGITransport(app=build_app(services.settings, services))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            login, sellerkey = await logged_in(services, http)
            made: list[str] = []
            while len(made) < keys:
                params = {"sellerkey": sellerkey, "type": "add", "expiry": "30", "amount": "100"}
                made += (await http.get("/api/seller/", params=params)).json()["keys"]
    finally:
        await services.close()
    return login["ownerid"], login["name"], made[:keys]


async def _first_use(
    services: Services, db: Database, app: ClientApp, session_id: str, key: str, hwid: str, now: int
) -> None:
    """A License Login's statements for a fresh key on a session not logged in yet: the session
    read `identify` starts with, then the login, which uses the key."""
    digest = ids.digest(session_id)
    row = await session_store.find_with_app(db, digest)
    assert row is not None
    await logins.license_login(
        db,
        services.secrets,
        app,
        logins.Client(session_id=digest, ip=IP, hwid=hwid),
        key=key,
        otp_code=None,
        msg=Messages({}),
        now=now,
        first_use_wants=services.first_use_wants,
    )


async def _work(
    url: str, folder: Path, ownerid: str, name: str, keys: list[str], barrier: Barrier
) -> dict[str, tuple[float, float, float]]:
    """(start, end, CPU seconds) of each kind of call, run `len(keys)` times in this process."""
    services = await Services.open(_settings(url, folder))
    spent: dict[str, tuple[float, float, float]] = {}
    try:
        db = services.db
        app = await apps.find_for_client(db, ownerid, name)
        opened = OpenedApps()
        held = await opened.find(db, ownerid, name)
        held = await opened.find(db, ownerid, name)  # the held object itself
        now = services.clock.now()
        opened_ids: list[str] = []

        async def init_reading() -> None:
            found = await apps.find_for_client(db, ownerid, name)
            opened_ids.append(
                await sessions.start(
                    db, found, ip=IP, version=None, program_hash=None, messages=_no_messages, now=now
                )
            )

        async def init_held() -> None:
            await sessions.start(
                db,
                held,
                ip=IP,
                version=None,
                program_hash=None,
                messages=_no_messages,
                now=now,
                opened=opened,
            )

        remaining = iter(zip(keys, range(len(keys)), strict=True))

        async def first_use() -> None:
            key, number = next(remaining)
            async with db.pinned() as pinned:
                hwid = f"bench-hwid-{os.getpid()}-{number}"
                await _first_use(services, pinned, app, opened_ids[number], key, hwid, now)

        runs: dict[str, Callable[[], Awaitable[None]]] = {
            "init, reading the app": init_reading,
            "init": init_held,
            "first use": first_use,
        }
        for kind in KINDS:
            barrier.wait()
            started, cpu = time.time(), time.process_time()
            for _ in keys:
                await runs[kind]()
            spent[kind] = (started, time.time(), time.process_time() - cpu)
    finally:
        await services.close()
    return spent


def _size(path: str) -> int:
    return os.path.getsize(path)


async def _pages(url: str, folder: Path, ownerid: str, name: str, keys: list[str]) -> dict[str, float]:
    """SQLite: the pages each kind of call writes to the write-ahead log (its COMMIT's cost),
    one process, the log emptied before each kind and not checkpointed meanwhile."""
    services = await Services.open(_settings(url, folder))
    getattr(services.db, "_checkpointer").stop()  # noqa: B009 (no checkpoint while counting)
    path = sqlite_path(url)
    raw = sqlite3.connect(path)
    page = raw.execute("PRAGMA page_size").fetchone()[0]
    wal = f"{path}-wal"
    written: dict[str, float] = {}
    try:
        db = services.db
        app = await apps.find_for_client(db, ownerid, name)
        now = services.clock.now()
        opened: list[str] = []
        for kind in ("init", "first use"):
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            before = _size(wal)
            for number, key in enumerate(keys):
                if kind == "init":
                    opened.append(
                        await sessions.start(
                            db, app, ip=IP, version=None, program_hash=None, messages=_no_messages, now=now
                        )
                    )
                    continue
                await _first_use(services, db, app, opened[number], key, f"pages-{number}", now)
            written[kind] = (_size(wal) - before) / (page + 24) / len(keys)
    finally:
        raw.close()
        await services.close()
    return written


def _process(
    url: str, folder: str, ownerid: str, name: str, keys: list[str], barrier: Barrier, out: Any
) -> None:
    out.put(asyncio.run(_work(url, Path(folder), ownerid, name, keys, barrier)))


PAGE_CALLS = 200  # calls of each kind whose log pages are counted (SQLite)


def measure(
    flavour: str, calls: int, processes: int, synchronous: bool
) -> tuple[dict[str, tuple[float, float]], dict[str, float]]:
    """Per kind: (calls per second of all processes, CPU microseconds per call); and on SQLite
    the pages each kind of call writes."""
    folder = Path(tempfile.mkdtemp(prefix="lgfloor"))
    name = f"lgfloor_{os.getpid()}"
    if flavour == "sqlite":
        url = databases.sqlite_copy(databases.create_sqlite_template(folder), folder / "bench.db")
    else:
        url = databases.create_postgres_database(name)
        if not synchronous:
            with psycopg.connect(databases.POSTGRES_ADMIN_URL, autocommit=True) as admin:
                admin.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    try:
        ownerid, app_name, keys = asyncio.run(_prepare(url, folder, calls * processes + PAGE_CALLS))
        context = multiprocessing.get_context("spawn")
        barrier, out = context.Barrier(processes), context.Queue()
        workers = [
            context.Process(
                target=_process,
                args=(url, str(folder), ownerid, app_name, keys[i * calls : (i + 1) * calls], barrier, out),
            )
            for i in range(processes)
        ]
        for worker in workers:
            worker.start()
        results = [out.get() for _ in workers]
        for worker in workers:
            worker.join()
        pages = {}
        if flavour == "sqlite":
            spare = keys[calls * processes :]
            pages = asyncio.run(_pages(url, folder, ownerid, app_name, spare))
    finally:
        if flavour == "postgres":
            databases.drop_database(name)
    figures: dict[str, tuple[float, float]] = {}
    for kind in KINDS:
        start = min(result[kind][0] for result in results)
        end = max(result[kind][1] for result in results)
        cpu = sum(result[kind][2] for result in results)
        figures[kind] = (calls * processes / (end - start), cpu / (calls * processes) * 1e6)
    return figures, pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000, help="calls of each kind per process")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--databases", type=lambda s: s.split(","), default=["sqlite", "postgres"])
    parser.add_argument("--synchronous-commit", choices=("on", "off"), default="on", help="PostgreSQL's")
    args = parser.parse_args()
    for flavour in args.databases:
        before = os.getloadavg()
        figures, pages = measure(flavour, args.calls, args.processes, args.synchronous_commit == "on")
        after = os.getloadavg()
        setting = f", synchronous_commit {args.synchronous_commit}" if flavour == "postgres" else ""
        print(
            f"{flavour}{setting}, {args.processes} processes, {args.calls} calls each; load average "
            f"{before[0]:.2f} {before[1]:.2f} before, {after[0]:.2f} {after[1]:.2f} after"
        )
        for kind, (rate, cpu) in figures.items():
            written = f", {pages[kind]:.1f} pages written" if kind in pages else ""
            print(f"  {kind}: {rate:,.0f} calls/s together, {cpu:.0f} us CPU per call{written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
