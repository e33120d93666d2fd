"""How long the dashboard's Licenses list takes with 1,000,000 keys, on SQLite and PostgreSQL,
and writes docs/benchmarks-dashboard.md.

Server time only: the list's queries through the domain, and the whole page (routing, session,
queries, template) through the ASGI application in-process, without a network. Page 1 and page
1,000 are measured alike, since keyset paging should make them cost the same.

    .venv/bin/python bench/dashboard_lists.py                    # both databases, 1,000,000 keys
    .venv/bin/python bench/dashboard_lists.py --keys 100000 --databases sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402
from tests.web.pages import PASSWORD, browser, make_shop  # noqa: E402

from licensegate.clock import SystemClock  # noqa: E402
from licensegate.config import Settings  # noqa: E402
from licensegate.domain import licenses  # noqa: E402
from licensegate.domain.licenses import KeyQuery  # noqa: E402
from licensegate.domain.paging import PageRequest, Position  # noqa: E402
from licensegate.domain.permissions import Scope  # noqa: E402
from licensegate.services import Services  # noqa: E402
from licensegate.store import migrate  # noqa: E402

PAGE = 50
RUNS = 30
OUT = ROOT / "docs" / "benchmarks-dashboard.md"


def _rows(app_id: int, count: int, now: int) -> list[tuple[Any, ...]]:
    rows = []
    for i in range(count):
        used = i % 10 < 3
        rows.append(
            (
                app_id,
                f"KEY-{secrets.token_hex(10)}",
                str(1 + i % 3),
                30 * 86400,
                f"batch {i // 10000}",
                "used" if used else "unused",
                "chargeback" if i % 50 == 0 else None,
                "SellerAPI",
                now - (count - i),
                now - (count - i) + 60 if used else None,
                f"user{i}" if used else None,
            )
        )
    return rows


COLUMNS = (
    "app_id",
    "key",
    "level",
    "duration",
    "note",
    "status",
    "banned_reason",
    "generated_by",
    "created_at",
    "used_at",
    "used_by",
)


async def _fill(url: str, app_id: int, count: int) -> None:
    now = int(time.time())
    batch = 100_000
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        for start in range(0, count, batch):
            conn.executemany(
                f"INSERT INTO license_keys ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                _rows(app_id, min(batch, count - start), now),
            )
            conn.commit()
        conn.execute("ANALYZE")
        conn.commit()
        conn.close()
        return
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        for start in range(0, count, batch):
            await conn.copy_records_to_table(
                "license_keys", records=_rows(app_id, min(batch, count - start), now), columns=COLUMNS
            )
        await conn.execute("VACUUM ANALYZE license_keys")
    finally:
        await conn.close()


async def _time(work: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    await work()  # warm caches once
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        await work()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


async def _measure(url: str, count: int) -> list[tuple[str, float, float]]:
    folder = Path(tempfile.mkdtemp(prefix="lgbench"))
    settings = Settings(data_dir=folder, database_url=url, argon2_time_cost=1, argon2_memory_kib=64)
    services = await Services.open(settings, clock=SystemClock())
    results: list[tuple[str, float, float]] = []
    try:
        shop = await make_shop(services, "bench", "Bench")
        await _fill(url, shop.app_id, count)
        db = services.db
        top = await db.fetch_value("SELECT MAX(id) FROM license_keys WHERE app_id = ?", shop.app_id)
        deep_id = top - PAGE * 1000
        deep_key = await db.fetch_value("SELECT key FROM license_keys WHERE id = ?", deep_id)
        everything = KeyQuery()
        used = KeyQuery(status="used")

        async def browse(query: KeyQuery, request: PageRequest) -> None:
            await licenses.browse(db, Scope(shop.app_id), query, request)

        cases: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
            ("query: page 1, newest first", lambda: browse(everything, PageRequest("created", True, PAGE))),
            (
                "query: page 1,000, newest first",
                lambda: browse(everything, PageRequest("created", True, PAGE, Position(deep_id, deep_id))),
            ),
            ("query: page 1 by key", lambda: browse(everything, PageRequest("key", False, PAGE))),
            (
                "query: page 1,000 by key",
                lambda: browse(everything, PageRequest("key", False, PAGE, Position(deep_key, deep_id))),
            ),
            ("query: page 1, status used", lambda: browse(used, PageRequest("created", True, PAGE))),
            (
                "query: search one key",
                lambda: browse(KeyQuery(search=deep_key), PageRequest("created", True, PAGE)),
            ),
            (
                "query: count (capped at 10,000)",
                lambda: licenses.count_matching(db, Scope(shop.app_id), everything),
            ),
        ]
        for name, work in cases:
            median, p95 = await _time(work)
            results.append((name, median, p95))
        async with browser(services) as dash:
            await dash.sign_in("bench", PASSWORD)
            path = f"/dashboard/apps/{shop.app_id}/licenses"
            first = await dash.get(path)
            assert first.status_code == 200, first.status_code
            cursor = (
                first.text.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0].replace("&amp;", "&")
            )

            async def page_one() -> None:
                assert (await dash.http.get(path)).status_code == 200

            async def page_two() -> None:
                assert (await dash.http.get(cursor)).status_code == 200

            deep = f"{path}?after={_cursor(deep_id)}"

            async def page_thousand() -> None:
                assert (await dash.http.get(deep)).status_code == 200

            for name, work in (
                ("whole page: page 1", page_one),
                ("whole page: page 2", page_two),
                ("whole page: page 1,000", page_thousand),
            ):
                median, p95 = await _time(work)
                results.append((name, median, p95))
    finally:
        await services.close()
    return results


def _cursor(row_id: int) -> str:
    import base64

    import orjson

    return base64.urlsafe_b64encode(orjson.dumps([row_id, row_id])).decode().rstrip("=")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    table: list[str] = []
    for name in args.databases.split(","):
        if name == "sqlite":
            url = f"sqlite:///{Path(tempfile.mkdtemp(prefix='lgbench')) / 'bench.db'}"
            migrate.upgrade(url)
        else:
            url = databases.create_postgres_database("lgbench_dashboard")
        print(f"{name}: filling {args.keys:,} keys and measuring", file=sys.stderr)
        for case, median, p95 in asyncio.run(_measure(url, args.keys)):
            table.append(f"| {name} | {case} | {median:.1f} | {p95:.1f} |")
            print(table[-1], file=sys.stderr)
    OUT.write_text(
        "# Dashboard list benchmarks\n\n"
        "Written by `bench/dashboard_lists.py`. The Licenses list of one application holding "
        f"{args.keys:,} keys (30% used, 2% banned, three levels), {PAGE} rows a page, measured "
        f"in one process without a network: each figure is the median and 95th percentile of {RUNS} "
        'runs after one warm-up, in milliseconds of server time. "Whole page" is the signed-in '
        "request through the ASGI application: session, queries, count and template.\n\n"
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        "shared with other work while measured.\n\n"
        "| database | what | median ms | p95 ms |\n|---|---|---|---|\n" + "\n".join(table) + "\n"
    )
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
