"""Every dialect of the client API (`/api/1.0/` … `/api/1.3/`) through `licensegate_client.client`, on
SQLite and PostgreSQL: every operation's success and failure, each answer's Ed25519 signature
checked with the application's public key, tampered and replayed answers rejected, and what each
dialect does differently (statuses, createdate, webhook code, checkblacklist, ASCII bodies, GET,
parameter precedence, the `var` alias, fetchStats' online count)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
import pytest

from licensegate.api.envelope import DIALECTS, unix_seconds
from licensegate.clock import MovableClock
from licensegate.domain import sessions
from licensegate.domain.apps import create_application
from licensegate.services import Services
from licensegate.signing import verify
from licensegate_client import client as lg
from tests.helpers import Seller

pytestmark = pytest.mark.anyio
KEYAUTH = ("1.1", "1.2", "1.3")
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@dataclass
class App:
    seller: Seller
    public_key: str
    secret: str
    http: httpx.AsyncClient

    def client(self, dialect: lg.Dialect, **options: Any) -> lg.Client:
        settings: dict[str, Any] = {"public_key": self.public_key, "secret": self.secret, **options}
        return lg.Client(
            "http://testserver",
            ownerid=self.seller.ownerid,
            name=self.seller.name,
            dialect=dialect,
            http=self.http,
            **settings,
        )

    async def key(self) -> str:
        key: str = (await self.seller.ok("add", expiry="1", amount="1"))["key"]
        return key


@pytest.fixture
async def app(services: Services, client: httpx.AsyncClient) -> App:
    created = await create_application(
        services.db, services.secrets, owner="owner", name="app", now=services.clock.now()
    )
    seller = Seller(
        http=client, key=created.sellerkey, ownerid=created.ownerid, app_id=created.app_id, name="app"
    )
    return App(seller, created.public_key, created.secret, client)


@pytest.fixture(params=("1.0", "1.1", "1.2", "1.3"))
def dialect(request: pytest.FixtureRequest) -> lg.Dialect:
    value: lg.Dialect = request.param
    return value


def failure_status(dialect: str, status: int) -> int:
    return 200 if dialect in KEYAUTH else status


async def test_a_program_starts_up_on_every_dialect(app: App, dialect: lg.Dialect) -> None:
    key = await app.key()
    program = app.client(dialect)
    init = await program.init(ver="1.0")
    assert (init.status, init.success, init.code) == (200, True, 68)
    assert init["ownerid"] == app.seller.ownerid
    login = await program.license(key, hwid=HWID)
    assert (login.status, login.success, login.code) == (200, True, 68), login.body
    info = login["info"]
    assert info["username"] == key
    if dialect == "1.0":
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", info["createdate"])
    else:
        assert re.fullmatch(r"\d{10}", info["createdate"])
        assert info["createdate"] == info["lastlogin"]
    assert (await program.check()).success
    wrong = await program.license(key, hwid="another-machine-0000000000001")
    assert (wrong.status, wrong.success, wrong.error) == (
        failure_status(dialect, 403),
        False,
        "hwid_mismatch",
    )
    assert isinstance(wrong.code, int)
    assert wrong.code != 68
    assert wrong["ownerid"] == app.seller.ownerid
    assert (await program.logout()).success
    gone = await program.check()
    assert (gone.status, gone.error) == (failure_status(dialect, 403), "session_not_found")


async def test_every_answer_is_signed_with_the_applications_key(app: App, dialect: lg.Dialect) -> None:
    program = app.client(dialect)
    await program.init()
    response = await app.http.post(
        f"/api/{dialect}/",
        params={"type": "check", "ownerid": app.seller.ownerid, "name": "app", "sessionid": "x"},
    )
    timestamp = response.headers["x-signature-timestamp"]
    assert re.fullmatch(r"\d{10}", timestamp)
    assert re.fullmatch(r"[0-9a-f]{128}", response.headers["x-signature-ed25519"])
    assert response.headers["cache-control"] == "no-store"
    assert verify(
        app.public_key, response.headers["x-signature-ed25519"], timestamp.encode() + response.content
    )


async def test_a_tampered_or_replayed_answer_is_rejected(app: App, dialect: lg.Dialect) -> None:
    key = await app.key()
    program = app.client(dialect)
    await program.init()
    login = await program.license("not-a-key", hwid=HWID)
    assert not login.success
    forged = login.raw.replace(b'"success":false', b'"success":true')
    with pytest.raises(lg.TamperedAnswer, match="signature"):
        lg.verify_answer(
            forged, login.headers, (app.public_key,), now=program.clock(), clientnonce=login["clientnonce"]
        )
    # The genuine answer replayed to another request (another clientnonce) fails too.
    with pytest.raises(lg.TamperedAnswer, match="clientnonce"):
        lg.verify_answer(
            login.raw, login.headers, (app.public_key,), now=program.clock(), clientnonce="f" * 32
        )
    # And a stale one.
    with pytest.raises(lg.TamperedAnswer, match="clock"):
        lg.verify_answer(
            login.raw,
            login.headers,
            (app.public_key,),
            now=program.clock() + 60,
            clientnonce=login["clientnonce"],
        )
    # A program with another application's public key trusts nothing this service says.
    stranger = app.client(dialect, public_key="00" * 32)
    with pytest.raises(lg.TamperedAnswer):
        await stranger.init()
    assert (await program.license(key, hwid=HWID)).success


async def test_unknown_applications_and_bad_requests_are_signed_with_the_deployment_key(
    app: App, dialect: lg.Dialect, services: Services
) -> None:
    deployment = (await services.signers.deployment(services.db, 0)).public_key
    program = app.client(dialect, deployment_public_key=deployment)
    program.name = "no-such-app"
    answer = await program.init()
    assert (answer.status, answer.error) == (failure_status(dialect, 401), "unknown_application")
    missing = await program.call("")
    assert (missing.status, missing.error) == (failure_status(dialect, 400), "missing_type")
    assert "clientnonce" in missing.body


async def test_rate_limits_stay_429_and_are_signed(app: App, dialect: lg.Dialect, services: Services) -> None:
    await app.seller.ok("updatesettings", clientratelimit=2)
    program = app.client(dialect)
    await program.init()
    await program.check()
    limited = await program.check()
    assert (limited.status, limited.error) == (429, "rate_limited")
    assert int(limited.headers["retry-after"]) > 0


async def test_an_internal_fault_is_500_and_signed(
    app: App, dialect: lg.Dialect, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(sessions, "end", broken)
    program = app.client(dialect)
    await program.init()
    fault = await program.logout()
    assert (fault.status, fault.error) == (500, "internal_error")
    assert "boom" not in fault.raw.decode()


async def test_unknown_paths_and_methods_under_api_are_signed(app: App, services: Services) -> None:
    deployment = (await services.signers.deployment(services.db, 0)).public_key
    for method, path, status in (
        ("POST", "/api/9.9/", 404),
        ("GET", "/api/1.0/", 405),
        ("DELETE", "/api/1.3/", 405),
    ):
        response = await app.http.request(method, path)
        assert response.status_code == status
        stamp = response.headers["x-signature-timestamp"]
        assert verify(deployment, response.headers["x-signature-ed25519"], stamp.encode() + response.content)
        body = response.json()
        assert body["success"] is False
        assert isinstance(body["code"], int)


async def test_keyauth_dialects_take_get_and_read_the_body_first(app: App) -> None:
    base = {"ownerid": app.seller.ownerid, "name": "app"}
    for dialect in KEYAUTH:
        got = await app.http.get(f"/api/{dialect}/", params={**base, "type": "init"})
        assert (got.status_code, got.json()["success"]) == (200, True)
        # Body wins over the query string: the query's bogus name loses.
        mixed = await app.http.post(
            f"/api/{dialect}/", params={**base, "name": "wrong", "type": "init"}, data={"name": "app"}
        )
        assert mixed.json()["success"] is True
    # The interface document's dialect: the query string wins.
    mixed = await app.http.post("/api/1.0/", params={**base, "type": "init"}, data={"name": "wrong"})
    assert mixed.json()["success"] is True


async def test_checkblacklist_means_blacklisted_on_keyauth_dialects(app: App, dialect: lg.Dialect) -> None:
    program = app.client(dialect)
    await program.init()
    clean = await program.check_blacklist(hwid=HWID)
    assert clean["blacklisted"] is False
    assert clean.success is (dialect == "1.0")
    await app.seller.ok("black", hwid=HWID)
    black = await program.check_blacklist(hwid=HWID)
    assert (black.success, black["blacklisted"], black.code) == (True, True, 68)


async def test_global_variables_accept_var_and_bodies_are_ascii(app: App, dialect: lg.Dialect) -> None:
    await app.seller.ok("addvar", name="greeting", data="h\u00e9llo \u2603 \U0001f600", authed="0")
    program = app.client(dialect)
    await program.init()
    answer = await program.var("greeting")
    assert answer.message == "h\u00e9llo \u2603 \U0001f600"
    assert answer.raw.isascii() is (dialect != "1.0")
    if dialect != "1.0":
        alias = await program.call("var", var="greeting")
        assert alias.message == answer.message
        assert b"\\ud83d\\ude00" in answer.raw


async def test_fetchstats_never_counts_more_online_than_fetchonline_lists(
    app: App, dialect: lg.Dialect
) -> None:
    key = await app.key()
    first, second = app.client(dialect), app.client(dialect)
    for program in (first, second):  # one user, two sessions
        await program.init()
        assert (await program.license(key, hwid=HWID)).success
    online = await first.fetch_online()
    stats = await first.fetch_stats()
    listed = len(online["users"])
    counted = int(stats["appinfo"]["numOnlineUsers"])
    if dialect == "1.0":
        assert counted == 2
    else:
        assert counted <= listed


async def test_api_1_2_answers_carry_the_hmac_signature(app: App) -> None:
    key = await app.key()
    program = app.client("1.2")
    assert (await program.init()).success
    assert program.enckey is not None
    answer = await program.license(key, hwid=HWID)
    assert answer.success
    # A program with the wrong secret refuses every answer.
    wrong = app.client("1.2", secret="ab" * 32)
    with pytest.raises(lg.TamperedAnswer, match="HMAC"):
        await wrong.init()


def test_createdate_conversion() -> None:
    assert unix_seconds("2026-01-02 03:04:05") == "1767323045"
    assert unix_seconds("not a date") == "not a date"
    assert set(DIALECTS) == {"1.0", "1.1", "1.2", "1.3"}


async def test_one_zero_bodies_are_unchanged_without_a_clientnonce(app: App) -> None:
    base = {"ownerid": app.seller.ownerid, "name": "app"}
    init = await app.http.post("/api/1.0/", params={**base, "type": "init"})
    assert list(orjson.loads(init.content)) == [
        "success",
        "code",
        "message",
        "sessionid",
        "appinfo",
        "newSession",
        "nonce",
        "ownerid",
    ]


async def test_unknown_paths_and_methods_carry_the_envelope_of_their_dialect(
    app: App, dialect: lg.Dialect
) -> None:
    """404 and 405 under a dialect's path: `code`, a fresh `nonce`, the `ownerid` and `clientnonce`
    the request carried (query string or form body), signed with the named
    application's key so that its program can verify them."""
    named = {"ownerid": app.seller.ownerid, "name": "app", "clientnonce": "c0ffee42"}
    calls: list[tuple[str, str, dict[str, Any], int]] = [
        ("POST", f"/api/{dialect}/nothing-here", {"params": named}, 404),
        ("DELETE", f"/api/{dialect}/", {"params": named}, 405),
        ("POST", f"/api/{dialect}/nothing-here", {"data": named}, 404),
    ]
    nonces = set()
    for method, path, sent, status in calls:
        response = await app.http.request(method, path, **sent)
        assert response.status_code == status
        body = lg.verify_answer(
            response.content, response.headers, (app.public_key,), now=time.time(), clientnonce="c0ffee42"
        )
        assert body["success"] is False
        assert body["code"] == (44 if status == 404 else 40)
        assert re.fullmatch(r"[0-9a-f]{32}", body["nonce"])
        assert body["ownerid"] == app.seller.ownerid
        nonces.add(body["nonce"])
    assert len(nonces) == len(calls)


