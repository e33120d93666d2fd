"""The Session, Log and Blacklist groups against a real `licensegate serve` process (two workers),
on SQLite and PostgreSQL. Sessions and logs are written by the client API; here the test writes
them straight into the server's database, as another process would."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from licensegate.store import logs as client_logs
from licensegate.store import tamper as tamper_logs
from licensegate.store.database import Database, open_database
from tests.live import LiveServer
from tests.live import seller_call as call

pytestmark = pytest.mark.server

T = TypeVar("T")


def with_db(server: LiveServer, work: Callable[[Database], Awaitable[T]]) -> T:
    async def run() -> T:
        db = await open_database(server.database_url, pool_size=1)
        try:
            return await work(db)
        finally:
            await db.close()

    return asyncio.run(run())


def new_app(server: LiveServer, owner: str) -> tuple[str, int]:
    created = server.create_app(owner, "app")

    async def app_id(db: Database) -> int:
        found: int = await db.fetch_value("SELECT id FROM apps WHERE ownerid = ?", created["ownerid"])
        return found

    return created["sellerkey"], with_db(server, app_id)


def test_session_group_over_the_wire(live_server: LiveServer) -> None:
    key, app_id = new_app(live_server, "live-sessions")
    assert call(live_server, key, "countsessions").json()["count"] == 0
    assert call(live_server, key, "killall", method="POST").json()["deleted"] == 0
    now = int(time.time())

    async def add_sessions(db: Database) -> None:
        # Raw: sessions from addresses of the test's choosing (every client here is 127.0.0.1).
        for session_id, ip, validated in (("s1", "198.51.100.7", 1), ("s2", "2001:db8::1", 0)):
            await db.execute(
                "INSERT INTO sessions (id, app_id, credential, validated, created_at, expires_at, ip) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                session_id,
                app_id,
                "alice",
                validated,
                now,
                now + 3600,
                ip,
            )

    with_db(live_server, add_sessions)
    counted = call(live_server, key, "countsessions").json()
    assert (counted["count"], counted["validated"]) == (2, 1)
    listed = call(live_server, key, "fetchallsessions").json()
    assert sorted(s["id"] for s in listed["sessions"]) == ["s1", "s2"]
    assert call(live_server, key, "killbyip", method="POST", ip="2001:DB8::1").json()["deleted"] == 1
    assert call(live_server, key, "kill", sessid="s1").status_code == 200
    missing = call(live_server, key, "kill", sessid="s1")
    assert (missing.status_code, missing.json()["error"]) == (404, "session_not_found")
    assert call(live_server, key, "killbyip", ip="nope").json()["error"] == "invalid_ip"
    assert call(live_server, key, "fetchallsessions").json()["count"] == 0


def test_log_group_over_the_wire(live_server: LiveServer) -> None:
    key, app_id = new_app(live_server, "live-logs")
    now = int(time.time())

    async def add_logs(db: Database) -> None:
        await client_logs.insert(
            db, app_id, credential="alice", pcuser="pc", message="one", ip="198.51.100.7", now=now - 5
        )
        await client_logs.insert(
            db, app_id, credential="bob", pcuser="pc", message="two", ip="2001:db8::1", now=now
        )
        await tamper_logs.insert(
            db,
            app_id,
            user_id=None,
            credential="bob",
            hwid="HW-1",
            ip="2001:db8::1",
            reason="hash_mismatch",
            details=None,
            now=now,
        )

    with_db(live_server, add_logs)
    body = call(live_server, key, "fetchalllogs").json()
    assert ([e["logdata"] for e in body["logs"]], body["count"]) == (["two", "one"], 2)
    assert [e["logdata"] for e in call(live_server, key, "fetchalllogs", user="alice").json()["logs"]] == [
        "one"
    ]
    assert call(live_server, key, "fetchalllogs", ip="bad").status_code == 400
    assert (
        call(live_server, key, "dellogsbyip", method="POST", ip="::ffff:198.51.100.7").json()["deleted"] == 1
    )
    assert call(live_server, key, "fetchtamperlogs").json()["logs"][0]["reason"] == "hash_mismatch"
    assert call(live_server, key, "deltamperlogs").json()["deleted"] == 1
    assert call(live_server, key, "dellogs").json()["deleted"] == 1
    assert call(live_server, key, "fetchalllogs").json()["count"] == 0


def test_blacklist_group_over_the_wire(live_server: LiveServer) -> None:
    key, _ = new_app(live_server, "live-blacks")
    added = call(live_server, key, "black", method="POST", ip="10.1.2.3/8", hwid="HW-1", reason="abuse")
    assert added.status_code == 200
    assert added.json() == {"success": True, "message": "Blacklist Addition Successful", "added": 2}
    listed = call(live_server, key, "fetchallblacks").json()["blacklists"]
    assert [(e["type"], e["hwid"], e["ip"]) for e in listed] == [
        ("ip", None, "10.0.0.0/8"),
        ("hwid", "HW-1", None),
    ]
    assert call(live_server, key, "delblack", data="HW-1", blacktype="hwid").status_code == 200
    gone = call(live_server, key, "delblack", data="HW-1", blacktype="hwid")
    assert (gone.status_code, gone.json()["error"]) == (404, "blacklist_not_found")
    assert call(live_server, key, "black", ip="300.1.1.1").json()["error"] == "invalid_ip"
    assert call(live_server, key, "addWhite", ip="::ffff:10.0.0.1").status_code == 200
    assert call(live_server, key, "fetchallwhites").json()["whitelist"][0]["ip"] == "10.0.0.1"
    assert call(live_server, key, "delAllWhites").json()["deleted"] == 1
    assert call(live_server, key, "delWhite", ip="10.0.0.1").status_code == 404
    assert call(live_server, key, "delblacks").json()["deleted"] == 1
