"""What tells a worker in notify mode (domain/recheck.py) that what it holds may be stale: on
PostgreSQL, migration 0060's announcements of every moved login version and every deleted
application, user or session (only once committed; `*` past the first 100 of a transaction), and
the adapter's count of this machine's committed statements that may change a login
(`store.loginversions.may_change_logins`), which errs towards yes and knows every table a login
depends on."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator

import asyncpg
import pytest

from licensegate.invalidation import LOGIN_CHANNEL
from licensegate.services import Services
from licensegate.store import loginversions
from licensegate.store.database import postgres_dsn
from licensegate.store.loginversions import LOGIN_TABLES, may_change_logins
from licensegate.store.schema import LOGIN_VERSION_TRIGGERS, metadata
from tests.helpers import Seller, client_of, make_user

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"

pytestmark = pytest.mark.anyio


@pytest.fixture
async def heard(services: Services) -> AsyncIterator[list[str]]:
    """What a listener of the login channel hears from now on (PostgreSQL only)."""
    assert services.db.dialect == "postgresql"  # PostgreSQL only (tests/conftest.py)
    conn = await asyncpg.connect(postgres_dsn(services.settings.database_url))
    payloads: list[str] = []
    await conn.add_listener(LOGIN_CHANNEL, lambda _conn, _pid, _channel, payload: payloads.append(payload))
    try:
        yield payloads
    finally:
        await conn.close()


async def settled(services: Services, heard: list[str]) -> list[str]:
    """Everything announced until now (a marker committed now arrives after it), and forget it."""
    marker = f"marker-{secrets.token_hex(8)}"
    await services.db.execute("SELECT pg_notify(?, ?)", LOGIN_CHANNEL, marker)
    deadline = time.monotonic() + 30
    while marker not in heard:
        assert time.monotonic() < deadline, "the marker was not heard"
        await asyncio.sleep(0.01)
    before = heard[: heard.index(marker)]
    heard.clear()
    return before


async def _ban_then_roll_back(services: Services, user_id: int) -> None:
    async with services.db.transaction() as tx:
        await tx.execute("UPDATE users SET banned_reason = 'y' WHERE id = ?", user_id)
        raise RuntimeError("rolled back")


async def test_each_committed_change_is_announced(
    services: Services, seller: Seller, heard: list[str]
) -> None:
    user_id = await make_user(services, seller.app_id, "announced")
    await settled(services, heard)
    db = services.db
    await db.execute("UPDATE users SET banned_reason = 'x' WHERE id = ?", user_id)
    assert await settled(services, heard) == [f"u{user_id}"]
    with pytest.raises(RuntimeError, match="rolled back"):
        await _ban_then_roll_back(services, user_id)
    assert await settled(services, heard) == []
    await db.execute("UPDATE users SET last_login_at = 5 WHERE id = ?", user_id)  # bookkeeping
    assert await settled(services, heard) == []
    async with db.transaction() as tx:  # one announcement per row and transaction
        await tx.execute("UPDATE users SET banned_reason = NULL WHERE id = ?", user_id)
        await tx.execute("DELETE FROM user_hwids WHERE user_id = ?", user_id)
        await tx.execute("UPDATE user_subscriptions SET expires_at = 1 WHERE user_id = ?", user_id)
    assert await settled(services, heard) == [f"u{user_id}"]
    await db.execute("UPDATE apps SET max_hwids = 3 WHERE id = ?", seller.app_id)
    assert await settled(services, heard) == [f"a{seller.app_id}"]
    await seller.ok("black", hwid="a-blacklisted-device-000000")
    assert set(await settled(services, heard)) == {f"a{seller.app_id}"}
    program = client_of(seller)
    await program.init()
    assert await settled(services, heard) == []  # a new session changes nothing held
    session_id = await db.fetch_value("SELECT id FROM sessions WHERE app_id = ?", seller.app_id)
    await db.execute("DELETE FROM sessions WHERE id = ?", session_id)
    assert await settled(services, heard) == [f"s{session_id}"]
    await db.execute("DELETE FROM users WHERE id = ?", user_id)
    assert f"u{user_id}" in await settled(services, heard)


async def test_what_no_worker_can_hold_is_not_announced(
    services: Services, seller: Seller, heard: list[str]
) -> None:
    """Migration 0062: a session's first login (no worker holds a session before it is logged
    in) and a user made by the announcing transaction itself are not announced, since each
    announcement queues its transaction's commit behind every other announcing one; a logged-in
    session's and an existing user's moves still are, in the same transaction too."""
    db = services.db
    key = (await seller.ok("add", expiry=30, amount=1, level=1))["key"]
    program = client_of(seller)
    await program.init()
    await settled(services, heard)
    await program.ok("license", key=key, hwid=HWID)  # a first use: one statement on PostgreSQL
    made = await db.fetch_value("SELECT id FROM users WHERE app_id = ? AND username = ?", seller.app_id, key)
    # Nor bumped by it (migration 0063): its grant, HWID and key leave its version alone.
    assert await db.fetch_value("SELECT login_version FROM users WHERE id = ?", made) == 0
    assert await settled(services, heard) == []
    first = await db.fetch_value("SELECT id FROM sessions WHERE user_id = ?", made)
    again = program.fresh()  # the same key's login on a new session
    await again.init()
    await again.ok("license", key=key, hwid=HWID)
    assert await settled(services, heard) == []
    session_id = await db.fetch_value("SELECT id FROM sessions WHERE user_id = ? AND id <> ?", made, first)
    await db.execute("UPDATE sessions SET validated = 0 WHERE id = ?", session_id)  # logged out
    assert await settled(services, heard) == [f"s{session_id}"]
    await db.execute("UPDATE sessions SET validated = 1 WHERE id = ?", session_id)  # nobody holds it
    assert await settled(services, heard) == []
    await db.execute("UPDATE users SET banned_reason = 'x' WHERE id = ?", made)
    assert await settled(services, heard) == [f"u{made}"]
    # The mark is its transaction's own: a later transaction's move of that user is announced.
    other = await make_user(services, seller.app_id, "other")
    await settled(services, heard)
    async with db.transaction() as tx:
        await tx.execute("SELECT set_config('licensegate.made_user', ?, true)", str(other))
    await db.execute("UPDATE users SET banned_reason = 'x' WHERE id = ?", other)
    assert await settled(services, heard) == [f"u{other}"]


@pytest.mark.postgres_only
async def test_a_user_made_by_the_transaction_is_not_bumped_by_it(services: Services, seller: Seller) -> None:
    """Migration 0063: the bumps by a user's HWIDs, grants and key leave alone the user the
    transaction named in `licensegate.made_user`; any other user is bumped, in that transaction
    too."""
    db = services.db
    made = await make_user(services, seller.app_id, "made")
    other = await make_user(services, seller.app_id, "other")
    version = "SELECT login_version FROM users WHERE id = ?"
    before = {user: await db.fetch_value(version, user) for user in (made, other)}
    async with db.transaction() as tx:
        await tx.execute("SELECT set_config('licensegate.made_user', ?, true)", str(made))
        for user in (made, other):
            await tx.execute(
                "INSERT INTO user_hwids (user_id, hwid, created_at) VALUES (?, 'HWID-0063', 0)", user
            )
    assert await db.fetch_value(version, made) == before[made]
    assert await db.fetch_value(version, other) == before[other] + 1
    await db.execute("DELETE FROM user_hwids WHERE user_id = ?", made)  # a later transaction
    assert await db.fetch_value(version, made) == before[made] + 1


async def test_a_transaction_changing_many_rows_says_everything_once(
    services: Services, seller: Seller, heard: list[str]
) -> None:
    await services.db.execute(
        "INSERT INTO users (app_id, username, created_at) "
        "SELECT ?, 'bulk-' || n, 0 FROM generate_series(1, 250) AS n",
        seller.app_id,
    )
    await settled(services, heard)
    await services.db.execute("UPDATE users SET banned_reason = 'bulk' WHERE app_id = ?", seller.app_id)
    announced = await settled(services, heard)
    assert len(announced) == 101
    assert all(payload.startswith("u") for payload in announced[:100])
    assert announced[100] == "*"


@pytest.mark.parametrize(
    ("sql", "changes"),
    [
        ("UPDATE users SET last_login_at = ?, last_ip = ? WHERE id = ?", False),  # store.logins.record_login
        ("UPDATE sessions SET last_beat_at = ? WHERE id = ?", False),
        ("INSERT INTO sessions (id, app_id, created_at, expires_at) VALUES (?, ?, ?, ?)", False),
        ("INSERT INTO client_logs (app_id, message) VALUES (?, ?)", False),
        ("SELECT id FROM users WHERE id = ? FOR UPDATE", False),
        ("UPDATE license_keys SET note = ? WHERE id = ?", False),
        ("UPDATE sessions SET validated = 1, user_id = ? WHERE id = ?", True),
        ("UPDATE users SET login_version = login_version + 1 WHERE id = ?", True),
        ("UPDATE users SET banned_reason = ? WHERE id = ?", True),
        ("update users set otp_enabled = 0 where id = ?", True),
        ("UPDATE license_keys SET status = 'banned' WHERE id = ?", True),
        ("UPDATE apps SET updated_at = ? WHERE id = ?", True),  # any change of an application
        ("UPDATE users SET last_ip = ? WHERE app_id = ?", True),  # a login column named: erring
        (
            "INSERT INTO users (app_id, username) VALUES (?, ?) ON CONFLICT (app_id, username) "
            "DO UPDATE SET banned_reason = excluded.banned_reason",
            True,
        ),
        ("INSERT INTO user_hwids (user_id, hwid, created_at) VALUES (?, ?, ?)", True),
        ("INSERT INTO blacklist (app_id, kind, value, created_at) VALUES (?, ?, ?, ?)", True),
        ("DELETE FROM sessions WHERE expires_at < ?", True),
        ("DELETE FROM accounts WHERE id = ?", True),  # its applications go with it
        ("TRUNCATE TABLE users CASCADE", True),
        (
            "WITH used AS (UPDATE license_keys SET status = 'used' WHERE id = ? RETURNING id) "
            "INSERT INTO users (app_id, username) SELECT ?, ? FROM used",
            True,
        ),
    ],
)
def test_which_statements_may_change_a_login(sql: str, changes: bool) -> None:
    assert may_change_logins(sql) is changes


def test_every_table_a_login_depends_on_is_known() -> None:
    """The tables with login-version triggers are login tables, and so is every table whose
    deletes reach a login table's rows (ON DELETE CASCADE or SET NULL)."""
    triggered = {name.partition("_login_version")[0] for name in LOGIN_VERSION_TRIGGERS}
    assert triggered <= LOGIN_TABLES
    for name in LOGIN_TABLES:
        for key in metadata.tables[name].foreign_keys:
            if key.ondelete is not None:
                assert key.column.table.name in LOGIN_TABLES, (name, key.column.table.name)
    assert set(loginversions.NOT_LOGIN_COLUMNS) <= LOGIN_TABLES


