"""Application settings, the seller log and the audit log against a real `licensegate serve`
process (two workers), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.live import LiveServer
from tests.live import seller_call as call

pytestmark = pytest.mark.server


def test_settings_round_trip_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-settings", "app")["sellerkey"]
    before = call(live_server, key, "getsettings").json()
    assert before["settings"]["version"] == "1.0"
    assert before["enabled"] is True

    hook = "https://discord.example/api/webhooks/1/livetoken"
    updated = call(live_server, key, "updatesettings", method="POST", ver="4.2", session="3600", webhook=hook)
    assert updated.status_code == 200
    assert updated.json()["settings"]["session_seconds"] == 3600
    # Whichever worker answers, the change is there and the URL never comes back.
    for _ in range(4):
        got = call(live_server, key, "getsettings")
        assert got.json()["version"] == "4.2"
        assert got.json()["settings"]["log_webhook"] == "set"
        assert "livetoken" not in got.text

    refused = call(live_server, key, "updatesettings", session="59")
    assert (refused.status_code, refused.json()["error"]) == (400, "number_out_of_range")


def test_stats_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-stats", "app")["sellerkey"]
    assert call(live_server, key, "add", expiry="1", amount="3").status_code == 200
    assert call(live_server, key, "adduser", user="sam", expiry="1").status_code == 200
    stats = call(live_server, key, "stats").json()
    assert stats["keys"] == {"unused": 3, "used": 0, "banned": 0, "total": 3}
    assert (stats["users"], stats["subscriptions"]) == (1, 1)


def test_seller_and_audit_logs_over_the_wire(live_server: LiveServer) -> None:
    key = live_server.create_app("live-logs", "app")["sellerkey"]
    assert call(live_server, key, "updatesettings", sellerlogs="1").status_code == 200
    assert call(live_server, key, "adduser", user="kim", expiry="1", **{"pass": "hunter2"}).status_code == 200
    assert call(live_server, key, "adduser", user="kim", expiry="1").status_code == 409

    seller_logs = call(live_server, key, "fetchsellerlogs")
    assert [(e["operation"], e["status"]) for e in seller_logs.json()["logs"]] == [
        ("adduser", 409),
        ("adduser", 200),
    ]
    assert "hunter2" not in seller_logs.text

    audit = call(live_server, key, "fetchauditlogs").json()
    assert [e["action"] for e in audit["logs"]] == ["adduser", "updatesettings"]
    assert audit["logs"][1]["after"] == {"seller_log": 1}
    verified = call(live_server, key, "verifyauditlog").json()
    assert (verified["valid"], verified["entries"]) == (True, 2)
