"""How long the dashboard's Licenses list takes with 1,000,000 keys, its Users list with
1,000,000 users, its User variables list with 1,000,000 variables and the application's overview
over those keys and users, its Logs page with 1,000,000 client log lines, and its Sessions page
with 1,000,000 users' sessions (bench/seed.py), on SQLite and PostgreSQL, and writes
docs/benchmarks-dashboard.md (a run of some lists keeps the others' rows).

Server time only: the list's queries through the domain, and the whole page (routing, session,
queries, template) through the ASGI application in-process, without a network. Page 1 and page
1,000 are measured alike, since keyset paging should make them cost the same.

    .venv/bin/python bench/dashboard_lists.py                    # both databases, both lists
    .venv/bin/python bench/dashboard_lists.py --keys 100000 --users 100000 --databases sqlite
    .venv/bin/python bench/dashboard_lists.py --lists users
    .venv/bin/python bench/dashboard_lists.py --lists uservars --variables 1000000
    .venv/bin/python bench/dashboard_lists.py --lists overview --databases sqlite
    .venv/bin/python bench/dashboard_lists.py --lists logs --logs 1000000
    .venv/bin/python bench/dashboard_lists.py --lists sessions --sessions 1000000
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import secrets
import shutil
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
from tests.web.pages import PASSWORD, Shop, browser, make_shop  # noqa: E402

from bench import seed as seeding  # noqa: E402
from licensegate.clock import SystemClock  # noqa: E402
from licensegate.config import Settings  # noqa: E402
from licensegate.domain import licenses, logs, overview, sessions, users, uservars  # noqa: E402
from licensegate.domain.licenses import KeyQuery  # noqa: E402
from licensegate.domain.paging import PageRequest, Position  # noqa: E402
from licensegate.domain.permissions import Scope  # noqa: E402
from licensegate.services import Services  # noqa: E402
from licensegate.store import migrate  # noqa: E402
from licensegate.store.users import UserQuery  # noqa: E402

PAGE = 50
RUNS = 30
OUT = ROOT / "docs" / "benchmarks-dashboard.md"


def _rows(app_id: int, start: int, count: int, total: int, now: int) -> list[tuple[Any, ...]]:
    """Keys `start` to `start + count` of `total`, one a second up to `now` in id order."""
    rows = []
    for i in range(start, start + count):
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
                now - (total - i),
                now - (total - i) + 60 if used else None,
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


def _analyze(conn: sqlite3.Connection) -> None:
    """Statistics for the planner once the rows are in, and the connection closed."""
    conn.execute("ANALYZE")
    conn.commit()
    conn.close()


RowMaker = Callable[[int, int, int, int, int], list[tuple[Any, ...]]]  # app, start, count, total, now


async def _fill(
    url: str,
    app_id: int,
    count: int,
    table: str = "license_keys",
    columns: tuple[str, ...] = COLUMNS,
    make: RowMaker = _rows,
) -> None:
    """`count` rows of `table` made by `make` in batches (keys by default), then the statistics."""
    now = int(time.time())
    batch = 100_000
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        for start in range(0, count, batch):
            conn.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                make(app_id, start, min(batch, count - start), count, now),
            )
            conn.commit()
        _analyze(conn)
        return
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        for start in range(0, count, batch):
            await conn.copy_records_to_table(
                table, records=make(app_id, start, min(batch, count - start), count, now), columns=columns
            )
        await conn.execute(f"VACUUM ANALYZE {table}")
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


Result = tuple[str, float, float]  # a case's name, median and 95th percentile in ms
# Substrings of the case names to run (--cases); empty = every case.
SELECTED: list[str] = []


def _wanted(name: str) -> bool:
    return not SELECTED or any(part in name for part in SELECTED)


async def _timed(cases: list[tuple[str, Callable[[], Awaitable[Any]]]]) -> list[Result]:
    results = []
    for name, work in cases:
        if _wanted(name):
            median, p95 = await _time(work)
            results.append((name, median, p95))
    return results


async def _whole_pages(
    services: Services, username: str, path: str, pages: Callable[[str], list[tuple[str, str]]]
) -> list[Result]:
    """Signed in as `username`, the list at `path` is opened once; then each (case, URL) that
    `pages` names from that first page's HTML is timed as a whole request."""
    async with browser(services) as dash:
        await dash.sign_in(username, PASSWORD)
        first = await dash.get(path)
        assert first.status_code == 200, first.status_code

        async def fetch(url: str) -> None:
            assert (await dash.http.get(url)).status_code == 200

        return await _timed([(name, functools.partial(fetch, url)) for name, url in pages(first.text)])