async def test_entitlements_on_every_dialect(app: App, dialect: lg.Dialect) -> None:
    """The login's added field and Get Entitlements, read through `licensegate_client.client`."""
    await app.seller.ok("addentitlement", code="export", name="Export", metadata='{"seats": 5}')
    await app.seller.ok("attachentitlement", code="export", sub="default")
    key = await app.key()
    program = app.client(dialect)
    await program.init()
    login = await program.license(key, hwid=HWID)
    assert login.success, login.body
    assert login.entitlements == [lg.Entitlement("export", "Export")]
    assert login.has("export")
    assert not login.has("import")
    listed = await program.entitlements()
    assert listed.success, listed.body
    assert listed.entitlements == [lg.Entitlement("export", "Export", {"seats": 5})]


async def test_credits_on_every_dialect(app: App, dialect: lg.Dialect) -> None:
    """The login's `credits` field and Spend Credits, read through `licensegate_client.client`."""
    key = await app.key()
    await app.seller.ok("setcredits", key=key, balance=2)
    program = app.client(dialect)
    await program.init()
    login = await program.license(key, hwid=HWID)
    assert login.success, login.body
    assert login.credits == 2
    spent = await program.spend(2)
    assert spent.success, spent.body
    assert spent.credits == 0
    refused = await program.spend()
    assert not refused.success
    assert refused.error == "credits_exhausted"
    assert refused.credits == 0


