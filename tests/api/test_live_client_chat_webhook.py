"""The client API's Chat and Webhook operations against a real `licensegate serve` (two
workers), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.httpservers import LocalServer, serving
from tests.live import LiveServer

pytestmark = pytest.mark.server

HWID = "live-machine-0000000001"
SECRET = "liveSecret123"


def seller(server: LiveServer, sellerkey: str, type_: str, /, **params: str) -> dict[str, Any]:
    response = httpx.get(
        f"{server.url}/api/seller/", params={"sellerkey": sellerkey, "type": type_, **params}, timeout=10
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def client(http: httpx.Client, session: dict[str, str], type_: str, /, **params: str) -> httpx.Response:
    return http.post("/api/1.0/", params={**session, "type": type_, **params})


def logged_in_session(http: httpx.Client, server: LiveServer, created: dict[str, str]) -> dict[str, str]:
    key = seller(server, created["sellerkey"], "add", expiry="30")["key"]
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    init = http.post("/api/1.0/", params={**base, "type": "init"}).json()
    session = {**base, "sessionid": init["sessionid"]}
    assert client(http, session, "license", key=key, hwid=HWID).status_code == 200
    return session


@pytest.fixture(scope="module")
def outbound_server(outbound_live_server: LiveServer) -> LiveServer:
    return outbound_live_server


@pytest.fixture
def target() -> Iterator[LocalServer]:
    with serving() as server:
        yield server


def test_chatsend_then_chatfetch_across_workers(live_server: LiveServer) -> None:
    created = live_server.create_app("live-chat", "app")
    seller(live_server, created["sellerkey"], "addchannel", name="general")
    seller(live_server, created["sellerkey"], "chatpost", channel="general", message="Welcome")
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        session = logged_in_session(http, live_server, created)
        sent = client(http, session, "chatsend", channel="general", message="hi from the client")
        assert sent.status_code == 200, sent.text
        assert sent.json()["message"] == "Successfully sent chat message"
        # Fetch Messages carries sessionid and ownerid only.
        fetched = client(
            http,
            {"sessionid": session["sessionid"], "ownerid": session["ownerid"]},
            "chatfetch",
            channel="general",
        )
        assert fetched.status_code == 200, fetched.text
        body = fetched.json()
        assert set(body) == {"success", "code", "message", "messages", "nonce", "ownerid"}
        assert body["code"] == 68
        key_user = body["messages"][1]["author"]
        assert [(m["role"], m["message"]) for m in body["messages"]] == [
            ("developer", "Welcome"),
            ("user", "hi from the client"),
        ]
        assert all(type(m["timestamp"]) is int for m in body["messages"])
        assert client(http, session, "chatget", channel="general").json()["messages"][1]["author"] == key_user
        unknown = client(http, session, "chatfetch", channel="nope")
        assert (unknown.status_code, unknown.json()["error"]) == (403, "channel_not_found")


def test_a_webhook_call_through_a_real_server(outbound_server: LiveServer, target: LocalServer) -> None:
    created = outbound_server.create_app("live-webhook", "app")
    target.reply("/hook", b'{"answer": 42}')
    base_url = target.url(f"/hook?key={SECRET}")
    seller(outbound_server, created["sellerkey"], "addwebhook", baseurl=base_url, webid="hook", authed="1")
    with httpx.Client(base_url=outbound_server.url, timeout=10) as http:
        session = logged_in_session(http, outbound_server, created)
        response = client(http, session, "webhook", webid="hook", params="a=1&b=../x", body="ping")
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"success", "code", "message", "response", "nonce", "ownerid"}
        assert (body["code"], body["response"]) == (69, '{"answer": 42}')
        [seen] = target.requests
        assert (seen.method, seen.path, seen.body) == ("POST", f"/hook?key={SECRET}&a=1&b=..%2Fx", b"ping")
        missing = client(http, session, "webhook", webid="nope")
        assert (missing.status_code, missing.json()["error"]) == (403, "webhook_not_found")
        assert SECRET not in response.text + missing.text
    assert SECRET not in (outbound_server.data_dir / "server.log").read_text()
