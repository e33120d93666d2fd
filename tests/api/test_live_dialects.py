"""Every dialect against a real `licensegate serve` (two workers), on SQLite and PostgreSQL: a
program starts up through `licensegate_client.client` (1.0–1.3) and through the independent KeyAuth 1.2
and legacy 1.0 clients, verifying each answer with the public key `create-app` printed."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from licensegate_client import client as lg
from tests.keyauth_clients import Hmac12Client, Legacy10Client
from tests.live import LiveServer, create_app_by_command, seller_call

pytestmark = pytest.mark.server
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.mark.parametrize("dialect", ["1.0", "1.1", "1.2", "1.3"])
def test_a_program_starts_up_on_each_dialect(live_server: LiveServer, dialect: lg.Dialect) -> None:
    # The keys `licensegate create-app` printed verify every answer.
    created = create_app_by_command(live_server.database_url, live_server.data_dir, f"live-{dialect}", "app")
    key = seller_call(live_server, created["sellerkey"], "add", expiry="1").json()["key"]
    asyncio.run(start_up(live_server, created, key, dialect))


async def start_up(live_server: LiveServer, created: dict[str, str], key: str, dialect: lg.Dialect) -> None:
    async with lg.Client(
        live_server.url,
        ownerid=created["ownerid"],
        name="app",
        public_key=created["public_key"],
        secret=created["secret"],
        dialect=dialect,
    ) as program:
        assert (await program.init()).success
        login = await program.license(key, hwid=HWID)
        assert (login.success, login.code, login["info"]["username"]) == (True, 68, key)
        wrong = await program.license(key, hwid="another-machine-0000000000001")
        assert (wrong.status, wrong.error) == (403 if dialect == "1.0" else 200, "hwid_mismatch")
        assert (await program.check()).success
        assert (await program.logout()).success


def test_keyauth_1_2_and_legacy_1_0_libraries_start_up(live_server: LiveServer) -> None:
    created = live_server.create_app("live-legacy", "app")
    keys = [seller_call(live_server, created["sellerkey"], "add", expiry="1").json()["key"] for _ in "ab"]
    asyncio.run(old_libraries(live_server, created, keys[0], keys[1]))


async def old_libraries(live_server: LiveServer, created: dict[str, str], key1: str, key2: str) -> None:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as http:
        hmac_lib = Hmac12Client(http, created["ownerid"], "app", created["secret"])
        assert (await hmac_lib.init())["success"] is True
        assert (await hmac_lib.call("license", key=key1, hwid=HWID))["success"] is True
        legacy = Legacy10Client(http, created["ownerid"], "app", created["secret"])
        assert (await legacy.init())["success"] is True
        login = await legacy.call("license", key=key2, hwid=HWID)
        assert (login["success"], login["info"]["username"]) == (True, key2)
