"""Reseller & Manager over the wire: a real `licensegate serve` process with two workers, on
SQLite and PostgreSQL. Concurrent key generation by one reseller, spread over both worker
processes, never spends more than its balance."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.live import LiveServer
from tests.live import seller_call as call

pytestmark = pytest.mark.server


def test_concurrent_reseller_generation_spends_exactly_the_balance(live_server: LiveServer) -> None:
    owner = live_server.create_app("live-team-owner", "app")["sellerkey"]
    created = call(
        live_server, owner, "addAccount", method="POST", role="Reseller", user="live-res", **{"pass": "pw"}
    )
    assert created.status_code == 200, created.text
    reseller = created.json()["sellerkey"]
    assert call(live_server, owner, "setbalance", username="live-res", month="10").status_code == 200

    # Twelve one-key calls: whatever order the workers serve them in, all ten units get spent.
    amounts = [1] * 12 + [2] * 7 + [3] * 6
    random.Random(11).shuffle(amounts)
    with ThreadPoolExecutor(max_workers=len(amounts)) as pool:
        responses = list(
            pool.map(
                lambda n: call(live_server, reseller, "add", method="POST", expiry="30", amount=str(n)),
                amounts,
            )
        )
    outcomes = {(r.status_code, r.json().get("error")) for r in responses}
    assert outcomes <= {(200, None), (403, "insufficient_balance")}, outcomes
    made = [key for r in responses if r.status_code == 200 for key in r.json()["keys"]]
    assert len(made) == len(set(made)) == 10

    info = call(live_server, owner, "getbalance", username="live-res").json()
    assert info["balance"]["month"] == 0
    assert call(live_server, owner, "fetchallkeys").json()["count"] == 10
    assert call(live_server, reseller, "fetchallkeys").json()["count"] == 10


def test_team_accounts_over_the_wire(live_server: LiveServer) -> None:
    owner = live_server.create_app("live-team-owner2", "app")["sellerkey"]
    manager = call(
        live_server, owner, "addAccount", role="manager", user="live-boss", perms="licenses", **{"pass": "pw"}
    )
    assert manager.status_code == 200, manager.text
    manager_key = manager.json()["sellerkey"]
    assert call(live_server, manager_key, "add", expiry="1").status_code == 200
    assert call(live_server, manager_key, "fetchteam").json()["error"] == "permission_denied"
    assert (
        call(live_server, owner, "addAccount", role="Reseller", user="live-boss", **{"pass": "x"}).status_code
        == 409
    )
    team = call(live_server, owner, "fetchteam").json()
    assert team["managers"] == [{"username": "live-boss", "permissions": ["licenses"]}]
    assert call(live_server, owner, "deleteAccount", user="live-boss").status_code == 200
    assert call(live_server, manager_key, "setseller").json()["error"] == "unknown_seller_key"
