"""How long a change made on one node stays trusted on another in notify mode (PostgreSQL): the
cross-node staleness bound of a held session (domain/recheck.py, docs/design.md).

One connection commits a change of a user's login data (a ban, then its lifting: the user's
login version moves, and migration 0060's trigger announces it); a worker's `LoginNotify` on a
connection of its own listens, and the time is taken until it stops vouching for an entry of
that user. Both run in this process on one event loop with nothing else to do, as an idle
worker would; a busy worker hears it after the request it is running (its event loop's turn).
Prints the median, p99 and worst, from the change's statement being sent and from its commit
being answered.

    .venv/bin/python bench/login_notify.py [--changes 2000]
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

import asyncpg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import databases  # noqa: E402

from licensegate.invalidation import LoginNotify, SharedCounter  # noqa: E402
from licensegate.store.database import postgres_dsn  # noqa: E402

TOGGLE_BAN = "UPDATE users SET banned_reason = CASE WHEN banned_reason IS NULL THEN 'bench' END WHERE id = $1"


async def _user(conn: asyncpg.Connection) -> int:
    """An account, an application and a user of it."""
    account = await conn.fetchval(
        "INSERT INTO accounts (username, role, ownerid, disabled, created_at) "
        "VALUES ('bench', 'seller', 'BENCHNOTFY', 0, 0) RETURNING id"
    )
    app = await conn.fetchval(
        "INSERT INTO apps (account_id, ownerid, name, secret, created_at, updated_at, client_rate_limit) "
        "VALUES ($1, 'BENCHNOTFY', 'bench', 'bench-secret', 0, 0, 100) RETURNING id",
        account,
    )
    user: int = await conn.fetchval(
        "INSERT INTO users (app_id, username, created_at) VALUES ($1, 'bench', 0) RETURNING id", app
    )
    return user


async def measure(url: str, changes: int) -> tuple[list[float], list[float]]:
    dsn = postgres_dsn(url)
    writer = await asyncpg.connect(dsn)
    folder = Path(tempfile.mkdtemp(prefix="lgnotify"))
    notify = LoginNotify(dsn, 5.0, SharedCounter(folder / "login-writes.counter"))
    await notify.start()
    from_sent: list[float] = []
    from_answered: list[float] = []
    try:
        assert notify.trusted(), "not subscribed"
        user_id = await _user(writer)
        statement = await writer.prepare(TOGGLE_BAN)
        for _ in range(changes):
            await asyncio.sleep(0.001)  # nothing in flight: each change alone
            heard, writes = notify.stamp()
            sent = time.perf_counter()
            await statement.fetch(user_id)
            answered = time.perf_counter()
            # Polled on every turn of the loop: an Event set by the listener would add its own
            # wake-up to what is measured.
            while notify.unchanged(heard, writes, 0, user_id, ""):  # noqa: ASYNC110
                await asyncio.sleep(0)
            seen = time.perf_counter()
            from_sent.append((seen - sent) * 1e3)
            from_answered.append(max(seen - answered, 0.0) * 1e3)
    finally:
        await notify.close()
        await writer.close()
    return from_sent, from_answered


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered):.3f} ms, p99 {p99:.3f} ms, worst {ordered[-1]:.3f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--changes", type=int, default=2000)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    name = databases.unique_name("lgbench_notify")
    url = databases.create_postgres_database(name)
    try:
        from_sent, from_answered = asyncio.run(measure(url, args.changes))
    finally:
        databases.drop_database(name)
    print(f"{args.changes} changes, until a listening worker stops trusting what it holds:")
    print(f"  from the change's statement sent:    {_summary(from_sent)}")
    print(f"  from its commit answered:            {_summary(from_answered)}")
    print(f"load average after: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
