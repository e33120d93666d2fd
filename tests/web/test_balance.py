"""A reseller's balance: its own Balance page (by duration, with the history of every change),
the history written by keys made through the dashboard and through the seller API and by the
owner's changes, and the owner reading the same history on the Seller team page."""

from __future__ import annotations

import re

import pytest

from licensegate.domain import team
from licensegate.domain.permissions import identity_of_account
from licensegate.services import Services
from licensegate.store import team as team_store
from tests.web.pages import PASSWORD, Dashboard, Shop, browser, make_shop, text_of

pytestmark = pytest.mark.anyio


async def make_reseller(services: Services, shop: Shop, username: str = "rita", levels: str = "1") -> str:
    """A reseller of the shop; its seller key."""
    created = await team.create_account(
        services.db,
        services.passwords,
        await identity_of_account(services.db, shop.app_id, shop.owner.id),
        role="reseller",
        username=username,
        password=PASSWORD,
        email=None,
        key_levels=levels,
        permissions=None,
        now=services.clock.now(),
    )
    return created.sellerkey


def rows_of(page: str) -> list[str]:
    """The history table's rows, as text."""
    table = page.split('aria-label="Balance history"', 1)[1].split("</table>", 1)[0]
    return [text_of(row) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]


async def test_the_balance_page_shows_every_change_made_in_the_dashboard_and_the_seller_api(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    sellerkey = await make_reseller(services, shop)
    app = f"/dashboard/apps/{shop.app_id}"
    async with browser(services) as owner:
        await owner.sign_in("alice")
        await owner.get(f"{app}/team/rita")
        changed = await owner.post(f"{app}/team/rita/balance", {"month": "5", "lifetime": "1"})
        assert changed.status_code == 200
    await dash.sign_in("rita")
    home = await dash.get(f"{app}/")
    assert f'href="{app}/balance"' in home.text  # its navigation offers the page
    made = await dash.post(
        f"{app}/licenses/create", {"amount": "2", "level": "1", "duration": "1", "unit": "months"}
    )
    assert made.status_code == 200
    api = await dash.http.get(
        "/api/seller/",
        params={"sellerkey": sellerkey, "type": "add", "expiry": "30", "amount": "1", "level": "1"},
    )
    assert api.status_code == 200, api.text
    refused = await dash.http.get(
        "/api/seller/",
        params={"sellerkey": sellerkey, "type": "add", "expiry": "30", "amount": "5", "level": "1"},
    )
    assert refused.status_code == 403  # two left: nothing spent, nothing recorded
    page = await dash.get(f"{app}/balance")
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "Your balance" in shown
    assert re.search(r'id="balance-month">2<', page.text)
    assert re.search(r'id="balance-lifetime">1<', page.text)
    assert "Levels you may sell: 1" in shown
    rows = rows_of(page.text)
    assert len(rows) == 4
    assert "Month -1 2 rita (seller API, key '" in rows[0]
    assert rows[0].endswith("1 key generated (level 1)")
    assert "Month -2 3 rita (dashboard) 2 keys generated (level 1)" in rows[1]
    assert "Lifetime +1 1 alice (dashboard) changed by the owner" in rows[2]
    assert "Month +5 5 alice (dashboard) changed by the owner" in rows[3]
    # The owner reads the same history on the reseller's page of the Seller team.
    async with browser(services) as owner:
        await owner.sign_in("alice")
        member = await owner.get(f"{app}/team/rita")
        assert rows_of(member.text) == rows
        # ... and the owner's own Balance URL is not its page (the team page is).
        assert (await owner.get(f"{app}/balance")).status_code == 403


async def test_history_is_paged_and_bounded(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await make_reseller(services, shop)
    member = await team.get_member(services.db, shop.app_id, "rita", "reseller")
    account_id = member["account_id"]
    for n in range(30):
        await team.add_balance(services.db, shop.app_id, "rita", {"day": 1}, actor="alice", now=1_000 + n)
    app = f"/dashboard/apps/{shop.app_id}"
    await dash.sign_in("rita")
    first = await dash.get(f"{app}/balance")
    rows = rows_of(first.text)
    assert len(rows) == team.HISTORY_PAGE
    assert "Day +1 30 alice" in rows[0]
    older = re.search(r'href="([^"]+\?before=\d+)#h-history"', first.text)
    assert older is not None
    second = await dash.get(older.group(1).replace("&amp;", "&"))
    rest = rows_of(second.text)
    assert len(rest) == 30 - team.HISTORY_PAGE
    assert "Day +1 1 alice" in rest[-1]
    assert "Newest changes" in text_of(second.text)
    assert (await dash.get(f"{app}/balance?before=abc")).status_code == 200  # ignored, not a 500
    # The newest HISTORY_KEEP rows of a reseller are kept, no more.
    await team_store.record_changes(
        services.db,
        account_id,
        [("day", 1, n) for n in range(team_store.HISTORY_KEEP)],
        at=2_000,
        actor="alice",
        reason="many",
    )
    kept = await services.db.fetch_value(
        "SELECT COUNT(*) FROM balance_history WHERE account_id = ?", account_id
    )
    assert kept == team_store.HISTORY_KEEP


async def test_a_refused_spend_or_change_leaves_no_history(services: Services) -> None:
    shop = await make_shop(services)
    await make_reseller(services, shop)
    member = await team.get_member(services.db, shop.app_id, "rita", "reseller")
    with pytest.raises(Exception, match="nothing was changed"):
        await team.add_balance(services.db, shop.app_id, "rita", {"day": -1}, actor="alice", now=1)
    rows, older = await team.balance_history(services.db, member["account_id"])
    assert (rows, older) == ([], None)


async def test_only_resellers_reach_a_balance_page(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await make_reseller(services, shop)
    other = await make_shop(services, "bob", "Bob Shop")
    await make_reseller(services, other, "rob")
    await dash.sign_in("rob")
    assert (await dash.get(f"/dashboard/apps/{shop.app_id}/balance")).status_code == 403
    mine = await dash.get(f"/dashboard/apps/{other.app_id}/balance")
    assert mine.status_code == 200
    assert "rita" not in text_of(mine.text)


async def test_a_reseller_makes_only_its_levels_within_its_balance(
    services: Services, dash: Dashboard
) -> None:
    from licensegate.domain import subscriptions

    shop = await make_shop(services)
    await subscriptions.create(services.db, shop.app_id, name="gold", level="2", now=services.clock.now())
    await make_reseller(services, shop, levels="1")
    await team.add_balance(services.db, shop.app_id, "rita", {"month": 3}, actor="alice", now=1)
    app = f"/dashboard/apps/{shop.app_id}"
    await dash.sign_in("rita")
    form = await dash.get(f"{app}/licenses/create")
    levels = form.text.split('id="f-level"', 1)[1].split("</select>", 1)[0]
    assert re.findall(r'<option value="([^"]*)"', levels) == ["1"]  # only the levels it may sell
    other_level = await dash.post(
        f"{app}/licenses/create", {"amount": "1", "level": "2", "duration": "1", "unit": "months"}
    )
    assert other_level.status_code == 403
    too_many = await dash.post(
        f"{app}/licenses/create", {"amount": "4", "level": "1", "duration": "1", "unit": "months"}
    )
    assert too_many.status_code == 403
    assert "balance" in text_of(too_many.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM license_keys") == 0
    # A user it creates on the Users page is paid for, and says so in the history.
    await dash.get(f"{app}/users")
    made = await dash.post(f"{app}/users", {"user": "buyer", "sub": "default", "expiry": "30"})
    assert made.status_code == 200, text_of(made.text)[:300]
    page = await dash.get(f"{app}/balance")
    assert re.search(r'id="balance-month">2<', page.text)
    rows = rows_of(page.text)
    assert len(rows) == 2
    assert "Month -1 2 rita (dashboard) user buyer created" in rows[0]


async def test_time_added_and_users_extended_by_a_reseller_are_in_its_history(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    sellerkey = await make_reseller(services, shop)
    await team.add_balance(services.db, shop.app_id, "rita", {"week": 10}, actor="alice", now=1)

    async def call(type_: str, **params: str) -> dict[str, object]:
        answer = await dash.http.get("/api/seller/", params={"sellerkey": sellerkey, "type": type_, **params})
        body: dict[str, object] = answer.json()
        assert answer.status_code == 200, body
        return body

    key = str((await call("add", expiry="7", amount="1", level="1"))["key"])
    await call("addtime", time="7", key=key)
    await call("adduser", user="u1", sub="default", expiry="7", **{"pass": "pw pw pw pw"})
    await call("adduser", user="u2", sub="default", expiry="7", **{"pass": "pw pw pw pw"})
    await call("extend", user="all", sub="default", expiry="7")
    member = await team.get_member(services.db, shop.app_id, "rita", "reseller")
    rows, _older = await team.balance_history(services.db, member["account_id"])
    assert [(r["bucket"], r["amount"], r["balance_after"], r["reason"]) for r in rows] == [
        ("week", -2, 4, "2 users extended on default"),
        ("week", -1, 6, "user u2 created"),
        ("week", -1, 7, "user u1 created"),
        ("week", -1, 8, f"time added to the key {key}"),
        ("week", -1, 9, "1 key generated (level 1)"),
        ("week", 10, 10, "changed by the owner"),
    ]
    assert all(r["actor"] == "rita (seller API, key 'rita')" for r in rows[:-1])