async def _licenses(services: Services, shop: Shop, url: str, count: int) -> list[tuple[str, float, float]]:
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
        *_key_filters(browse, db, shop.app_id, deep_id, count),
    ]
    path = f"/dashboard/apps/{shop.app_id}/licenses"

    def pages(first: str) -> list[tuple[str, str]]:
        after = first.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0].replace("&amp;", "&")
        return [
            ("whole page: page 1", path),
            ("whole page: page 2", after),
            ("whole page: page 1,000", f"{path}?after={_cursor(deep_id)}"),
            ("whole page: note contains (11% match)", f"{path}?note=batch+5"),
            ("whole page: note contains (1% match, the oldest keys)", f"{path}?note=batch+0"),
        ]

    return await _timed(cases) + await _whole_pages(services, "bench", path, pages)


def _key_filters(
    browse: Callable[[KeyQuery, PageRequest], Awaitable[None]], db: Any, app_id: int, deep_id: int, count: int
) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
    """The Licenses list's other sort order and its filters, the common and the rare (a filter
    matching few rows is the one that could read the whole table to fill a page)."""
    now = int(time.time())
    newest = PageRequest("created", True, PAGE)
    oldest_day = (now - count, now - count + 86400)  # the first keys seeded (a tenth at 1,000,000)
    scope = Scope(app_id)

    def case(name: str, query: KeyQuery, request: PageRequest = newest) -> tuple[str, Callable[[], Any]]:
        return name, functools.partial(browse, query, request)

    def counted(name: str, query: KeyQuery) -> tuple[str, Callable[[], Any]]:
        return name, functools.partial(licenses.count_matching, db, scope, query)

    rare_note = KeyQuery(note="no such note")
    old = KeyQuery(created_from=oldest_day[0], created_to=oldest_day[1])
    return [
        case("query: page 1 by level", KeyQuery(), PageRequest("level", False, PAGE)),
        case(
            "query: page 1,000 by level",
            KeyQuery(),
            PageRequest("level", False, PAGE, Position("2", deep_id)),
        ),
        case("query: page 1, level 2", KeyQuery(level="2")),
        case("query: page 1, banned", KeyQuery(status="banned")),
        case("query: page 1, banned, by key", KeyQuery(status="banned"), PageRequest("key", False, PAGE)),
        case("query: page 1, note contains (11% match)", KeyQuery(note="batch 5")),
        case("query: page 1, note contains (none match)", rare_note),
        case("query: page 1, note contains (1% match, the oldest keys)", KeyQuery(note="batch 0")),
        case(
            "query: page 1 by key, note contains (1% match)",
            KeyQuery(note="batch 0"),
            PageRequest("key", False, PAGE),
        ),
        counted("query: count, note contains (1% match)", KeyQuery(note="batch 0")),
        counted("query: count, note contains (none match)", rare_note),
        case("query: page 1, generated by (none match)", KeyQuery(generated_by="Dashboard")),
        case("query: page 1, created in the last hour", KeyQuery(created_from=now - 3600)),
        case("query: page 1, created on the oldest day", old),
        counted("query: count, created on the oldest day", old),
        case("query: page 1, used in the last hour", KeyQuery(used_from=now - 3600)),
        case(
            "query: page 1, expiring in 30 days (none)",
            KeyQuery(expires_from=now, expires_to=now + 30 * 86400),
        ),
        case("query: page 1, search a user's name", KeyQuery(search="user12345")),
    ]


USER_COLUMNS = (
    "id",
    "app_id",
    "username",
    "banned_reason",
    "created_at",
    "last_login_at",
    "last_ip",
    "created_by",
    "hwid_lock",
)


def _user_rows(
    app_id: int, sub_id: int, first_id: int, start: int, count: int, total: int, now: int
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """A batch of users (2% banned, 60% signed in once with an address and an HWID), one grant
    each (a quarter of them expired, one in twenty paused)."""
    people, grants, hwids = [], [], []
    for i in range(start, start + count):
        user_id = first_id + i
        signed_in = i % 10 < 6
        created = now - (total - i)
        people.append(
            (
                user_id,
                app_id,
                f"user{i:07}",
                "chargeback" if i % 50 == 0 else None,
                created,
                created + 60 if signed_in else None,
                f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}" if signed_in else None,
                "SellerAPI",
                1,
            )
        )
        expires = now - 86400 if i % 4 == 0 else now + 30 * 86400
        grants.append((user_id, sub_id, expires, now if i % 20 == 1 else None, created))
        if signed_in:
            hwids.append((user_id, f"HWID-{i:07}-{secrets.token_hex(4)}", created + 60))
    return people, grants, hwids