@pytest.mark.postgres_only
async def test_the_adapter_counts_committed_login_changes(services: Services, seller: Seller) -> None:
    """What this machine's workers compare (notify mode): moved by a committed statement that
    may change a login, after its commit; not by bookkeeping, reads or a rolled-back change."""
    assert services.login_notify is not None  # PostgreSQL only (postgres_only)
    writes = services.login_notify.writes
    user_id = await make_user(services, seller.app_id, "counted")
    start = writes.value()
    await services.db.execute("UPDATE users SET last_login_at = 1 WHERE id = ?", user_id)
    await services.db.fetch_one("SELECT * FROM users WHERE id = ?", user_id)
    assert writes.value() == start
    await services.db.execute("UPDATE users SET banned_reason = 'x' WHERE id = ?", user_id)
    assert writes.value() == start + 1
    async with services.db.transaction() as tx:
        await tx.execute("UPDATE users SET banned_reason = NULL WHERE id = ?", user_id)
        await tx.execute("UPDATE users SET hwid_lock = 0 WHERE id = ?", user_id)
        assert writes.value() == start + 1  # not before the commit
    assert writes.value() == start + 2
    with pytest.raises(RuntimeError, match="rolled back"):
        await _ban_then_roll_back(services, user_id)
    assert writes.value() == start + 2
