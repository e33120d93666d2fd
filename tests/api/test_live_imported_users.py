"""A user imported from KeyAuth against a real `licensegate serve` process (two workers), on
SQLite and PostgreSQL: written into the server's database as the importer writes it (a `$2y$10$`
hash, the SHA-1 e-mail, the appended HWID string), it logs in through the 1.3 dialect with its
KeyAuth password and a HWID the string contains, is on argon2id afterwards, and logs in with the
same password through the 1.2, 1.1 and 1.0 dialects; a HWID the string does not contain is
refused in each."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.store.database import Database, open_database
from licensegate_client import client as lg
from tests.imported import HWID_A, HWID_B, PASSWORD, insert_user, keyauth_hash
from tests.live import LiveServer, seller_call

pytestmark = pytest.mark.server


async def stored_hash(db: Database, user_id: int) -> str:
    found: str = await db.fetch_value("SELECT password_hash FROM users WHERE id = ?", user_id)
    return found


def test_an_imported_user_logs_in_over_the_wire(live_server: LiveServer) -> None:
    created = live_server.create_app("live-imported", "app")
    asyncio.run(log_in(live_server, created))


async def log_in(live_server: LiveServer, created: dict[str, str]) -> None:
    db = await open_database(live_server.database_url, pool_size=1)
    try:
        app_id: int = await db.fetch_value("SELECT id FROM apps WHERE ownerid = ?", created["ownerid"])
        user_id = await insert_user(db, app_id, password_hash=keyauth_hash(PASSWORD))
        extended = seller_call(
            live_server, created["sellerkey"], "extend", user="lee", sub="default", expiry="30"
        )
        assert extended.json()["success"] is True
        async with program(live_server, created, "1.3") as app:
            assert (await app.init()).success
            wrong = await app.login("lee", "not the password", hwid=HWID_B)
            assert (wrong.success, wrong.error) == (False, "invalid_credentials")
            assert (await stored_hash(db, user_id)).startswith("$2y$10$")
            done = await app.login("lee", PASSWORD, hwid=HWID_B)
            assert (done.success, done["info"]["username"]) == (True, "lee")
            assert (await stored_hash(db, user_id)).startswith("$argon2id$")
        dialects: tuple[lg.Dialect, ...] = ("1.2", "1.1", "1.0")
        for dialect in dialects:
            async with program(live_server, created, dialect) as app:
                assert (await app.init()).success
                assert (await app.login("lee", PASSWORD, hwid=HWID_A)).success, dialect
                foreign = await app.login("lee", PASSWORD, hwid="S-1-5-21-7777777777-8888888888-9999999999-1")
                assert (foreign.success, foreign.error) == (False, "hwid_mismatch")
    finally:
        await db.close()


def program(live_server: LiveServer, created: dict[str, str], dialect: lg.Dialect) -> lg.Client:
    return lg.Client(
        live_server.url,
        ownerid=created["ownerid"],
        name="app",
        public_key=created["public_key"],
        secret=created["secret"],
        dialect=dialect,
    )