async def test_heartbeat_on_every_dialect(app: App, dialect: lg.Dialect) -> None:
    """Heartbeat's changes and a ban's refusal, read through `licensegate_client.client`."""
    await app.seller.ok("setheartbeat", interval=60)
    await app.seller.ok("addentitlement", code="export", name="Export")
    key = await app.key()
    program = app.client(dialect)
    await program.init()
    assert (await program.license(key, hwid=HWID)).success
    first = await program.heartbeat()
    assert first.success, first.body
    assert (first["interval"], first.changed) == (60, [])
    await app.seller.ok("attachentitlement", code="export", user=key)
    beat = await program.heartbeat()
    assert beat.changed == ["entitlements"]
    assert beat["entitlements_added"] == ["export"]
    assert beat.has("export")
    await app.seller.ok("banuser", user=key, reason="shared account")
    refused = await program.heartbeat()
    assert not refused.success
    assert (refused.error, refused.ended, refused["reason"]) == (
        "session_not_found",
        "banned",
        "shared account",
    )
    assert "shared account" in refused.message


async def test_license_file_on_every_dialect(app: App, dialect: lg.Dialect, clock: MovableClock) -> None:
    """Get License File through `licensegate_client.client`, verified offline; its cooldown is 429 with
    `Retry-After` on every dialect (KeyAuth's libraries understand 429)."""
    key = await app.key()
    program = app.client(dialect)
    await program.init()
    assert (await program.license(key, hwid=HWID)).success
    answer = await program.license_file()
    assert answer.success, answer.body
    keys = (await app.seller.ok("fetchlicensekeys"))["keys"]
    trusted = {item["kid"]: item["public_key"] for item in keys}
    verified = lg.verify_license_file(
        answer["file"], trusted, ownerid=app.seller.ownerid, name="app", hwid=HWID, now=clock.now()
    )
    assert (verified.user, verified.serial) == (key, answer["serial"])
    again = await program.license_file()
    assert (again.status, again.error) == (429, "license_file_cooldown")
    assert again.headers["retry-after"] == "3600"
