"""The client API against a real `licensegate serve` with two worker processes, on SQLite and
PostgreSQL: the start-up path of a protected program, and the races across processes."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.live import LiveServer

pytestmark = pytest.mark.server
RACERS = 50


def seller_call(server: LiveServer, sellerkey: str, type_: str, /, **params: Any) -> dict[str, Any]:
    response = httpx.get(
        f"{server.url}/api/seller/", params={"sellerkey": sellerkey, "type": type_, **params}, timeout=10
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def new_app(server: LiveServer, owner: str) -> dict[str, str]:
    created = server.create_app(owner, "app")
    seller_call(server, created["sellerkey"], "updatesettings", authratelimit=100000, clientratelimit=100000)
    return created


async def client_calls(
    server: LiveServer, created: dict[str, str], calls: list[dict[str, str]]
) -> list[httpx.Response]:
    """Open one session per call, then fire all the calls at once."""
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    limits = httpx.Limits(max_connections=RACERS + 10)
    async with httpx.AsyncClient(base_url=server.url, limits=limits, timeout=30) as http:
        inits = await asyncio.gather(
            *(http.post("/api/1.0/", params={**base, "type": "init"}) for _ in calls)
        )
        sessions = [r.json()["sessionid"] for r in inits]
        return await asyncio.gather(
            *(
                http.post("/api/1.0/", params={**base, **call, "sessionid": sid})
                for call, sid in zip(calls, sessions, strict=True)
            )
        )


def test_a_protected_program_starts_up(live_server: LiveServer) -> None:
    created = new_app(live_server, "live-client-1")
    key = seller_call(live_server, created["sellerkey"], "add", expiry="30")["key"]
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    with httpx.Client(base_url=live_server.url, timeout=10) as http:
        init = http.post("/api/1.0/", params={**base, "type": "init", "ver": "1.0"}).json()
        assert init["success"] is True
        session = {**base, "sessionid": init["sessionid"]}
        login = http.post(
            "/api/1.0/", params={**session, "type": "license", "key": key, "hwid": "live-machine-0000000001"}
        )
        assert login.status_code == 200
        body = login.json()
        assert (body["code"], body["ownerid"], body["info"]["username"]) == (68, created["ownerid"], key)
        assert http.post("/api/1.0/", params={**session, "type": "check"}).json()["success"] is True
        wrong = http.post(
            "/api/1.0/", params={**session, "type": "license", "key": key, "hwid": "another-machine-000001"}
        )
        assert (wrong.status_code, wrong.json()["error"]) == (403, "hwid_mismatch")
        unknown = http.post("/api/1.0/", params={**session, "type": "license", "key": "nope"})
        assert (unknown.status_code, unknown.json()["error"]) == (403, "key_not_found")
        assert http.post("/api/1.0/", params={**session, "type": "logout"}).json()["success"] is True


def test_fifty_first_uses_of_one_key_across_two_workers(live_server: LiveServer) -> None:
    created = new_app(live_server, "live-client-2")
    key = seller_call(live_server, created["sellerkey"], "add", expiry="30")["key"]
    calls = [{"type": "license", "key": key, "hwid": f"machine-{i:04d}-0000000000"} for i in range(RACERS)]
    responses = asyncio.run(client_calls(live_server, created, calls))
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 1, [r.json() for r in responses if r.status_code != 403]
    assert {r.json()["error"] for r in responses if r.status_code != 200} <= {"key_used", "hwid_mismatch"}
    users = seller_call(live_server, created["sellerkey"], "fetchallusers")
    assert users["count"] == 1
    assert len(users["users"][0]["hwids"]) == 1


def test_fifty_first_uses_of_one_key_from_its_own_device_across_two_workers(live_server: LiveServer) -> None:
    created = new_app(live_server, "live-client-same-device")
    key = seller_call(live_server, created["sellerkey"], "add", expiry="30")["key"]
    calls = [{"type": "license", "key": key, "hwid": "the-one-machine-0000000001"} for _ in range(RACERS)]
    responses = asyncio.run(client_calls(live_server, created, calls))
    assert [r.status_code for r in responses] == [200] * RACERS, {r.text for r in responses}
    assert {r.json()["info"]["username"] for r in responses} == {key}
    users = seller_call(live_server, created["sellerkey"], "fetchallusers")
    assert users["count"] == 1
    assert len(users["users"][0]["hwids"]) == 1


def test_fifty_first_logins_bind_one_hwid_across_two_workers(live_server: LiveServer) -> None:
    created = new_app(live_server, "live-client-3")
    seller_call(
        live_server,
        created["sellerkey"],
        "adduser",
        user="racer",
        sub="default",
        expiry="30",
        **{"pass": "pw"},
    )
    calls = [
        {"type": "login", "username": "racer", "pass": "pw", "hwid": f"machine-{i:04d}-0000000000"}
        for i in range(RACERS)
    ]
    responses = asyncio.run(client_calls(live_server, created, calls))
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 1
    assert {r.json()["error"] for r in responses if r.status_code != 200} == {"hwid_mismatch"}
    users = seller_call(live_server, created["sellerkey"], "fetchallusers")
    assert len(users["users"][0]["hwids"]) == 1
