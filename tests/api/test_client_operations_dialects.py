"""Every client operation, succeeding and failing, on every dialect through `licensegate_client.client`
(each answer verified: signature, freshness, clientnonce), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from licensegate.config import Settings
from licensegate.domain.apps import create_application
from licensegate.operations.client import registry
from licensegate.services import Services
from licensegate_client import client as lg
from tests.conftest import make_settings
from tests.helpers import SELLER_PATH, Seller
from tests.httpservers import LocalServer, keep_off_the_network, serving

pytestmark = pytest.mark.anyio
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
KEYAUTH = ("1.1", "1.2", "1.3")


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", outbound_allow=("127.0.0.1",), outbound_timeout=2)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_off_the_network(monkeypatch)


@pytest.fixture
def target() -> Iterator[LocalServer]:
    with serving() as server:
        server.reply("/hook", b'{"ok":true}', headers={"Content-Type": "application/json"})
        yield server


@pytest.fixture(params=("1.0", "1.1", "1.2", "1.3"))
def dialect(request: pytest.FixtureRequest) -> lg.Dialect:
    value: lg.Dialect = request.param
    return value


@pytest.fixture
async def program(
    services: Services, client: httpx.AsyncClient, dialect: lg.Dialect, target: LocalServer
) -> tuple[lg.Client, Seller]:
    created = await create_application(
        services.db, services.secrets, owner="o", name="app", now=services.clock.now()
    )
    seller = Seller(
        http=client, key=created.sellerkey, ownerid=created.ownerid, app_id=created.app_id, name="app"
    )
    await seller.ok("addvar", name="motd", data="hello", authed="0")
    await seller.ok("addchannel", name="general")
    await seller.ok("addwebhook", baseurl=target.url("/hook"), webid="hook", authed="1")
    uploaded = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "upload"},
        data={"authed": "1"},
        files={"file": ("tool.bin", b"\x00\x01tool", "application/octet-stream")},
    )
    seller.file_id = uploaded.json()["id"]  # type: ignore[attr-defined]
    app = lg.Client(
        "http://testserver",
        ownerid=created.ownerid,
        name="app",
        public_key=created.public_key,
        dialect=dialect,
        secret=created.secret,
        http=client,
    )
    return app, seller


def refused(answer: lg.Answer, dialect: str, status: int, error: str) -> None:
    assert answer.success is False, answer.body
    assert (answer.status, answer.error) == (200 if dialect in KEYAUTH else status, error), answer.body
    assert isinstance(answer.code, int)
    assert answer.code != 68


def ok(answer: lg.Answer, code: int = 68) -> lg.Answer:
    assert (answer.status, answer.success, answer.code) == (200, True, code), answer.body
    return answer


async def test_every_operation_succeeds(program: tuple[lg.Client, Seller], dialect: lg.Dialect) -> None:
    app, seller = program
    ok(await app.init(ver="1.0"))
    refused(await app.check(), dialect, 403, "session_not_validated")
    key1, key2, key3 = [(await seller.ok("add", expiry="1"))["key"] for _ in range(3)]
    ok(await app.register("kim", "pw", key1, email="kim@example.com", hwid=HWID))
    ok(await app.license(key3, hwid=HWID))
    ok(await app.login("kim", "pw", hwid=HWID))
    ok(await app.upgrade("kim", key2))
    ok(await app.check())
    assert (await app.check_blacklist(hwid=HWID))["blacklisted"] is False
    assert ok(await app.fetch_online())["users"]
    assert ok(await app.fetch_stats())["appinfo"]["numUsers"] == "2"
    assert ok(await app.var("motd")).message == "hello"
    ok(await app.setvar("color", "blue"))
    assert ok(await app.getvar("color"))["response"] == "blue"
    assert lg.Client.file_bytes(ok(await app.file(seller.file_id))) == b"\x00\x01tool"  # type: ignore[attr-defined]
    hook = ok(await app.webhook("hook", params="?a=1"), 69 if dialect == "1.0" else 68)
    assert hook["response"] == '{"ok":true}'
    ok(await app.chatsend("general", "hi there"))
    assert [m["message"] for m in ok(await app.chatget("general"))["messages"]] == ["hi there"]
    ok(await app.log("started", pcuser="kim"))
    ok(await app.tamper("debugger found"))
    enrol = ok(await app.enable_2fa())
    assert enrol["2fa"]["secret_code"]
    ok(await app.change_username("kimberly"))
    ok(await app.init())
    ok(await app.login("kimberly", "pw", hwid=HWID))
    ok(await app.logout())
    ok(await app.init())
    ok(await app.login("kimberly", "pw", hwid=HWID))
    ok(await app.ban("cheating"))
    assert not (await app.check()).success


async def test_every_operation_refuses(program: tuple[lg.Client, Seller], dialect: lg.Dialect) -> None:
    app, seller = program
    # Without a session every operation but init is refused.
    for op in registry:
        if op.type == "init":
            continue
        answer = await app.call(op.type)
        assert answer.success is False, (op.type, answer.body)
        assert answer.error in {"missing_session", "missing_parameter"}, (op.type, answer.body)
    refused(await app.init(ver="9.9"), dialect, 403, "version_mismatch")
    ok(await app.init())
    for op in registry:
        required = [p for p in op.params if p.required]
        if op.type == "init" or not required:
            continue
        answer = await app.call(op.type)
        refused(answer, dialect, 400, "missing_parameter")
    refused(await app.license("nope", hwid=HWID), dialect, 403, "key_not_found")
    refused(await app.login("nobody", "pw", hwid=HWID), dialect, 403, "invalid_credentials")
    refused(await app.register("kim", "pw", "nope"), dialect, 404, "key_not_found")
    refused(await app.upgrade("nobody", "nope"), dialect, 404, "key_not_found")
    refused(await app.var("nothing"), dialect, 404, "variable_not_found")
    refused(await app.getvar("color"), dialect, 403, "session_not_validated")
    refused(await app.file("000000"), dialect, 404, "file_not_found")
    refused(await app.file(seller.file_id), dialect, 403, "session_not_validated")  # type: ignore[attr-defined]
    refused(await app.webhook("hook"), dialect, 403, "session_not_validated")
    refused(await app.chatget("general"), dialect, 403, "session_not_validated")
    refused(await app.change_username("x"), dialect, 403, "session_not_validated")
    refused(await app.ban(), dialect, 403, "session_not_validated")
    refused(await app.enable_2fa(), dialect, 403, "session_not_validated")
    refused(await app.forgot("nobody", "a@b.c"), dialect, 403, "email_not_configured")
    unknown = await app.call("nosuchtype")
    refused(unknown, dialect, 400, "unknown_type")
