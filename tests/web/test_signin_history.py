"""The sign-in history on the account page: every attempt on the account (signed in, wrong
password, wrong second step, locked out, disabled) with time, address, browser, newest first,
paged, and bounded per account."""

from __future__ import annotations

import re

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import signin, totp
from licensegate.services import Services
from licensegate.store import signinhistory
from tests.web.pages import PASSWORD, Dashboard, browser, make_owner, text_of
from tests.web.test_second_factor import enrol

pytestmark = pytest.mark.anyio


def attempts_of(page: str) -> list[str]:
    table = page.split('aria-label="Sign-in history"', 1)[1].split("</table>", 1)[0]
    return [text_of(row) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]


async def results(services: Services, username: str) -> list[str]:
    rows = await services.db.fetch_all(
        "SELECT h.result FROM signin_history h JOIN accounts a ON a.id = h.account_id "
        "WHERE a.username = ? ORDER BY h.id",
        username,
    )
    return [row["result"] for row in rows]


async def test_each_outcome_is_recorded_and_shown(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    agent = {"User-Agent": "Mozilla/5.0 HistoryTest"}
    await dash.get("/dashboard/signin")
    wrong = await dash.post(
        "/dashboard/signin", {"username": "alice", "password": "nope nope"}, headers=agent
    )
    assert wrong.status_code == 401
    await dash.get("/dashboard/signin")
    await dash.post("/dashboard/signin", {"username": "nobody", "password": "x"})  # no account: no row
    await dash.sign_in("alice")
    secret, _codes = await enrol(dash, clock)
    clock.advance(90)
    async with browser(services) as other:
        await other.sign_in("alice")
        code = totp.code_at(secret, totp.step_of(clock.now()))
        bad = await other.post(
            "/dashboard/signin/second-factor", {"code": "000000" if code != "000000" else "1"}
        )
        assert bad.status_code == 401
        done = await other.post("/dashboard/signin/second-factor", {"code": code})
        assert done.url.path == "/dashboard/apps"
    assert await results(services, "alice") == ["wrong_password", "signed_in", "wrong_code", "signed_in"]
    page = await dash.get("/dashboard/account")
    rows = attempts_of(page.text)
    assert len(rows) == 4
    assert rows[0].endswith("Signed in")
    assert "Wrong second step" in rows[1]
    assert "203.0.113.9" in rows[3]
    assert "Mozilla/5.0 HistoryTest" in rows[3]
    assert rows[3].endswith("Wrong password")


async def test_a_lock_out_and_a_disabled_account_are_recorded(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    for _ in range(services.settings.dashboard_signin_limit):
        await dash.get("/dashboard/signin")
        await dash.post("/dashboard/signin", {"username": "alice", "password": "nope nope"})
    await dash.get("/dashboard/signin")
    locked = await dash.post("/dashboard/signin", {"username": "alice", "password": PASSWORD})
    assert locked.status_code == 429
    limit = services.settings.dashboard_signin_limit
    for _ in range(3):  # a flood of refused attempts writes one row, not one each
        await dash.post("/dashboard/signin", {"username": "alice", "password": PASSWORD})
    assert await results(services, "alice") == ["wrong_password"] * limit + ["locked_out"]
    await make_owner(services, "dora")
    await services.db.execute("UPDATE accounts SET disabled = 1 WHERE username = 'dora'")
    await dash.get("/dashboard/signin")
    refused = await dash.post("/dashboard/signin", {"username": "dora", "password": PASSWORD})
    assert refused.status_code == 401
    assert signin.FAILED in text_of(refused.text)  # the same words as a wrong password
    assert await results(services, "dora") == ["disabled"]


async def test_the_history_is_paged_and_bounded(services: Services, dash: Dashboard) -> None:
    account = await make_owner(services)
    for n in range(signin.HISTORY_PAGE + 5):
        await signinhistory.record(
            services.db, account.id, at=1_000 + n, ip=f"192.0.2.{n}", user_agent=None, result="wrong_password"
        )
    await dash.sign_in("alice")
    first = await dash.get("/dashboard/account")
    rows = attempts_of(first.text)
    assert len(rows) == signin.HISTORY_PAGE
    assert rows[0].endswith("Signed in")
    older = re.search(r'href="(/dashboard/account\?before=\d+)#h-signins"', first.text)
    assert older is not None
    second = await dash.get(older.group(1))
    rest = attempts_of(second.text)
    assert len(rest) == 6
    assert "192.0.2.0" in rest[-1]
    assert "Newest attempts" in text_of(second.text)
    for n in range(signinhistory.KEEP):
        await signinhistory.record(
            services.db, account.id, at=5_000 + n, ip=None, user_agent=None, result="wrong_password"
        )
    kept = await services.db.fetch_value(
        "SELECT COUNT(*) FROM signin_history WHERE account_id = ?", account.id
    )
    assert kept == signinhistory.KEEP


async def test_a_lock_out_at_the_second_step_is_recorded_once(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    await enrol(dash, clock)
    limit = services.settings.dashboard_signin_limit
    async with browser(services) as other:
        await other.sign_in("alice")
        wrong = 0
        while (await other.post("/dashboard/signin/second-factor", {"code": "bad-code"})).status_code != 429:
            wrong += 1
        assert wrong >= limit - 1  # (enrolling counted one code too)
        locked = await other.post("/dashboard/signin/second-factor", {"code": "bad-code"})
        assert locked.status_code == 429
    assert await results(services, "alice") == ["signed_in"] + ["wrong_code"] * wrong + ["locked_out"]
