"""Files, Webhooks and Chat against a real `licensegate serve` process (two workers), on SQLite
and PostgreSQL."""

from __future__ import annotations

import httpx
import pytest

from tests.live import LiveServer
from tests.live import seller_call as call

pytestmark = pytest.mark.server


def test_files_upload_and_list_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-files", "app")["sellerkey"]
    uploaded = httpx.post(
        f"{live_server.url}/api/seller/",
        params={"sellerkey": key, "type": "upload"},
        data={"name": "loader.exe", "authed": "0"},
        files={"file": ("ignored.bin", b"MZ" + b"\0" * 5000, "application/octet-stream")},
        timeout=10,
    )
    assert uploaded.status_code == 200, uploaded.text
    body = uploaded.json()
    assert (body["name"], body["size"]) == ("loader.exe", 5002)
    listed = call(live_server, key, "fetchallfiles").json()
    assert listed["count"] == 1
    assert listed["files"][0] == {
        "id": body["id"],
        "name": "loader.exe",
        "size": 5002,
        "authed": 0,
        "url": None,
        "created": listed["files"][0]["created"],
        "downloads": 0,
        "downloaded": None,
    }
    blobs = [
        p for p in (live_server.data_dir / "files").rglob("*") if p.is_file() and not p.name.startswith(".")
    ]
    # SQLite keeps the content in the data folder; PostgreSQL in the database (file_blobs).
    assert len(blobs) == (1 if live_server.database_url.startswith("sqlite") else 0)
    # The server allows no internal target: a URL on the loopback interface is refused unrequested.
    refused = call(live_server, key, "upload", method="POST", url="http://127.0.0.1:9/file.zip")
    assert (refused.status_code, refused.json()["error"]) == (400, "target_not_allowed")
    assert call(live_server, key, "delfile", id=body["id"]).status_code == 200
    assert call(live_server, key, "fetchfile", id=body["id"]).status_code == 404


def test_webhook_add_list_delete_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-hooks", "app")["sellerkey"]
    # An address literal: checked, never contacted.
    added = call(
        live_server, key, "addwebhook", baseurl="https://93.184.216.34/hook?secret=abc", webid="orders"
    )
    assert added.status_code == 200, added.text
    assert added.json()["webid"] == "orders"
    listed = call(live_server, key, "fetchallwebhooks")
    assert "secret" not in listed.text
    assert listed.json()["webhooks"] == [
        {
            "webid": "orders",
            "short_baselink": "https://93.184.216.34/hook",
            "useragent": "licensegate",
            "authed": 1,
            "enabled": 1,
        }
    ]
    assert (
        call(live_server, key, "addwebhook", baseurl="http://10.0.0.1/").json()["error"]
        == "target_not_allowed"
    )
    assert call(live_server, key, "delwebhook", webid="orders").status_code == 200
    assert call(live_server, key, "delwebhook", webid="orders").status_code == 404


def test_chat_channel_post_and_list_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-chat", "app")["sellerkey"]
    assert call(live_server, key, "addchannel", method="POST", name="general", delay="15").status_code == 200
    assert call(live_server, key, "addchannel", name="general").status_code == 409
    assert call(live_server, key, "chatpost", channel="general", message="Welcome!").status_code == 200
    assert call(live_server, key, "chatpost", channel="nope", message="x").status_code == 404
    assert call(live_server, key, "fetchallchats").json()["chats"] == [{"name": "general", "delay": 15}]
    assert call(live_server, key, "clearchannel", name="general").json()["deleted"] == 1
