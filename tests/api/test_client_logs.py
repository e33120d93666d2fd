"""Client API — Log (`log`): stored with credential, PC user, IP and time (read back with the
seller API's `fetchalllogs`), and forwarded after the response to a Discord-compatible URL (a
local HTTP server here), with retries; plus the background-task holder that does the forwarding."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from licensegate.background import AttemptFailed, Background
from licensegate.config import Settings
from licensegate.domain import logs as clientlogs
from licensegate.services import Services
from tests.conftest import make_settings
from tests.helpers import Client, Seller, client_of
from tests.httpservers import LocalServer, keep_off_the_network, serving

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
CLIENT_IP = "203.0.113.7"  # the in-process client's address (tests/conftest.py)
ENVELOPE = {"success", "code", "message", "nonce", "ownerid"}
NOW_ISO = "2027-01-15T08:00:00+00:00"  # the movable clock's start, 1_800_000_000
FAST_RETRIES = (0.0, 0.05, 0.1)


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", outbound_allow=("127.0.0.1",), outbound_timeout=5)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_off_the_network(monkeypatch)


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clientlogs, "FORWARD_DELAYS", FAST_RETRIES)


@pytest.fixture
def web() -> Iterator[LocalServer]:
    with serving() as running:
        yield running


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def log_in(app: Client, seller: Seller, name: str = "kim") -> None:
    key = (await seller.ok("add", expiry=30))["key"]
    await app.ok("register", username=name, key=key, hwid=HWID, **{"pass": "pw"})


async def stored_logs(seller: Seller) -> list[dict[str, Any]]:
    logs: list[dict[str, Any]] = (await seller.ok("fetchalllogs"))["logs"]
    return logs


def forwarded(web: LocalServer) -> list[dict[str, Any]]:
    return [orjson.loads(seen.body) for seen in web.requests]


# --- storing -----------------------------------------------------------------------------------


async def test_log_is_stored_with_ip_time_and_no_credential_before_login(app: Client, seller: Seller) -> None:
    body = await app.ok("log", message="program started", pcuser="alice")
    assert set(body) == ENVELOPE
    assert body["message"] == "Log saved"
    [entry] = await stored_logs(seller)
    assert entry == {
        "id": entry["id"],
        "logdata": "program started",
        "credential": None,
        "pcuser": "alice",
        "ip": CLIENT_IP,
        "logdate": 1_800_000_000,
    }


async def test_log_of_a_logged_in_session_carries_its_credential(app: Client, seller: Seller) -> None:
    await log_in(app, seller)
    await app.ok("log", message="opened settings")
    [entry] = await stored_logs(seller)
    assert (entry["credential"], entry["pcuser"]) == ("kim", None)


async def test_log_of_a_license_session_carries_the_key(app: Client, seller: Seller) -> None:
    key = (await seller.ok("add", expiry=30))["key"]
    await app.ok("license", key=key, hwid=HWID)
    await app.ok("log", message="licensed")
    assert [e["credential"] for e in await stored_logs(seller)] == [key]


async def test_log_keeps_the_message_as_sent(app: Client, seller: Seller) -> None:
    await app.ok("log", message="  indented\nsecond line  ")
    assert [e["logdata"] for e in await stored_logs(seller)] == ["  indented\nsecond line  "]


async def test_log_validates_its_parameters(app: Client, seller: Seller) -> None:
    await app.fails("log", 400, "missing_parameter")
    await app.fails("log", 400, "missing_parameter", message="")
    await app.fails("log", 400, "parameter_too_long", message="m" * 1001)
    await app.fails("log", 400, "parameter_too_long", message="m", pcuser="p" * 65)
    await app.ok("log", message="m" * 1000, pcuser="p" * 64)
    assert [len(e["logdata"]) for e in await stored_logs(seller)] == [1000]


async def test_log_needs_a_live_session(app: Client) -> None:
    await app.fresh().fails("log", 401, "missing_session", message="x")
    await Client(app.http, app.ownerid, app.name, "0" * 32).fails(
        "log", 403, "session_not_found", message="x"
    )


async def test_log_without_a_forwarding_url_forwards_nothing(
    app: Client, seller: Seller, services: Services, web: LocalServer
) -> None:
    await app.ok("log", message="quiet")
    assert services.background.pending == 0
    assert web.requests == []


# --- forwarding --------------------------------------------------------------------------------


async def test_log_is_forwarded_as_a_discord_message(
    app: Client, seller: Seller, services: Services, web: LocalServer
) -> None:
    web.reply("/api/webhooks/1/token", status=204)
    await seller.ok("updatesettings", webhook=web.url("/api/webhooks/1/token"))
    await log_in(app, seller)
    await app.ok("log", message='He said "hi" `code` **bold**', pcuser="alice")
    await services.background.drain()
    [seen] = web.requests
    assert (seen.method, seen.path) == ("POST", "/api/webhooks/1/token")
    assert seen.headers["content-type"] == "application/json"
    assert orjson.loads(seen.body) == {
        "content": None,
        "embeds": [
            {
                "title": 'Log: He said "hi" `code` **bold**',
                "fields": [
                    {"name": "Credential", "value": "kim"},
                    {"name": "PC user", "value": "alice", "inline": True},
                    {"name": "IP", "value": CLIENT_IP, "inline": True},
                ],
                "timestamp": NOW_ISO,
            }
        ],
    }
    assert len(await stored_logs(seller)) == 1  # stored as well


async def test_forwarded_title_is_cut_and_missing_values_say_na(
    app: Client, seller: Seller, services: Services, web: LocalServer
) -> None:
    web.reply("/hook", status=200)
    await seller.ok("updatesettings", webhook=web.url("/hook"))
    await app.ok("log", message="x" * 1000)
    await services.background.drain()
    [embed] = forwarded(web)[0]["embeds"]
    assert embed["title"] == ("Log: " + "x" * 1000)[:256]
    assert len(embed["title"]) == 256
    assert [f["value"] for f in embed["fields"]] == ["N/A", "N/A", CLIENT_IP]


@pytest.mark.usefixtures("fast_retries")
async def test_a_failing_forward_is_retried_three_times_and_logged_without_the_url(
    app: Client, seller: Seller, services: Services, web: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    web.reply("/hook", b"broken", status=500)
    url = web.url("/hook?secret-token=abc")
    await seller.ok("updatesettings", webhook=url)
    with caplog.at_level(logging.WARNING, logger="licensegate.background"):
        await app.ok("log", message="retry me")
        await services.background.drain()
    assert len(web.requests) == 3
    assert len({seen.body for seen in web.requests}) == 1
    text = caplog.text
    assert text.count("HTTP status 500") == 3
    assert "gave up on log forwarding" in text
    for secret in ("secret-token", "/hook", str(web.port), web.host):
        assert secret not in text


@pytest.mark.usefixtures("fast_retries")
async def test_a_forward_that_succeeds_on_a_later_attempt_stops_retrying(
    app: Client, seller: Seller, services: Services, web: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    web.reply("/hook", status=503)
    await seller.ok("updatesettings", webhook=web.url("/hook"))
    original = clientlogs.post
    attempts: list[int] = []

    async def recovering(settings: Settings, url: str, payload: dict[str, Any]) -> None:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 2:
            web.reply("/hook", status=204)
        await original(settings, url, payload)

    monkeypatch.setattr(clientlogs, "post", recovering)
    await app.ok("log", message="eventually")
    await services.background.drain()
    assert attempts == [1, 2]
    assert len(web.requests) == 2


@pytest.mark.usefixtures("fast_retries")
async def test_a_refused_target_is_never_contacted(
    app: Client, seller: Seller, services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    await seller.ok("updatesettings", webhook="http://10.0.0.5/api/webhooks/secret")
    with caplog.at_level(logging.WARNING, logger="licensegate.background"):
        await app.ok("log", message="internal")
        await services.background.drain()
    assert caplog.text.count("target_not_allowed") == 3
    assert "10.0.0.5" not in caplog.text
    assert len(await stored_logs(seller)) == 1


async def test_the_answer_does_not_wait_for_a_slow_forwarding_url(
    app: Client, seller: Seller, services: Services, web: LocalServer
) -> None:
    release = threading.Event()
    web.reply("/slow", status=204, held=release)
    await seller.ok("updatesettings", webhook=web.url("/slow"))
    await app.ok("log", message="fast please")
    # Answered while the forwarding URL still held its reply: the forwarding is still under way.
    assert web.answered == []
    assert services.background.pending == 1
    release.set()
    await services.background.drain()
    assert services.background.pending == 0
    assert [f["embeds"][0]["title"] for f in forwarded(web)] == ["Log: fast please"]


def test_forwarding_is_tried_now_then_after_2_and_10_seconds() -> None:
    assert clientlogs.FORWARD_DELAYS == (0.0, 2.0, 10.0)


# --- the background-task holder ------------------------------------------------------------------


async def test_background_retries_until_success() -> None:
    background = Background()
    calls: list[int] = []

    async def attempt() -> None:
        calls.append(1)
        if len(calls) < 2:
            raise AttemptFailed("not yet")

    assert background.run_later(attempt, what="a job", delays=(0, 0.01, 0.01))
    await background.drain(within=5)
    assert len(calls) == 2


async def test_background_survives_an_unexpected_error_without_showing_its_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    background = Background()

    async def attempt() -> None:
        raise ValueError("http://secret.example/token")

    with caplog.at_level(logging.WARNING, logger="licensegate.background"):
        background.run_later(attempt, what="a job", delays=(0, 0))
        await background.drain(within=5)
    assert caplog.text.count("unexpected ValueError") == 2
    assert "secret" not in caplog.text


async def test_background_drain_cancels_what_outlasts_it() -> None:
    background = Background()
    finished: list[bool] = []

    async def attempt() -> None:
        await asyncio.sleep(30)
        finished.append(True)

    background.run_later(attempt, what="a slow job")
    await background.drain(within=0.1)
    assert background.pending == 0  # cancelled, not waited for: the job would take 30 s
    assert finished == []


async def test_background_drops_jobs_past_its_cap(caplog: pytest.LogCaptureFixture) -> None:
    background = Background(max_pending=2)
    release = asyncio.Event()

    async def attempt() -> None:
        await release.wait()

    assert background.run_later(attempt, what="one")
    assert background.run_later(attempt, what="two")
    with caplog.at_level(logging.WARNING, logger="licensegate.background"):
        assert not background.run_later(attempt, what="three")
    assert "dropped three" in caplog.text
    release.set()
    await background.drain(within=5)
    assert background.pending == 0
