"""A ban, a pause or a password change ends the client's session across worker processes (issue
10 item 1): against a real `licensegate serve` with two workers, on SQLite and PostgreSQL, the
client's session is used on both workers (fresh connections spread over them) and the next call
after the owner's action is refused whichever worker answers it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.api.test_live_client import new_app, seller_call
from tests.live import LiveServer

pytestmark = pytest.mark.server
CALLS = 8  # over new connections, so both workers serve the session before and after


def client_call(server: LiveServer, base: dict[str, str], type_: str, **params: str) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=10) as http:  # a new connection each time
        return http.post("/api/1.0/", params={**base, "type": type_, **params})


def logged_in(server: LiveServer, created: dict[str, str], username: str, password: str) -> dict[str, str]:
    base = {"ownerid": created["ownerid"], "name": created["name"]}
    session = {**base, "sessionid": client_call(server, base, "init").json()["sessionid"]}
    login = client_call(server, session, "login", username=username, **{"pass": password})
    assert login.status_code == 200, login.text
    for _ in range(CALLS):
        assert client_call(server, session, "check").json()["success"] is True
    return session


def refused_everywhere(server: LiveServer, session: dict[str, str], error: str) -> None:
    for type_, params in [("check", {}), ("var", {"varid": "v"}), ("getvar", {"var": "v"})] * (CALLS // 2):
        answer: dict[str, Any] = client_call(server, session, type_, **params).json()
        assert (answer["success"], answer["error"]) == (False, error), (type_, answer)


@pytest.mark.parametrize(
    ("action", "params", "error"),
    [
        ("banuser", {"user": "{user}"}, "session_not_found"),
        ("pauseuser", {"username": "{user}"}, "session_not_found"),
        ("resetpw", {"user": "{user}", "passwd": "changed"}, "session_not_found"),
        ("pausesub", {"subscription": "default"}, "session_not_found"),
        ("pauseapp", {}, "session_not_found"),
    ],
)
def test_the_next_call_after_the_owners_action_is_refused(
    live_server: LiveServer, action: str, params: dict[str, str], error: str
) -> None:
    created = new_app(live_server, f"live-authority-{action}")
    key = created["sellerkey"]
    seller_call(live_server, key, "adduser", user="target", sub="default", expiry="30", **{"pass": "pw"})
    seller_call(live_server, key, "adduser", user="other", sub="default", expiry="30", **{"pass": "pw"})
    target = logged_in(live_server, created, "target", "pw")
    other = logged_in(live_server, created, "other", "pw")
    seller_call(live_server, key, action, **{k: v.format(user="target") for k, v in params.items()})
    refused_everywhere(live_server, target, error)
    if action not in ("pausesub", "pauseapp"):  # those reach every user of the application
        for _ in range(CALLS):
            assert client_call(live_server, other, "check").json()["success"] is True
