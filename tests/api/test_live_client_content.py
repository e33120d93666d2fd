"""Global/user variables, Download File, Log (with forwarding) and Tamper Detection against a real
`licensegate serve` process (two workers), on SQLite and PostgreSQL.

This module's `live_server` replaces the shared one: it is started with
`LICENSEGATE_OUTBOUND_ALLOW=127.0.0.1`, so the server may reach the local HTTP server these tests
run (a file added by URL, the log forwarding URL)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.httpservers import LocalServer, serving
from tests.live import LiveServer

pytestmark = pytest.mark.server

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.fixture(scope="module")
def live_server(outbound_live_server: LiveServer) -> LiveServer:
    return outbound_live_server


@pytest.fixture
def web() -> Iterator[LocalServer]:
    with serving() as running:
        yield running


def seller(
    server: LiveServer, sellerkey: str, type_: str, /, method: str = "GET", **params: str
) -> dict[str, Any]:
    response = httpx.request(
        method,
        f"{server.url}/api/seller/",
        params={"sellerkey": sellerkey, "type": type_, **params},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


class Program:
    """One client program instance: its application and its session."""

    def __init__(self, server: LiveServer, created: dict[str, str]) -> None:
        self.url = f"{server.url}/api/1.0/"
        self.base = {"ownerid": created["ownerid"], "name": created["name"]}
        self.base["sessionid"] = self.call("init").json()["sessionid"]

    def call(self, type_: str, /, **params: str) -> httpx.Response:
        return httpx.post(self.url, params={**self.base, "type": type_, **params}, timeout=10)

    def ok(self, type_: str, /, **params: str) -> dict[str, Any]:
        response = self.call(type_, **params)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert (body["success"], body["code"]) == (True, 68)
        return body

    def fails(self, type_: str, status: int, error: str, /, **params: str) -> dict[str, Any]:
        response = self.call(type_, **params)
        body: dict[str, Any] = response.json()
        assert (response.status_code, body["error"]) == (status, error), body
        return body

    def register(self, sellerkey: str, server: LiveServer, username: str = "kim") -> None:
        key = seller(server, sellerkey, "add", expiry="30")["key"]
        self.ok("register", username=username, key=key, hwid=HWID, **{"pass": "pw"})


def test_variables_over_the_wire(live_server: LiveServer) -> None:
    created = live_server.create_app("live-vars", "app")
    key = created["sellerkey"]
    seller(live_server, key, "addvar", name="motd", data="welcome", authed="1")
    program = Program(live_server, created)
    program.fails("var", 403, "session_not_validated", varid="motd")
    program.fails("getvar", 403, "session_not_validated", var="notes")
    program.register(key, live_server)
    body = program.ok("var", varid="motd")
    assert body["message"] == body["value"] == "welcome"
    assert program.ok("setvar", var="notes", data=" kept as sent ")["message"] == "Successfully set variable"
    assert program.ok("getvar", var="notes")["response"] == " kept as sent "
    program.fails("setvar", 400, "parameter_too_long", var="notes", data="x" * 501)
    seller(live_server, key, "setvar", user="kim", var="credits", data="5", readOnly="1")
    program.fails("setvar", 403, "variable_read_only", var="credits", data="500")
    program.fails("getvar", 404, "variable_not_found", var="never")


def test_download_file_over_the_wire(live_server: LiveServer, web: LocalServer) -> None:
    created = live_server.create_app("live-files-client", "app")
    key = created["sellerkey"]
    content = bytes(range(256)) * 4
    uploaded = httpx.post(
        f"{live_server.url}/api/seller/",
        params={"sellerkey": key, "type": "upload"},
        data={"authed": "0"},
        files={"file": ("blob.bin", content, "application/octet-stream")},
        timeout=10,
    ).json()
    web.reply("/tool.exe", b"MZ from the web")
    by_url = seller(live_server, key, "upload", method="POST", url=web.url("/tool.exe"), authed="1")
    program = Program(live_server, created)
    body = program.ok("file", fileid=uploaded["id"])
    assert (body["contents"], body["name"], body["size"]) == (content.hex(), "blob.bin", len(content))
    program.fails("file", 403, "session_not_validated", fileid=by_url["id"])
    program.register(key, live_server)
    body = program.ok("file", fileid=by_url["id"])
    assert bytes.fromhex(body["contents"]) == b"MZ from the web"
    program.fails("file", 404, "file_not_found", fileid="00000000")


def test_log_is_stored_and_forwarded_after_the_answer(live_server: LiveServer, web: LocalServer) -> None:
    created = live_server.create_app("live-logs", "app")
    key = created["sellerkey"]
    # The forwarding URL holds its reply until released (at most 8 s, within the service's 10 s
    # outbound limit): a service that waited for it would answer only after its reply began.
    release = threading.Event()
    web.reply("/api/webhooks/1/token", status=204, held=release)
    seller(live_server, key, "updatesettings", webhook=web.url("/api/webhooks/1/token"))
    program = Program(live_server, created)
    assert program.ok("log", message="hello from the wire", pcuser="alice")["message"] == "Log saved"
    assert web.answered == []
    release.set()
    [entry] = seller(live_server, key, "fetchalllogs")["logs"]
    assert (entry["logdata"], entry["pcuser"], entry["ip"], entry["credential"]) == (
        "hello from the wire",
        "alice",
        "127.0.0.1",
        None,
    )
    deadline = time.monotonic() + 10
    while not web.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    [seen] = web.requests
    assert seen.method == "POST"
    embed = orjson.loads(seen.body)["embeds"][0]
    assert embed["title"] == "Log: hello from the wire"
    assert embed["fields"][1:] == [
        {"name": "PC user", "value": "alice", "inline": True},
        {"name": "IP", "value": "127.0.0.1", "inline": True},
    ]


def test_tamper_report_bans_over_the_wire(live_server: LiveServer) -> None:
    created = live_server.create_app("live-tamper", "app")
    key = created["sellerkey"]
    program = Program(live_server, created)
    assert program.ok("tamper", reason="debugger", hwid="machine-1")["banned"] is False
    seller(live_server, key, "updatesettings", tamperaction="ban")
    program.register(key, live_server)
    body = program.ok("tamper", reason="patched", hwid="machine-2", details="jmp at 0x401000")
    assert (body["message"], body["banned"]) == ("Tamper event recorded", True)
    program.fails("check", 403, "session_not_found")
    logs = seller(live_server, key, "fetchtamperlogs")["logs"]
    assert [(e["reason"], e["credential"], e["hwid"]) for e in logs] == [
        ("patched", "kim", "machine-2"),
        ("debugger", None, "machine-1"),
    ]
