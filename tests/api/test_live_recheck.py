"""What each worker holds of a logged-in session (domain/recheck.py) against real `licensegate
serve` processes: with two workers, on SQLite and PostgreSQL, a session re-checked on both workers
(fresh connections spread over them) is refused by whichever answers next once the owner changes
what decides its login; and two nodes (two `serve` processes over one PostgreSQL database) refuse
on the second node what was changed through the first: at once when they read the login versions
at every call (`LICENSEGATE_RECHECK_CONFIRM=query`), once announced in notify mode (the default)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate.keyring import KEY_FILE_NAME
from tests import databases
from tests.api.test_live_client import new_app, seller_call
from tests.live import LiveServer, start_server

pytestmark = pytest.mark.server
CALLS = 12  # over new connections, so every worker serves the session before and after
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


def client_call(server: LiveServer, session: dict[str, str], type_: str, **params: str) -> dict[str, Any]:
    with httpx.Client(base_url=server.url, timeout=10) as http:  # a new connection each time
        answer: dict[str, Any] = http.post("/api/1.0/", params={**session, "type": type_, **params}).json()
        return answer


def logged_in(server: LiveServer, created: dict[str, str], key: str) -> dict[str, str]:
    """A session logged in with `key`, re-checked and checked on every worker (held by each)."""
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    session = {**base, "sessionid": client_call(server, base, "init")["sessionid"]}
    for _ in range(CALLS):
        assert client_call(server, session, "license", key=key, hwid=HWID)["success"] is True
        assert client_call(server, session, "check")["success"] is True
    return session


def refused(server: LiveServer, session: dict[str, str], key: str, recheck: str, check: str | None) -> None:
    for _ in range(CALLS):
        answer = client_call(server, session, "license", key=key, hwid=HWID)
        assert (answer["success"], answer.get("error")) == (False, recheck), answer
        answer = client_call(server, session, "check")
        assert answer["success"] is (check is None), answer
        assert answer.get("error") == check, answer


@pytest.mark.parametrize(
    ("action", "params", "recheck", "check"),
    [
        ("black", {"hwid": HWID}, "blacklisted", None),
        ("del", {"key": "{key}"}, "key_not_found", None),
        ("updatesettings", {"minhwid": str(len(HWID) + 1)}, "hwid_too_short", None),
        ("banuser", {"user": "{key}"}, "session_not_found", "session_not_found"),
        ("updatesettings", {"enabled": "0"}, "app_disabled", "app_disabled"),
    ],
)
def test_every_worker_refuses_the_next_call_after_the_owners_change(
    live_server: LiveServer, action: str, params: dict[str, str], recheck: str, check: str | None
) -> None:
    created = new_app(live_server, f"live-recheck-{action}-{recheck}")
    sellerkey = created["sellerkey"]
    key = seller_call(live_server, sellerkey, "add", expiry="30")["key"]
    session = logged_in(live_server, created, key)
    seller_call(
        live_server, sellerkey, action, **{name: value.format(key=key) for name, value in params.items()}
    )
    refused(live_server, session, key, recheck, check)


def test_a_ban_through_one_of_two_nodes_refuses_on_the_other_at_once(tmp_path: Path) -> None:
    """Two nodes: two `serve` processes over one PostgreSQL database (one deployment key, no
    Redis), reading the login versions at every call: the second holds the session; a blacklist
    entry and then a ban made through the first refuse the second's very next re-check."""
    url = databases.take_live_database()
    nodes = []
    try:
        nodes.append(start_server(url, tmp_path, 1, LICENSEGATE_RECHECK_CONFIRM="query"))
        nodes.append(
            start_server(url, tmp_path, 1, log_name="second.log", LICENSEGATE_RECHECK_CONFIRM="query")
        )
        first, second = nodes
        created = new_app(first, "live-recheck-nodes")
        sellerkey = created["sellerkey"]
        key = seller_call(first, sellerkey, "add", expiry="30")["key"]
        session = logged_in(second, created, key)
        seller_call(first, sellerkey, "black", hwid=HWID)
        refused(second, session, key, "blacklisted", None)
        seller_call(first, sellerkey, "delblack", data=HWID, blacktype="hwid")
        assert client_call(second, session, "license", key=key, hwid=HWID)["success"] is True
        seller_call(first, sellerkey, "banuser", user=key)
        refused(second, session, key, "session_not_found", "session_not_found")
    finally:
        for node in nodes:
            node.stop()
        databases.give_back_live_database(url)


def refused_soon(
    server: LiveServer, session: dict[str, str], key: str, recheck: str, check: str | None
) -> None:
    """Re-checks until one is refused with `recheck` (polled, with a generous deadline), then
    `refused`: every following call too."""
    deadline = time.monotonic() + 30
    while client_call(server, session, "license", key=key, hwid=HWID).get("error") != recheck:
        assert time.monotonic() < deadline, f"not refused ({recheck}) within 30 s"
        time.sleep(0.005)
    refused(server, session, key, recheck, check)


def test_a_ban_through_one_of_two_machines_is_refused_on_the_other_once_announced(tmp_path: Path) -> None:
    """Notify mode (the default), two machines: two `serve` processes with data folders of their
    own (one deployment key) over one PostgreSQL database. The second holds the session without
    reading its versions; a blacklist entry, then a ban, through the first are refused by the
    second within the announcements' delay."""
    url = databases.take_live_database()
    nodes = []
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir(mode=0o700)
    try:
        nodes.append(start_server(url, one, 2))
        shutil.copy2(one / KEY_FILE_NAME, two / KEY_FILE_NAME)
        nodes.append(start_server(url, two, 2))
        first, second = nodes
        created = new_app(first, "live-recheck-machines")
        sellerkey = created["sellerkey"]
        key = seller_call(first, sellerkey, "add", expiry="30")["key"]
        session = logged_in(second, created, key)
        seller_call(first, sellerkey, "black", hwid=HWID)
        refused_soon(second, session, key, "blacklisted", None)
        seller_call(first, sellerkey, "delblack", data=HWID, blacktype="hwid")
        deadline = time.monotonic() + 30
        while client_call(second, session, "license", key=key, hwid=HWID)["success"] is not True:
            assert time.monotonic() < deadline, "not admitted again within 30 s"
            time.sleep(0.005)
        seller_call(first, sellerkey, "banuser", user=key)
        refused_soon(second, session, key, "session_not_found", "session_not_found")
    finally:
        for node in nodes:
            node.stop()
        databases.give_back_live_database(url)
