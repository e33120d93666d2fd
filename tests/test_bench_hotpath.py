"""bench/hotpath.py on a seeded database (`--users`): what it measures are real re-checks and
checks of the seeded sessions, each answered as a success, so its figures are those of a call."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest
from bench import hotpath
from bench.signing import logged_in, open_services

from licensegate.app import build_app

pytestmark = pytest.mark.anyio


async def test_the_seeded_rechecks_and_checks_are_logged_in_calls_that_succeed() -> None:
    services = await open_services("lghottest")
    try:
        transport = httpx.ASGITransport(app=build_app(services.settings, services))
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as http:
            login, _sellerkey = await logged_in(services, http)
            logins = await hotpath.seeded_logins(services, login, users=40, hot=6)
            assert len({each["sessionid"] for each in logins}) == 6
            requests = hotpath.requests_of(logins)
            assert {name: len(scopes) for name, scopes in requests.items()} == {
                "healthz": 1,
                "init": 1,
                "re-check 1.0": 6,
                "re-check 1.3": 6,
                "re-check 1.3 (form body)": 6,
                "check": 6,
            }
            app = build_app(services.settings, services)
            for scopes in requests.values():
                await hotpath._run(app, scopes, 2 * len(scopes))  # each in turn, bodies included
            for each in logins:
                assert (await http.post("/api/1.0/", params=each)).json()["success"] is True
                check = {key: each[key] for key in ("ownerid", "name", "sessionid")}
                answer = await http.post("/api/1.0/", params={**check, "type": "check"})
                assert answer.json()["success"] is True
    finally:
        await services.close()
        shutil.rmtree(Path(services.settings.data_dir).parent, ignore_errors=True)
