"""The seller API against a real `licensegate serve` process (two workers), on SQLite and
PostgreSQL: the README's path from `create-app` to a working seller call, and each group's
operations answering over the wire."""

from __future__ import annotations

import httpx
import pytest

from tests.live import LiveServer, create_app_by_command
from tests.live import seller_call as call

pytestmark = pytest.mark.server


def test_create_app_then_a_seller_call_works(live_server: LiveServer) -> None:
    created = create_app_by_command(live_server.database_url, live_server.data_dir, "live-owner", "live-app")
    response = call(live_server, created["sellerkey"], "setseller")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["app"] == {"name": "live-app", "ownerid": created["ownerid"]}


def test_seller_failures_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-owner2", "app")["sellerkey"]
    assert call(live_server, "", "setseller").status_code == 401
    assert call(live_server, "f" * 32, "setseller").json()["error"] == "unknown_seller_key"
    assert call(live_server, key, "nope").status_code == 400
    assert httpx.put(f"{live_server.url}/api/seller/", timeout=10).status_code == 405


def test_subscription_and_seller_key_groups_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-owner3", "app")["sellerkey"]
    assert call(live_server, key, "addsub", method="POST", name="gold", level="2").status_code == 200
    assert call(live_server, key, "addsub", name="gold", level="2").status_code == 409
    assert call(live_server, key, "pausesub", subscription="gold").status_code == 200
    subs = call(live_server, key, "fetchallsubs").json()["subs"]
    assert [(s["name"], s["paused"]) for s in subs] == [("default", 0), ("gold", 1)]
    limited = call(live_server, key, "addsellerkey", permissions="licenses").json()["sellerkey"]
    assert call(live_server, limited, "fetchallsubs").status_code == 403


def test_healthz_and_openapi(live_server: LiveServer) -> None:
    assert httpx.get(f"{live_server.url}/healthz", timeout=10).json() == {"status": "ok"}
    spec = httpx.get(f"{live_server.url}/openapi.json", timeout=10).json()
    assert spec["openapi"] == "3.1.0"
    assert set(spec["paths"]) == {"/api/1.0/", "/api/seller/"}
    assert "seller.setseller.arguments" in spec["components"]["schemas"]


def test_license_group_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-lic", "app")["sellerkey"]
    made = call(live_server, key, "add", method="POST", expiry="7", amount="3", note="batch")
    assert made.status_code == 200
    keys = made.json()["keys"]
    assert len(keys) == 3
    text = call(live_server, key, "fetchallkeys", format="text")
    assert text.headers["content-type"].startswith("text/plain")
    assert sorted(text.text.split("\n")) == sorted(keys)
    assert call(live_server, key, "verify", key=keys[0]).status_code == 200
    assert call(live_server, key, "del", key=keys[0]).status_code == 200
    assert call(live_server, key, "verify", key=keys[0]).json()["error"] == "key_not_found"
    assert call(live_server, key, "add", expiry="1", level="99").status_code == 404


def test_users_group_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-users", "app")["sellerkey"]
    assert (
        call(live_server, key, "adduser", user="zoe", sub="default", expiry="3", **{"pass": "pw"}).status_code
        == 200
    )
    assert call(live_server, key, "verifyuser", user="zoe", **{"pass": "pw"}).status_code == 200
    assert call(live_server, key, "verifyuser", user="zoe", **{"pass": "no"}).status_code == 403
    subs = call(live_server, key, "usersubs").json()
    assert set(subs) == {"success", "count", "subscriptions"}
    assert subs["count"] == 1
    assert subs["subscriptions"][0]["username"] == "zoe"
    assert call(live_server, key, "usersubs", user="nobody").status_code == 404


def test_variable_groups_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-vars", "app")["sellerkey"]
    assert call(live_server, key, "addvar", name="motd", data="hello & welcome").status_code == 200
    body = call(live_server, key, "fetchallvars").json()
    assert set(body) == {"success", "variables"}
    assert body["variables"][0]["setting_value"] == "hello & welcome"
    assert call(live_server, key, "adduser", user="amy", sub="default", expiry="1").status_code == 200
    assert call(live_server, key, "setvar", user="amy", var="theme", data="dark").status_code == 200
    assert call(live_server, key, "getvar", user="amy", var="theme").json()["response"] == "dark"
    assert call(live_server, key, "getvar", user="amy", var="nope").status_code == 404