GRANT_COLUMNS = ("user_id", "subscription_id", "expires_at", "paused_at", "created_at")
HWID_COLUMNS = ("user_id", "hwid", "created_at")


async def _fill_users(url: str, app_id: int, count: int) -> None:
    now = int(time.time())
    batch = 100_000
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        sub_id = conn.execute("SELECT id FROM subscriptions WHERE app_id = ?", (app_id,)).fetchone()[0]
        first_id = (conn.execute("SELECT COALESCE(MAX(id), 0) FROM users").fetchone()[0] or 0) + 1
        for start in range(0, count, batch):
            people, grants, hwids = _user_rows(
                app_id, sub_id, first_id, start, min(batch, count - start), count, now
            )
            for table, columns, rows in (
                ("users", USER_COLUMNS, people),
                ("user_subscriptions", GRANT_COLUMNS, grants),
                ("user_hwids", HWID_COLUMNS, hwids),
            ):
                conn.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                    rows,
                )
            conn.commit()
        _analyze(conn)
        return
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        sub_id = await conn.fetchval("SELECT id FROM subscriptions WHERE app_id = $1", app_id)
        first_id = (await conn.fetchval("SELECT COALESCE(MAX(id), 0) FROM users")) + 1_000_000_000
        for start in range(0, count, batch):
            people, grants, hwids = _user_rows(
                app_id, sub_id, first_id, start, min(batch, count - start), count, now
            )
            for table, columns, rows in (
                ("users", USER_COLUMNS, people),
                ("user_subscriptions", GRANT_COLUMNS, grants),
                ("user_hwids", HWID_COLUMNS, hwids),
            ):
                await conn.copy_records_to_table(table, records=rows, columns=columns)
        await conn.execute("VACUUM ANALYZE users")
        await conn.execute("VACUUM ANALYZE user_subscriptions")
        await conn.execute("VACUUM ANALYZE user_hwids")
    finally:
        await conn.close()


