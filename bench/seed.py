"""Seeds an application with users, license keys and sessions straight into the database (not
through the API), in the shape the service itself writes them: what `bench/run.py --seed` and
`bench/dashboard_lists.py --lists sessions` measure on.

Each user is what the first use of a license key makes (`store.logins`): the key, used by the
user named after it; the user (created by `license`, HWID-locked, last login and address set);
the user's HWID; one grant of the application's level-1 subscription made by that key; a token
for the key and one for the user (found by their SHA-256, kept sealed with the deployment key);
and a session logged in as that user with that key and HWID. One user in ten has a grant that
ran out (their session is not logged in: the service ends those), and one session in five more
is open but not logged in (a program started, not signed in). Session ids are stored as their
digests, as `domain.sessions.start` stores them; keys as their text (a key is a long random
secret found by an index).

    .venv/bin/python bench/seed.py --database sqlite:////tmp/seed.db --users 1000000
    .venv/bin/python bench/seed.py --database postgresql://127.0.0.1/lgbench_seed --users 1000000

(run on a migrated database; the command creates an application `seed` owned by `seed`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from licensegate import ids  # noqa: E402
from licensegate.config import Settings  # noqa: E402
from licensegate.domain.tokens import SEALED  # noqa: E402
from licensegate.domain.users import fold  # noqa: E402
from licensegate.secretbox import SecretBox  # noqa: E402
from licensegate.services import open_secretbox  # noqa: E402
from licensegate.store.sqlite import writers_held  # noqa: E402
from licensegate.store.users import LICENSE_USER  # noqa: E402

BATCH = 50_000
DURATION = 30 * 86400  # a 30-day key
ALNUM = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Bytes 0-247 map evenly onto the 62 characters; 248-255 are dropped (no modulo bias).
_TO_ALNUM = bytes(ALNUM[b % len(ALNUM)] for b in range(256))
_BIASED = bytes(range(4 * len(ALNUM), 256))
EXPIRED_EVERY = 10  # one user in ten has no time left
WAITING_EVERY = 5  # one session more per five users is open but not logged in

USER_COLUMNS = (
    "id",
    "app_id",
    "username",
    "username_fold",
    "username_key",
    "created_at",
    "last_login_at",
    "last_ip",
    "created_by",
    "hwid_lock",
)
KEY_COLUMNS = (
    "id",
    "app_id",
    "key",
    "level",
    "duration",
    "status",
    "generated_by",
    "created_at",
    "used_at",
    "used_by_user_id",
    "used_by",
)
HWID_COLUMNS = ("id", "user_id", "hwid", "created_at")
GRANT_COLUMNS = ("id", "user_id", "subscription_id", "expires_at", "key_id", "created_at")
TOKEN_COLUMNS = (
    "id",
    "app_id",
    "token_hash",
    "token_sealed",
    "kind",
    "assigned",
    "user_id",
    "license_key_id",
    "created_at",
)
SESSION_COLUMNS = (
    "id",
    "app_id",
    "user_id",
    "credential",
    "validated",
    "created_at",
    "expires_at",
    "ip",
    "hwid",
)
# Parents first: each table's rows name rows of the tables before it.
TABLES = (
    ("users", USER_COLUMNS),
    ("license_keys", KEY_COLUMNS),
    ("user_hwids", HWID_COLUMNS),
    ("user_subscriptions", GRANT_COLUMNS),
    ("tokens", TOKEN_COLUMNS),
    ("sessions", SESSION_COLUMNS),
)
SERIAL = ("users", "license_keys", "user_hwids", "user_subscriptions", "tokens")


def random_keys(count: int) -> list[str]:
    """`count` keys of the default mask (six groups of six letters and digits), from the OS CSPRNG."""
    text = b""
    while len(text) < 36 * count:
        text += os.urandom(40 * count).translate(None, _BIASED).translate(_TO_ALNUM)
    keys = []
    for i in range(count):
        chunk = text[36 * i : 36 * i + 36].decode()
        keys.append("-".join(chunk[j : j + 6] for j in range(0, 36, 6)))
    return keys


@dataclass
class Application:
    """What seeding needs to know of the application: its id, level-1 subscription, session
    length and whether its usernames compare case-insensitively."""

    app_id: int
    subscription_id: int
    session_seconds: int
    case_insensitive: bool


@dataclass
class Seeded:
    """The logged-in sessions seeded with what a client holds: (session id, key, HWID)."""

    users: int
    seconds: float
    logged_in: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class _Batch:
    rows: dict[str, list[tuple[Any, ...]]]
    logged_in: list[tuple[str, str, str]]


def _batch(
    app: Application, box: SecretBox, first: dict[str, int], start: int, count: int, now: int
) -> _Batch:
    """Users `start` to `start + count` with everything each one has; `first`: each table's first id."""
    rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name, _columns in TABLES}
    logged_in: list[tuple[str, str, str]] = []
    keys = random_keys(count)
    half = app.session_seconds // 2  # every session open for at least half its length from now
    for n, key in enumerate(keys):
        i = start + n
        user_id, key_id = first["users"] + i, first["license_keys"] + i
        created = now - 86400 - (i % (20 * 86400))  # keys redeemed over the last three weeks
        ip = f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"
        hwid = f"S-1-5-21-{1_000_000_000 + i}-{2_000_000_000 + i % 7919}-{3_000_000_000 + i % 104729}-1001"
        name_key = fold(key) if app.case_insensitive else key
        expired = i % EXPIRED_EVERY == EXPIRED_EVERY - 1
        rows["users"].append(
            (user_id, app.app_id, key, fold(key), name_key, created, now - i % half, ip, LICENSE_USER, 1)
        )
        rows["license_keys"].append(
            (
                key_id,
                app.app_id,
                key,
                "1",
                DURATION,
                "used",
                "SellerAPI",
                created - 3600,
                created,
                user_id,
                key,
            )
        )
        rows["user_hwids"].append((first["user_hwids"] + i, user_id, hwid, created))
        expires = now - 86400 if expired else created + DURATION
        rows["user_subscriptions"].append(
            (first["user_subscriptions"] + i, user_id, app.subscription_id, expires, key_id, created)
        )
        for t, (kind, owner, key_ref) in enumerate((("license", None, key_id), ("user", user_id, None))):
            token = os.urandom(16).hex()
            rows["tokens"].append(
                (
                    first["tokens"] + 2 * i + t,
                    app.app_id,
                    ids.digest(token),
                    box.seal(token, SEALED),
                    kind,
                    key,
                    owner,
                    key_ref,
                    created,
                )
            )
        opened = now - i % half
        session = ids.session_id()
        if expired:
            rows["sessions"].append(
                (ids.digest(session), app.app_id, None, None, 0, opened, opened + half * 2, ip, None)
            )
        else:
            rows["sessions"].append(
                (ids.digest(session), app.app_id, user_id, key, 1, opened, opened + half * 2, ip, hwid)
            )
            logged_in.append((session, key, hwid))
        if i % WAITING_EVERY == 0:
            waiting = ids.digest(ids.session_id())
            rows["sessions"].append((waiting, app.app_id, None, None, 0, opened, opened + half * 2, ip, None))
    return _Batch(rows, logged_in)


