"""Scaling out: two `licensegate serve` nodes (separate processes, ports and data folders, as on
two machines) over one PostgreSQL and one Redis. What one node does is seen through the other at
once: sessions, bans, settings, custom messages (the other node had them cached), rate limits
and files (content in the database, not on the node that received the upload)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate import cli
from licensegate.config import Settings
from tests import databases
from tests.live import LiveServer, seller_call, server_env, start_server

REDIS_URL = "redis://127.0.0.1:6379/0"
POLL = 5.0  # seconds: a change announced through Redis arrives in milliseconds; this bounds the wait
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


class Cluster:
    def __init__(self, database_url: str, env: dict[str, str], nodes: list[LiveServer]) -> None:
        self.database_url = database_url
        self.env = env
        self.nodes = nodes

    def create_app(self, owner: str, name: str) -> dict[str, str]:
        folder = self.nodes[0].data_dir
        settings = Settings.from_env(server_env(self.database_url, folder, **self.env))
        return cli.create_app(settings, owner, name)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    url = databases.take_live_database()
    env = {
        "LICENSEGATE_REDIS_URL": REDIS_URL,
        "LICENSEGATE_REDIS_PREFIX": f"t{secrets.token_hex(4)}",
        "LICENSEGATE_REDIS_TIMEOUT_MS": "5000",  # a loaded machine must not make it fall back
        # Every node needs the same deployment key (secrets at rest are sealed under it).
        "LICENSEGATE_DEPLOYMENT_KEY": secrets.token_hex(32),
    }
    nodes: list[LiveServer] = []
    try:
        for name in ("node-a", "node-b"):
            nodes.append(start_server(url, tmp_path_factory.mktemp(name), **env))
        yield Cluster(url, env, nodes)
    finally:
        for node in nodes:
            node.stop()
        databases.give_back_live_database(url)


def client(node: LiveServer, app: dict[str, str], type_: str, **params: str) -> httpx.Response:
    query = {"type": type_, "ownerid": app["ownerid"], "name": app["name"], **params}
    return httpx.post(f"{node.url}/api/1.0/", params=query, timeout=30)


def ok(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert response.status_code == 200, body
    assert body["success"] is True, body
    return body


def seller(node: LiveServer, app: dict[str, str], type_: str, **params: str) -> dict[str, Any]:
    return ok(seller_call(node, app["sellerkey"], type_, **params))


def eventually(check: Any) -> Any:
    """The first answer that passes `check` (returns truthy), asked again for at most POLL s."""
    deadline = time.monotonic() + POLL
    while True:
        answer = check()
        if answer:
            return answer
        assert time.monotonic() < deadline, "the other node did not see the change in time"
        time.sleep(0.02)


def test_a_session_opened_on_one_node_is_used_on_the_other(cluster: Cluster) -> None:
    a, b = cluster.nodes
    app = cluster.create_app("owner-sessions", "sessions")
    key = seller(a, app, "add", expiry="30")["key"]
    session = ok(client(a, app, "init"))["sessionid"]
    login = ok(client(b, app, "license", sessionid=session, key=key, hwid=HWID))
    assert login["info"]["username"] == key
    ok(client(a, app, "check", sessionid=session))
    assert ok(client(b, app, "check", sessionid=session))["message"]


def test_a_ban_on_one_node_takes_effect_on_the_other_at_once(cluster: Cluster) -> None:
    a, b = cluster.nodes
    app = cluster.create_app("owner-bans", "bans")
    key = seller(a, app, "add", expiry="30")["key"]
    session = ok(client(b, app, "init"))["sessionid"]
    ok(client(b, app, "license", sessionid=session, key=key, hwid=HWID))
    seller(a, app, "banuser", user=key, reason="chargeback")
    refused = client(b, app, "check", sessionid=session).json()
    assert refused["success"] is False
    fresh = ok(client(b, app, "init"))["sessionid"]
    banned = client(b, app, "license", sessionid=fresh, key=key, hwid=HWID).json()
    assert (banned["success"], banned["error"]) == (False, "user_banned")
    assert "chargeback" in banned["message"]


def test_a_setting_changed_on_one_node_takes_effect_on_the_other(cluster: Cluster) -> None:
    a, b = cluster.nodes
    app = cluster.create_app("owner-settings", "settings")
    seller(a, app, "updatesettings", ver="1.0")
    ok(client(b, app, "init", ver="1.0"))
    seller(a, app, "updatesettings", ver="2.0")
    refused = client(b, app, "init", ver="1.0").json()
    assert (refused["success"], refused["error"]) == (False, "version_mismatch")
    ok(client(b, app, "init", ver="2.0"))


def test_a_custom_message_changed_on_one_node_is_answered_by_the_other(cluster: Cluster) -> None:
    a, b = cluster.nodes
    app = cluster.create_app("owner-messages", "messages")
    session = ok(client(b, app, "init"))["sessionid"]

    def unknown_key_message() -> str:
        body = client(b, app, "license", sessionid=session, key=f"nope-{secrets.token_hex(4)}").json()
        assert body["error"] == "key_not_found", body
        return str(body["message"])

    for _ in range(6):  # every worker of node B has the default text cached now
        assert unknown_key_message() == "Invalid license key"
    seller(a, app, "setmessage", name="keynotfound", text="That key is not one of ours")
    eventually(lambda: unknown_key_message() == "That key is not one of ours")
    for _ in range(6):  # and no worker keeps the old one
        assert unknown_key_message() == "That key is not one of ours"
    seller(a, app, "updatesettings", keynotfound="Still not one of ours")
    eventually(lambda: unknown_key_message() == "Still not one of ours")


def test_rate_limits_are_shared_between_the_nodes(cluster: Cluster) -> None:
    a, b = cluster.nodes
    app = cluster.create_app("owner-limits", "limits")
    seller(a, app, "updatesettings", clientratelimit="6", clientratewindow="3600")
    answers = [client((a, b)[n % 2], app, "init") for n in range(8)]
    statuses = [answer.status_code for answer in answers]
    assert statuses[:6] == [200] * 6  # three through each node: six in all
    assert statuses[6:] == [429, 429]  # the limit holds across the nodes, whichever is asked
    assert int(answers[7].headers["retry-after"]) > 0


def test_a_file_uploaded_to_one_node_is_downloaded_from_the_other(cluster: Cluster, tmp_path: Path) -> None:
    a, b = cluster.nodes
    app = cluster.create_app("owner-files", "files")
    content = secrets.token_bytes(3 * 1024 * 1024 + 17)  # more than one chunk
    uploaded = httpx.post(
        f"{a.url}/api/seller/",
        params={"sellerkey": app["sellerkey"], "type": "upload", "authed": "0"},
        files={"file": ("build.bin", content, "application/octet-stream")},
        timeout=60,
    )
    file_id = ok(uploaded)["id"]
    session = ok(client(b, app, "init"))["sessionid"]
    downloaded = ok(client(b, app, "file", sessionid=session, fileid=file_id))
    assert bytes.fromhex(downloaded["contents"]) == content
    for node in (a, b):  # neither node keeps it in its own folder
        assert not list((node.data_dir / "files").rglob("*"))
    seller(b, app, "delfile", id=file_id)
    gone = client(a, app, "file", sessionid=ok(client(a, app, "init"))["sessionid"], fileid=file_id)
    assert gone.json()["error"] == "file_not_found"


def test_without_redis_postgresql_notify_tells_the_other_node(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """No Redis: the custom message still reaches the other node at once (LISTEN/NOTIFY)."""
    url = databases.take_live_database()
    env = {"LICENSEGATE_DEPLOYMENT_KEY": secrets.token_hex(32)}
    nodes: list[LiveServer] = []
    try:
        for name in ("notify-a", "notify-b"):
            nodes.append(start_server(url, tmp_path_factory.mktemp(name), **env))
        a, b = nodes
        app = Cluster(url, env, nodes).create_app("owner-notify", "notify")
        session = ok(client(b, app, "init"))["sessionid"]

        def message() -> str:
            return str(client(b, app, "license", sessionid=session, key="nope").json()["message"])

        for _ in range(6):
            assert message() == "Invalid license key"
        seller(a, app, "setmessage", name="keynotfound", text="Told through PostgreSQL")
        eventually(lambda: message() == "Told through PostgreSQL")
        for _ in range(6):
            assert message() == "Told through PostgreSQL"
    finally:
        for node in nodes:
            node.stop()
        databases.give_back_live_database(url)