async def _users(services: Services, shop: Shop, url: str, count: int) -> list[tuple[str, float, float]]:
    await _fill_users(url, shop.app_id, count)
    db, now, scope = services.db, int(time.time()), Scope(shop.app_id)
    top = await db.fetch_value("SELECT MAX(id) FROM users WHERE app_id = ?", shop.app_id)
    deep_id = top - min(PAGE * 1000, count // 2)  # page 1,000 (or the middle of a smaller list)
    deep = await db.fetch_one("SELECT username, last_ip FROM users WHERE id = ?", deep_id)
    assert deep is not None
    deep_name = deep["username"]
    signed_in = await db.fetch_one(
        "SELECT u.last_ip, h.hwid FROM users u JOIN user_hwids h ON h.user_id = u.id "
        "WHERE u.app_id = ? AND u.last_ip IS NOT NULL ORDER BY u.id DESC LIMIT 1 OFFSET ?",
        shop.app_id,
        min(50_000, count // 4),
    )
    assert signed_in is not None
    everyone = UserQuery(now=now)

    async def browse(query: UserQuery, request: PageRequest) -> None:
        await users.browse(db, scope, query, request)

    newest = PageRequest("created", True, PAGE)
    cases: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("users query: page 1, newest first", lambda: browse(everyone, newest)),
        (
            "users query: page 1,000, newest first",
            lambda: browse(everyone, PageRequest("created", True, PAGE, Position(deep_id, deep_id))),
        ),
        ("users query: page 1 by username", lambda: browse(everyone, PageRequest("username", False, PAGE))),
        (
            "users query: page 1,000 by username",
            lambda: browse(everyone, PageRequest("username", False, PAGE, Position(deep_name, deep_id))),
        ),
        ("users query: page 1, banned", lambda: browse(UserQuery(now=now, status="banned"), newest)),
        ("users query: page 1, active", lambda: browse(UserQuery(now=now, status="active"), newest)),
        ("users query: page 1, expired", lambda: browse(UserQuery(now=now, status="expired"), newest)),
        ("users query: page 1, paused", lambda: browse(UserQuery(now=now, status="paused"), newest)),
        ("users query: page 1, HWID set", lambda: browse(UserQuery(now=now, hwid="set"), newest)),
        (
            "users query: search a whole username",
            lambda: browse(UserQuery(now=now, search=deep_name), newest),
        ),
        (
            "users query: search a username prefix (11 match)",
            lambda: browse(UserQuery(now=now, search=deep_name[:-1]), newest),
        ),
        (
            "users query: search an HWID",
            lambda: browse(UserQuery(now=now, search=signed_in["hwid"]), newest),
        ),
        (
            "users query: search an IP",
            lambda: browse(UserQuery(now=now, search=signed_in["last_ip"]), newest),
        ),
        ("users query: count (capped at 10,000)", lambda: users.count_matching(db, scope, everyone)),
        *_user_filters(browse, db, shop.app_id, now, count),
    ]
    path = f"/dashboard/apps/{shop.app_id}/users"
    whole = [
        ("users whole page: page 1", path),
        ("users whole page: page 1,000", f"{path}?after={_cursor(deep_id)}"),
        ("users whole page: search a username", f"{path}?q={deep_name}"),
    ]
    return await _timed(cases) + await _whole_pages(services, "bench", path, lambda _first: whole)


def _user_filters(
    browse: Callable[[UserQuery, PageRequest], Awaitable[None]], db: Any, app_id: int, now: int, count: int
) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
    """The Users list's other filters and sort orders, the common and the rare."""
    newest = PageRequest("created", True, PAGE)
    by_name = PageRequest("username", False, PAGE)
    oldest_day = (now - count, now - count + 86400)

    def case(name: str, query: UserQuery, request: PageRequest = newest) -> tuple[str, Callable[[], Any]]:
        return name, functools.partial(browse, query, request)

    old = UserQuery(now=now, created_from=oldest_day[0], created_to=oldest_day[1])
    return [
        case("users query: page 1 by username, banned", UserQuery(now=now, status="banned"), by_name),
        case("users query: page 1 by username, paused", UserQuery(now=now, status="paused"), by_name),
        case("users query: page 1, no HWID", UserQuery(now=now, hwid="none")),
        case("users query: page 1, created on the oldest day", old),
        (
            "users query: count, created on the oldest day",
            functools.partial(users.count_matching, db, Scope(app_id), old),
        ),
        case(
            "users query: page 1, signed in during the last hour", UserQuery(now=now, login_from=now - 3600)
        ),
        case(
            "users query: page 1, expiring in the next 40 days",
            UserQuery(now=now, expires_from=now, expires_to=now + 40 * 86400),
        ),
        case(
            "users query: page 1, expired yesterday",
            UserQuery(now=now, expires_from=now - 2 * 86400, expires_to=now),
        ),
    ]


VAR_NAMES = ("plan", "theme", "discord", "motd", "seat", "region", "hwid_note", "beta", "lang", "tier")
VAR_COLUMNS = ("app_id", "user_id", "name", "value", "read_only", "created_at", "updated_at")


async def _fill_vars(url: str, app_id: int, count: int) -> None:
    """`count` user variables: ten names over count/10 users (made by `_fill_users`), values that
    share prefixes the way real ones do (plan names, versions, ids)."""
    await _fill_users(url, app_id, max(1, count // len(VAR_NAMES)))
    now = int(time.time())

    def rows(user_ids: list[int]) -> list[tuple[Any, ...]]:
        return [
            (app_id, user_id, name, f"{name}-{user_id % 97}-{secrets.token_hex(6)}", j % 3 == 0, now, now)
            for user_id in user_ids
            for j, name in enumerate(VAR_NAMES)
        ]

    batch = 10_000
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        ids = [row[0] for row in conn.execute("SELECT id FROM users WHERE app_id = ? ORDER BY id", (app_id,))]
        for start in range(0, len(ids), batch):
            conn.executemany(
                f"INSERT INTO user_vars ({', '.join(VAR_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(VAR_COLUMNS))})",
                [(*row[:4], int(row[4]), *row[5:]) for row in rows(ids[start : start + batch])],
            )
            conn.commit()
        _analyze(conn)
        return
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        ids = [
            row[0] for row in await conn.fetch("SELECT id FROM users WHERE app_id = $1 ORDER BY id", app_id)
        ]
        for start in range(0, len(ids), batch):
            records = [(*row[:4], int(row[4]), *row[5:]) for row in rows(ids[start : start + batch])]
            await conn.copy_records_to_table("user_vars", records=records, columns=VAR_COLUMNS)
        await conn.execute("VACUUM ANALYZE user_vars")
    finally:
        await conn.close()


async def _uservars(services: Services, shop: Shop, url: str, count: int) -> list[tuple[str, float, float]]:
    await _fill_vars(url, shop.app_id, count)
    db = services.db
    top = await db.fetch_value("SELECT MAX(id) FROM user_vars WHERE app_id = ?", shop.app_id)
    deep_id = top - min(PAGE * 1000, count // 2)
    deep = await db.fetch_one(
        "SELECT v.value, u.username FROM user_vars v JOIN users u ON u.id = v.user_id WHERE v.id = ?", deep_id
    )
    assert deep is not None

    async def browse(request: PageRequest, **search: str | None) -> None:
        query = {"username": None, "name": None, "value_prefix": None, **search}
        await uservars.browse(db, shop.app_id, request=request, **query)

    newest = PageRequest("created", True, PAGE)
    cases: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("user variables query: page 1, newest first", lambda: browse(newest)),
        (
            "user variables query: page 1,000, newest first",
            lambda: browse(PageRequest("created", True, PAGE, Position(deep_id, deep_id))),
        ),
        ("user variables query: one name, page 1", lambda: browse(newest, name="motd")),
        (
            "user variables query: one name, page 1,000",
            lambda: browse(PageRequest("created", True, PAGE, Position(deep_id, deep_id)), name="motd"),
        ),
        ("user variables query: one user", lambda: browse(newest, username=deep["username"])),
        (
            "user variables query: value prefix (one match)",
            lambda: browse(newest, value_prefix=deep["value"]),
        ),
        (
            "user variables query: value prefix (about 1% match)",
            lambda: browse(
                newest, value_prefix=deep["value"].split("-")[0] + "-" + deep["value"].split("-")[1] + "-"
            ),
        ),
    ]
    path = f"/dashboard/apps/{shop.app_id}/user-variables"
    whole = [
        (
            f"subscriptions whole page ({count // len(VAR_NAMES):,} users)",
            f"/dashboard/apps/{shop.app_id}/subscriptions",
        ),
        ("user variables whole page: page 1", path),
        ("user variables whole page: page 1,000", f"{path}?after={_cursor(deep_id)}"),
        ("user variables whole page: value prefix", f"{path}?value={deep['value'][:12]}"),
    ]
    return await _timed(cases) + await _whole_pages(services, shop.owner.username, path, lambda _first: whole)


LOG_COLUMNS = ("app_id", "credential", "pcuser", "message", "ip", "created_at")
LOG_DAYS = 30  # the default retention: what an application holds at most
RARE = "Crash 0x7f3a"  # in ten lines spread over the month


def _log_rows(app_id: int, start: int, count: int, total: int, now: int) -> list[tuple[Any, ...]]:
    """Lines `start` to `start + count` of `total`, spread evenly over the last LOG_DAYS days:
    20,000 users (one line in twenty before any login), 20,000 addresses, a heartbeat in five."""
    span = LOG_DAYS * 86400
    rows = []
    for i in range(start, start + count):
        kind = ("started", "heartbeat", "loaded module core", "checked the licence", "closed")[i % 5]
        message = f"{RARE} in module {i}" if i % (total // 10) == 7 else f"{kind} #{i}"
        credential = None if i % 20 == 0 else f"user{i * 7919 % 20000}"
        address = f"10.{i * 31 % 40}.{i * 17 % 250}.{i * 13 % 250}"
        rows.append((app_id, credential, f"PC-{i % 5000}", message, address, now - span + i * span // total))
    return rows


async def _logs(services: Services, shop: Shop, url: str, count: int) -> list[tuple[str, float, float]]:
    """The Logs page (the Tamper logs page runs the same queries on its own table)."""
    await _fill(url, shop.app_id, count, "client_logs", LOG_COLUMNS, _log_rows)
    db = services.db
    deep = await db.fetch_one(
        "SELECT id, created_at, credential, ip FROM client_logs WHERE app_id = ? AND credential IS NOT NULL "
        "ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?",
        shop.app_id,
        min(PAGE * 1000, count // 2),
    )
    assert deep is not None
    week = deep["created_at"] - 7 * 86400
    table = logs.CLIENT_LOGS

    newest = PageRequest("created_at", True, PAGE)

    async def browse(where: logs.LogFilter, request: PageRequest = newest) -> None:
        await logs.browse(db, table, shop.app_id, where, request)

    deep_page = PageRequest("created_at", True, PAGE, Position(deep["created_at"], deep["id"]))
    day = logs.LogFilter(since=week, until=week + 86399)
    cases: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("logs query: page 1, newest first", lambda: browse(logs.LogFilter())),
        ("logs query: page 1,000, newest first", lambda: browse(logs.LogFilter(), deep_page)),
        (
            "logs query: page 1, oldest first",
            lambda: browse(logs.LogFilter(), PageRequest("created_at", False, PAGE)),
        ),
        ("logs query: one user", lambda: browse(logs.LogFilter(credential=deep["credential"]))),
        ("logs query: one address", lambda: browse(logs.LogFilter(ip=deep["ip"]))),
        ("logs query: one day a week ago", lambda: browse(day)),
        (
            "logs query: one user over a week",
            lambda: browse(
                logs.LogFilter(credential=deep["credential"], since=week, until=deep["created_at"])
            ),
        ),
        ("logs query: search, 20% match", lambda: browse(logs.LogFilter(search="heartbeat"))),
        ("logs query: search, 10 matches", lambda: browse(logs.LogFilter(search=RARE))),
        (
            "logs query: search, 10 matches, one day",
            lambda: browse(logs.LogFilter(search=RARE, since=week, until=week + 86399)),
        ),
        ("logs query: count (capped at 10,000)", lambda: logs.count(db, table, shop.app_id)),
    ]
    path = f"/dashboard/apps/{shop.app_id}/logs"
    day_text = time.strftime("%Y-%m-%d", time.gmtime(week))
    whole = [
        ("logs whole page: page 1", path),
        ("logs whole page: page 1,000", f"{path}?after={_cursor(deep['id'], deep['created_at'])}"),
        ("logs whole page: one user", f"{path}?user={deep['credential']}"),
        ("logs whole page: one address", f"{path}?ip={deep['ip']}"),
        ("logs whole page: one day", f"{path}?from={day_text}&to={day_text}"),
        ("logs whole page: search, 20% match", f"{path}?search=heartbeat"),
        ("logs whole page: search, 10 matches", f"{path}?search={RARE.replace(' ', '+')}"),
    ]
    return await _timed(cases) + await _whole_pages(services, shop.owner.username, path, lambda _first: whole)


async def _sessions(services: Services, shop: Shop, url: str, count: int) -> list[tuple[str, float, float]]:
    """The Sessions page over `count` users each with a session logged in (and one in five more
    open, not logged in), as bench/seed.py writes them."""
    seeded = await asyncio.to_thread(seeding.seed, url, services.settings.data_dir, shop.app_id, count)
    print(f"  seeded {count:,} users and their sessions in {seeded.seconds:.0f} s", file=sys.stderr)
    db, now = services.db, int(time.time())
    deep = await db.fetch_one(
        "SELECT id, created_at, ip FROM sessions WHERE app_id = ? ORDER BY created_at DESC, id DESC "
        "LIMIT 1 OFFSET ?",
        shop.app_id,
        min(PAGE * 1000, count // 2),
    )
    assert deep is not None
    one_user = await db.fetch_value(
        "SELECT username FROM users WHERE app_id = ? ORDER BY id LIMIT 1 OFFSET ?", shop.app_id, count // 3
    )
    newest = PageRequest("created_at", True, PAGE)
    deep_page = PageRequest("created_at", True, PAGE, Position(deep["created_at"], deep["id"]))

    async def browse(state: str = "", request: PageRequest = newest, **search: str | None) -> None:
        query: dict[str, str | None] = {"username": None, "ip": None, **search}
        await sessions.browse(db, shop.app_id, now=now, state=state, request=request, **query)

    cases: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
        ("sessions query: page 1, open, newest first", lambda: browse()),
        ("sessions query: page 1,000, open, newest first", lambda: browse(request=deep_page)),
        (
            "sessions query: page 1, oldest first",
            lambda: browse(request=PageRequest("created_at", False, PAGE)),
        ),
        ("sessions query: page 1, logged in", lambda: browse("online")),
        ("sessions query: page 1, not logged in", lambda: browse("waiting")),
        ("sessions query: page 1, open and expired", lambda: browse("all")),
        ("sessions query: one user", lambda: browse(username=one_user)),
        ("sessions query: one address", lambda: browse(ip=deep["ip"])),
        ("sessions query: users online (names)", lambda: sessions.online_names(db, shop.app_id, now)),
        ("sessions query: users online (count)", lambda: overview.online(db, shop.app_id, now)),
    ]
    path = f"/dashboard/apps/{shop.app_id}/sessions"
    whole = [
        ("sessions whole page: page 1", path),
        ("sessions whole page: page 1,000", f"{path}?after={_cursor(deep['id'], deep['created_at'])}"),
        ("sessions whole page: logged in", f"{path}?state=online"),
        ("sessions whole page: one user", f"{path}?user={one_user}"),
        ("sessions whole page: one address", f"{path}?ip={deep['ip']}"),
    ]
    return await _timed(cases) + await _whole_pages(services, shop.owner.username, path, lambda _first: whole)


async def _overview(
    services: Services, shop: Shop, url: str, keys: int, people: int, filled: list[str]
) -> list[tuple[str, float, float]]:
    """The application's overview (every chart, users online) over the keys and users the other
    lists filled, or as many filled here."""
    if "licenses" not in filled:
        await _fill(url, shop.app_id, keys)
    if "users" not in filled:
        await _fill_users(url, shop.app_id, people)
    async with browser(services) as dash:
        await dash.sign_in("bench", PASSWORD)
        path = f"/dashboard/apps/{shop.app_id}/"
        # The first view of a large application counts its keys and users inline, once, and keeps
        # the result as its snapshot; the views after it show that snapshot.
        started = time.perf_counter()
        assert (await dash.get(path)).status_code == 200
        first = (time.perf_counter() - started) * 1000
        assert await services.db.fetch_value(
            "SELECT COUNT(*) FROM overview_snapshots WHERE app_id = ?", shop.app_id
        )

        async def fetch() -> None:
            assert (await dash.http.get(path)).status_code == 200

        median, p95 = await _time(fetch)

    async def count() -> None:  # as the background refresh counts: on a connection apart
        async with services.db.reading_apart() as reader:
            await overview.count_statuses(reader, shop.app_id, services.clock.now())

    counted, counted_p95 = await _time(count)
    return [
        ("overview whole page: every chart", median, p95),
        ("overview whole page: first view, no snapshot yet (one run)", first, first),
        ("overview background count: keys, users by status, expiries", counted, counted_p95),
    ]


async def _measure(
    url: str, keys: int, people: int, variables: int, lists: list[str], lines: int = 0, sessions: int = 0
) -> list[tuple[str, float, float]]:
    folder = Path(tempfile.mkdtemp(prefix="lgbench"))
    settings = Settings(data_dir=folder, database_url=url, argon2_time_cost=1, argon2_memory_kib=64)
    services = await Services.open(settings, clock=SystemClock())
    results: list[tuple[str, float, float]] = []
    try:
        shop = await make_shop(services, "bench", "Bench")
        if "licenses" in lists:
            results += await _licenses(services, shop, url, keys)
        if "users" in lists:
            results += await _users(services, shop, url, people)
        if "overview" in lists:
            results += await _overview(services, shop, url, keys, people, lists)
        if "uservars" in lists:
            results += await _uservars(
                services, await make_shop(services, "varbench", "Var bench"), url, variables
            )
        if "logs" in lists:
            results += await _logs(services, await make_shop(services, "logbench", "Log bench"), url, lines)
        if "sessions" in lists:
            shop = await make_shop(services, "sessionbench", "Session bench")
            results += await _sessions(services, shop, url, sessions)
    finally:
        await services.close()
        shutil.rmtree(folder, ignore_errors=True)
    return results


def _cursor(row_id: int, value: Any = None) -> str:
    """A page link's position after `row_id` (sorted by `value`; by default the id itself)."""
    import base64

    import orjson

    raw = orjson.dumps([row_id if value is None else value, row_id])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


DESCRIPTIONS = {
    "licenses": "the Licenses list of one application holding {keys:,} keys (30% used, 2% banned, "
    "three levels)",
    "users": "its Users list with {users:,} users (2% banned, a quarter expired, one in twenty "
    "paused, 60% with an HWID and an address)",
    "uservars": "the User variables list of an application holding {variables:,} variables (ten "
    "names a user)",
    "logs": "the Logs page of an application holding {logs:,} client log lines over 30 days "
    "(20,000 users and addresses; the Tamper logs page runs the same queries on its own table)",
    "sessions": "the Sessions page of an application with {sessions:,} users, each with a session "
    "logged in (one in ten of them not: their time ran out) and one in five more open but not logged "
    "in (`bench/seed.py`)",
    "overview": "the overview of the application holding the keys and users above (every chart and "
    "users online; at this size keys and users by status and the expiries come from the snapshot "
    "its first view counted, and the background count is what the workers' refresh does every few "
    "minutes while the overview is looked at)",
}


def _list_of(case: str) -> str:
    """Which list a row of the table measures, by how its case is named."""
    if case.startswith("user variables"):
        return "uservars"
    if case.startswith("overview"):
        return "overview"
    if case.startswith("logs "):
        return "logs"
    if case.startswith("sessions "):
        return "sessions"
    return "users" if case.startswith("users ") else "licenses"


def _first_table() -> tuple[list[str], int, int]:
    """The current document's lines and where its first table (the figures) starts and ends:
    the notes after it may hold tables of their own."""
    lines = OUT.read_text().splitlines() if OUT.exists() else []
    start = next((i for i, line in enumerate(lines) if line.startswith("| database")), len(lines))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines, start, end


def _kept_rows(measured: set[tuple[str, str]]) -> list[str]:
    """The rows of the current document this run does not measure again (a run of some lists
    keeps the others' figures)."""
    lines, start, end = _first_table()
    kept = []
    for line in lines[start + 2 : end]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 4 and (cells[0], cells[1]) not in measured:
            kept.append(line)
    return kept


def _kept_notes() -> str:
    """What the current document says after its table (the analysis, written by hand), kept."""
    lines, _start, end = _first_table()
    notes = "\n".join(lines[end:]).strip()
    return f"\n{notes}\n" if notes else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--variables", type=int, default=1_000_000)
    parser.add_argument("--logs", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=1_000_000, help="users, each with a session")
    parser.add_argument("--lists", default="licenses,users,uservars")
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument(
        "--cases", default="", help="only the cases whose names contain one of these (|-separated)"
    )
    args = parser.parse_args()
    SELECTED.extend(part for part in args.cases.split("|") if part)
    lists = args.lists.split(",")
    table: list[str] = []
    measured: set[tuple[str, str]] = set()
    for name in args.databases.split(","):
        scratch = Path(tempfile.mkdtemp(prefix="lgbench"))  # the SQLite database's folder
        if name == "sqlite":
            url = f"sqlite:///{scratch / 'bench.db'}"
            migrate.upgrade(url)
        else:
            # One database per run: two runs at once on the shared server must not drop each other's.
            url = databases.create_postgres_database(f"lgbench_dashboard_{os.getpid()}")
        print(f"{name}: filling {', '.join(lists)} and measuring", file=sys.stderr)
        try:
            measured_rows = asyncio.run(
                _measure(url, args.keys, args.users, args.variables, lists, args.logs, args.sessions)
            )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)  # gigabytes at a million rows
            if name != "sqlite":
                databases.drop_database(url.rpartition("/")[2])
        for case, median, p95 in measured_rows:
            table.append(f"| {name} | {case} | {median:.1f} | {p95:.1f} |")
            measured.add((name, case))
            print(table[-1], file=sys.stderr)
    rows = sorted(_kept_rows(measured) + table, key=lambda row: row.split("|")[1].strip() != "sqlite")
    present = {_list_of(row.split("|")[2].strip()) for row in rows}
    described = "; ".join(text.format(**vars(args)) for name, text in DESCRIPTIONS.items() if name in present)
    OUT.write_text(
        "# Dashboard list benchmarks\n\n"
        f"Written by `bench/dashboard_lists.py`: {described}; {PAGE} rows a page, measured in one "
        f"process without a network: each figure is the median and 95th percentile of {RUNS} runs "
        'after one warm-up, in milliseconds of server time. "Whole page" is the signed-in request '
        "through the ASGI application: session, queries, count and template. A run of some lists "
        "(`--lists`) keeps the other lists' rows from the run before.\n\n"
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores shared with other work while measured (load average "
        f"{os.getloadavg()[2]:.1f} over the 15 minutes before the run ended).\n\n"
        "| database | what | median ms | p95 ms |\n|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n"
        + _kept_notes()
    )
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