def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def _seed_sqlite(path: str, app: Application, box: SecretBox, count: int, now: int, result: Seeded) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA cache_size = -262144")  # 256 MiB: the indexes grow in random order
        conn.execute("PRAGMA synchronous = OFF")  # a crash while seeding loses only the seed
        first = {
            table: conn.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}").fetchone()[0]
            for table in SERIAL
        }
        for start in range(0, count, BATCH):
            batch = _batch(app, box, first, start, min(BATCH, count - start), now)
            conn.execute("BEGIN IMMEDIATE")
            for table, columns in TABLES:
                conn.executemany(_insert_sql(table, columns), batch.rows[table])
            conn.execute("COMMIT")
            result.logged_in.extend(batch.logged_in)
        conn.execute("ANALYZE")
        # Copied into the database file now, not by the server's checkpointer during the first
        # measured round: a million users leave a log of about 760 MB, and copying it had held
        # `/healthz` at 2,400 req/s for a round.
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


async def _seed_postgres(
    url: str, app: Application, box: SecretBox, count: int, now: int, result: Seeded
) -> None:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        # The login-version triggers (migrations 0056, 0058) would bump each new user's row for its
        # HWID and grant, and announce it: rows a seed writes are read at whatever version they have.
        await conn.execute("SET session_replication_role = replica")
        first: dict[str, int] = {}
        for table in SERIAL:  # a block of ids taken from each sequence, so the server's inserts never collide
            sequence = f"pg_get_serial_sequence('{table}', 'id')"
            start_id = await conn.fetchval(f"SELECT nextval({sequence})")
            await conn.execute(f"SELECT setval({sequence}, $1::bigint)", start_id + 2 * count)
            first[table] = start_id
        for start in range(0, count, BATCH):
            batch = _batch(app, box, first, start, min(BATCH, count - start), now)
            async with conn.transaction():
                for table, columns in TABLES:
                    await conn.copy_records_to_table(table, records=batch.rows[table], columns=columns)
            result.logged_in.extend(batch.logged_in)
        for table, _columns in TABLES:
            await conn.execute(f"VACUUM ANALYZE {table}")
    finally:
        await conn.close()


async def _application(url: str, app_id: int) -> Application:
    query = (
        "SELECT a.id, s.id AS subscription_id, a.session_seconds, a.case_insensitive_usernames "
        "FROM apps a JOIN subscriptions s ON s.app_id = a.id AND s.level = '1' WHERE a.id = {} "
        "ORDER BY s.id LIMIT 1"
    )
    if url.startswith("sqlite"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        try:
            row = conn.execute(query.format("?"), (app_id,)).fetchone()
        finally:
            conn.close()
    else:
        import asyncpg

        pg = await asyncpg.connect(url)
        try:
            row = await pg.fetchrow(query.format("$1"), app_id)
        finally:
            await pg.close()
    if row is None:
        raise SystemExit(f"application {app_id} has no level-1 subscription to grant")
    return Application(int(row[0]), int(row[1]), int(row[2]), bool(row[3]))


def seed(url: str, data_dir: Path, app_id: int, count: int, *, now: int | None = None) -> Seeded:
    """`count` users of application `app_id`, each with a key, HWID, grant, tokens and session
    (see the module's description), in batches of big transactions; then the planner's statistics.
    `data_dir`: the service's data folder (its deployment key seals the tokens)."""
    started = time.perf_counter()
    box = open_secretbox(Settings(data_dir=data_dir, database_url=url))
    moment = int(time.time()) if now is None else now
    app = asyncio.run(_application(url, app_id))
    result = Seeded(count, 0.0)
    if url.startswith("sqlite"):
        _seed_sqlite(url.removeprefix("sqlite:///"), app, box, count, moment, result)
    else:
        asyncio.run(_seed_postgres(url, app, box, count, moment, result))
    result.seconds = time.perf_counter() - started
    return result


def hot_sample(seeded: Seeded, size: int) -> list[tuple[str, str, str]]:
    """`size` logged-in sessions spread over the whole seed (not its newest rows)."""
    return random.Random(24).sample(seeded.logged_in, min(size, len(seeded.logged_in)))


# What a run may add beyond the seed, children first (so a delete never waits on a reference).
RUN_TABLES = ("user_subscriptions", "user_hwids", "tokens", "license_keys", "users")


@dataclass(frozen=True)
class Watermark:
    """Where the seed ends: sessions opened from `moment` on, and rows of `RUN_TABLES` with ids
    above `last_ids`, were written after it."""

    moment: int
    last_ids: dict[str, int]


async def _on(
    url: str, statements: list[tuple[str, tuple[Any, ...]]], *, empty_log: bool = False
) -> list[int]:
    """Run each statement (`?` placeholders) in one transaction; the first column of each first row,
    or the rows a change touched. `empty_log`: then empty SQLite's write-ahead log."""
    found: list[int] = []
    if url.startswith("sqlite"):
        path = url.removeprefix("sqlite:///")
        conn = sqlite3.connect(path, timeout=60)
        try:
            with writers_held(path):
                with conn:
                    for sql, args in statements:
                        cursor = conn.execute(sql, args)
                        row = cursor.fetchone() if sql.startswith("SELECT") else None
                        found.append(int(row[0]) if row is not None else cursor.rowcount)
                if empty_log:
                    # The next run meets the log as the seed left it, empty: a rewind deletes
                    # tens of thousands of rows at a million users (120 MB of log), which the
                    # service's checkpointer would otherwise copy during the next run's first
                    # second (the service itself deletes in batches of 500).
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        return found
    import asyncpg

    from licensegate.store.postgres import to_postgres

    pg = await asyncpg.connect(url)
    try:
        async with pg.transaction():
            for sql, args in statements:
                if sql.startswith("SELECT"):
                    found.append(int(await pg.fetchval(to_postgres(sql), *args)))
                else:
                    status = await pg.execute(to_postgres(sql), *args)
                    found.append(int(status.rsplit(" ", 1)[1]))
    finally:
        await pg.close()
    return found


def watermark(url: str) -> Watermark:
    """The database as it is now; returns once the clock has passed the second it was taken in,
    so that every session opened after it is told apart by its start."""
    tops = asyncio.run(_on(url, [(f"SELECT COALESCE(MAX(id), 0) FROM {table}", ()) for table in RUN_TABLES]))
    moment = int(time.time()) + 1
    time.sleep(max(0.0, moment - time.time()))
    return Watermark(moment, dict(zip(RUN_TABLES, tops, strict=True)))


# pg_stat_activity's rows of the database's other connections that are running a statement or
# hold a transaction open: a server is idle when it has none (its LISTEN connections are idle).
_PG_BUSY = (
    "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid() AND state IS NOT NULL AND state <> 'idle'"
)


async def _settle(busy: Callable[[], Awaitable[bool]], still: float, most: float) -> bool:
    """Ask `busy` every 50 ms until it has said no for `still` seconds (True) or `most` seconds
    have passed (False)."""
    quiet_since = time.monotonic()
    deadline = quiet_since + most
    while time.monotonic() < deadline:
        if await busy():
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= still:
            return True
        await asyncio.sleep(0.05)
    return False


async def _quiet_sqlite(path: str, still: float, most: float) -> bool:
    conn = sqlite3.connect(path, timeout=60)
    try:
        # Moves whenever another connection commits.
        seen = conn.execute("PRAGMA data_version").fetchone()[0]

        async def committed() -> bool:
            nonlocal seen
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            moved, seen = version != seen, version
            return bool(moved)

        return await _settle(committed, still, most)
    finally:
        conn.close()


async def _quiet_postgres(url: str, still: float, most: float) -> bool:
    import asyncpg

    pg = await asyncpg.connect(url)
    try:

        async def running() -> bool:
            return bool(await pg.fetchval(_PG_BUSY))

        return await _settle(running, still, most)
    finally:
        await pg.close()


def quiet(url: str, still: float = 0.5, most: float = 15.0) -> bool:
    """Wait until nothing has written to the database (SQLite) or run a statement in it
    (PostgreSQL) for `still` seconds, at most `most` seconds: the requests wrk sent last are
    still served after it stops. Returns whether the database went quiet."""
    if url.startswith("sqlite"):
        return asyncio.run(_quiet_sqlite(url.removeprefix("sqlite:///"), still, most))
    return asyncio.run(_quiet_postgres(url, still, most))


def rewind(url: str, mark: Watermark) -> int:
    """Delete what was written after `mark` (the sessions a run opened, the keys, users, grants,
    HWIDs and tokens it made), so the next run meets the database as it was; the rows deleted.
    It waits for the requests still being served first (`quiet`): one served after the rewind
    would meet a key it deleted, a refused sign-in counted against the bench's address."""
    quiet(url)
    # By application, so that the (app_id, created_at, id) index finds them among a million.
    sessions = "DELETE FROM sessions WHERE app_id IN (SELECT id FROM apps) AND created_at >= ?"
    statements = [(sessions, (mark.moment,))]
    statements += [(f"DELETE FROM {table} WHERE id > ?", (mark.last_ids[table],)) for table in RUN_TABLES]
    # A request still running when `quiet` gave up (a first use holds its key's row) that
    # deadlocks with the deletes on PostgreSQL is undone, and the deletes are tried again; rows
    # such a request writes after them are deleted by the next rewind.
    for _attempt in range(9):
        try:
            return sum(asyncio.run(_on(url, statements, empty_log=True)))
        except Exception as error:
            if type(error).__name__ != "DeadlockDetectedError":
                raise
            time.sleep(1.0)
    return sum(asyncio.run(_on(url, statements, empty_log=True)))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", required=True, help="a migrated database's URL")
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--data-dir", type=Path, default=None, help="the service's data folder (its key)")
    args = parser.parse_args()
    from tests.live import create_app

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="lgseed-"))
    created = create_app(args.database, data_dir, "seed", "seed")
    app_id = app_id_of(args.database, created["ownerid"])
    seeded = seed(args.database, data_dir, app_id, args.users)
    print(
        f"seeded {seeded.users:,} users, keys and sessions in {seeded.seconds:.0f} s "
        f"(load average {os.getloadavg()[0]:.1f})",
        file=sys.stderr,
    )
    return 0


def app_id_of(url: str, ownerid: str) -> int:
    """The id of the application of owner `ownerid`."""
    query = "SELECT id FROM apps WHERE ownerid = {}"

    async def read() -> int:
        if url.startswith("sqlite"):
            conn = sqlite3.connect(url.removeprefix("sqlite:///"))
            try:
                return int(conn.execute(query.format("?"), (ownerid,)).fetchone()[0])
            finally:
                conn.close()
        import asyncpg

        pg = await asyncpg.connect(url)
        try:
            return int(await pg.fetchval(query.format("$1"), ownerid))
        finally:
            await pg.close()

    return asyncio.run(read())


if __name__ == "__main__":
    raise SystemExit(main())
