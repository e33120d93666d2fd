"""The Users page: filters in the URL, search through indexes, sorting, keyset paging, export; the
actions on one user (through the seller operations); who sees which users."""

from __future__ import annotations

import csv
import io
import re

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import users
from licensegate.domain.permissions import Reseller, Scope
from licensegate.services import Services
from tests import helpers
from tests.web.pages import Dashboard, Shop, browser, give_balance, make_member, make_shop, text_of

pytestmark = pytest.mark.anyio
USER_CELL = re.compile(r'<td><a href="/dashboard/apps/\d+/users/(\d+)">([^<]+)</a></td>')


def users_on(page_html: str) -> list[str]:
    return [name for _id, name in USER_CELL.findall(page_html)]


def ids_on(page_html: str) -> dict[str, int]:
    return {name: int(user_id) for user_id, name in USER_CELL.findall(page_html)}


async def make_user(
    services: Services,
    shop: Shop,
    name: str,
    *,
    days: float = 30,
    sub: str = "default",
    scope: Scope | None = None,
) -> int:
    return await helpers.make_user(services, shop.app_id, name, sub=sub, days=days, scope=scope)


def path_of(shop: Shop, rest: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/users{rest}"


async def test_the_list_pages_by_keyset_newest_first(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    made = []
    for i in range(30):
        made.append(f"user{i:02}")
        await make_user(services, shop, made[-1])
        clock.advance(5)
    await dash.sign_in("alice")
    first = await dash.get(path_of(shop), params={"size": "25"})
    assert first.status_code == 200
    assert "(30 in all)" in text_of(first.text)
    shown = users_on(first.text)
    assert shown == list(reversed(made))[:25]
    found = re.search(r'<a href="([^"]+)" rel="next">', first.text)
    assert found is not None
    second = await dash.get(found.group(1).replace("&amp;", "&"))
    assert users_on(second.text) == list(reversed(made))[25:]
    by_name = await dash.get(path_of(shop), params={"sort": "username", "size": "25"})
    assert users_on(by_name.text) == made[:25]


async def test_filters_and_search_narrow_the_list(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    db, now = services.db, services.clock.now()
    ann = await make_user(services, shop, "ann")
    await make_user(services, shop, "annabel")
    bob = await make_user(services, shop, "bob", days=1)
    await make_user(services, shop, "cid")
    await users.add_hwid(db, Scope(shop.app_id), "ann", "HWID-ANN-1", now)
    # Raw: only a client login writes the last address, from the address it comes from.
    await db.execute("UPDATE users SET last_ip = '198.51.100.7' WHERE id = ?", ann)
    await users.ban_by_name(db, Scope(shop.app_id), "cid", "chargeback", now, blacklist_as=None)
    await users.pause(db, Scope(shop.app_id), "annabel", now)
    clock.advance(2 * 86400)  # bob's single day has run out
    await dash.sign_in("alice")
    for params, expected in (
        ({"q": "ann"}, ["annabel", "ann"]),  # the start of a username
        ({"q": "HWID-ANN-1"}, ["ann"]),  # a whole HWID
        ({"q": "HWID-ANN"}, []),  # never a scan for part of one
        ({"q": "198.51.100.7"}, ["ann"]),
        ({"status": "banned"}, ["cid"]),
        ({"status": "paused"}, ["annabel"]),
        ({"status": "expired"}, ["bob"]),
        ({"status": "active"}, ["ann"]),
        ({"hwid": "set"}, ["ann"]),
        ({"hwid": "none"}, ["cid", "bob", "annabel"]),
        ({"sub": "default", "q": "b"}, ["bob"]),
    ):
        page = await dash.get(path_of(shop), params=params)
        assert page.status_code == 200, params
        assert users_on(page.text) == expected, params
    assert bob
    nothing = await dash.get(path_of(shop), params={"q": "zed"})
    assert "Nothing matches these filters." in text_of(nothing.text)


async def test_bad_view_parameters_are_a_clear_400(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    for params, message in (
        ({"sort": "password_hash"}, "cannot be sorted by 'password_hash'"),
        ({"status": "gone"}, "is not a choice of the filter 'Status'"),
        ({"sub": "nope"}, "is not a choice of the filter 'Subscription'"),
        ({"login_from": "soon"}, "must look like 2026-01-31"),
        ({"after": "!!"}, "This page link is damaged"),
    ):
        page = await dash.get(path_of(shop), params=params)
        assert page.status_code == 400, params
        assert message in text_of(page.text), params


async def test_export_streams_the_filtered_view(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await make_user(services, shop, "=cmd")
    await make_user(services, shop, "plain")
    await dash.sign_in("alice")
    as_csv = await dash.http.get(path_of(shop, "/export"), params={"format": "csv"})
    assert as_csv.status_code == 200
    assert as_csv.headers["content-disposition"].startswith("attachment;")
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert sorted(row["username"] for row in rows) == ["'=cmd", "plain"]
    as_json = await dash.http.get(path_of(shop, "/export"), params={"format": "json", "q": "plain"})
    body = as_json.json()
    assert [entry["username"] for entry in body] == ["plain"]
    assert body[0]["status"] == "active"
    assert body[0]["subscriptions"][0]["name"] == "default"
    assert all("password" not in str(entry) for entry in body)
    refused = await dash.http.get(path_of(shop, "/export"), params={"format": "xml"})
    assert refused.status_code == 400


async def test_create_a_user_and_a_clear_error_next_to_the_field(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get(path_of(shop))
    made = await dash.post(path_of(shop), {"user": "newbie", "sub": "default", "expiry": "7"})
    assert made.status_code == 200
    assert "The user newbie is created." in text_of(made.text)
    assert "newbie" in users_on(made.text)
    again = await dash.post(path_of(shop), {"user": "newbie", "sub": "default", "expiry": "7"})
    assert again.status_code == 409
    assert re.search(r'id="f-user-error">[^<]*newbie', again.text)
    bad_days = await dash.post(path_of(shop), {"user": "other", "sub": "default", "expiry": "-1"})
    assert bad_days.status_code == 400
    assert 'id="f-expiry-error"' in bad_days.text
    no_csrf = await dash.post(path_of(shop), {"user": "sneaky", "sub": "default", "expiry": "1"}, csrf=False)
    assert no_csrf.status_code == 403
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE username = 'sneaky'") == 0


async def test_ban_shows_what_it_blacklists_and_may_leave_the_ip_out(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    db, now = services.db, services.clock.now()
    ann = await make_user(services, shop, "ann")
    await users.add_hwid(db, Scope(shop.app_id), "ann", "HWID-A", now)
    # Raw: only a client login writes the last address, from the address it comes from.
    await db.execute("UPDATE users SET last_ip = '198.51.100.7' WHERE id = ?", ann)
    await dash.sign_in("alice")
    form = await dash.get(path_of(shop, f"/{ann}/ban"))
    assert form.status_code == 200
    said = text_of(form.text)
    assert "HWID-A" in said
    assert "198.51.100.7" in said
    banned = await dash.post(path_of(shop, f"/{ann}/ban"), {"reason": "refund abuse"})  # box unchecked
    assert "ann is banned" in text_of(banned.text)
    assert await db.fetch_value("SELECT banned_reason FROM users WHERE id = ?", ann) == "refund abuse"
    listed = await db.fetch_all(
        "SELECT kind, value FROM blacklist WHERE app_id = ? ORDER BY kind", shop.app_id
    )
    assert [(row["kind"], row["value"]) for row in listed] == [("hwid", "HWID-A")]
    await dash.post(path_of(shop, f"/{ann}/unban"), {})
    assert await db.fetch_value("SELECT banned_reason FROM users WHERE id = ?", ann) is None
    assert await db.fetch_value("SELECT COUNT(*) FROM blacklist WHERE app_id = ?", shop.app_id) == 0
    await dash.get(path_of(shop, f"/{ann}/ban"))
    await dash.post(path_of(shop, f"/{ann}/ban"), {"reason": "again", "blacklist_ip": "1"})
    assert await db.fetch_value("SELECT COUNT(*) FROM blacklist WHERE app_id = ?", shop.app_id) == 2
    audit = await db.fetch_all(
        "SELECT actor, action FROM audit_log WHERE app_id = ? ORDER BY id", shop.app_id
    )
    assert ("alice (dashboard)", "banuser") in [(row["actor"], row["action"]) for row in audit]


async def test_pause_unpause_reset_and_variables(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    db, now = services.db, services.clock.now()
    ann = await make_user(services, shop, "ann")
    await make_user(services, shop, "bob")
    await users.add_hwid(db, Scope(shop.app_id), "ann", "HWID-A", now)
    await dash.sign_in("alice")
    await dash.get(path_of(shop))
    paused = await dash.post(path_of(shop, f"/{ann}/pause"), {})
    assert "ann's time is paused." in text_of(paused.text)
    again = await dash.post(path_of(shop, f"/{ann}/pause"), {})
    assert "Problem:" in text_of(again.text)  # nothing left to pause: said, not a 500
    await dash.post(path_of(shop, f"/{ann}/unpause"), {})
    assert (
        await db.fetch_value(
            "SELECT COUNT(*) FROM user_subscriptions WHERE user_id = ? AND paused_at IS NOT NULL", ann
        )
        == 0
    )
    asked = await dash.post(path_of(shop, f"/{ann}/reset-hwid"), {})
    assert "Reset ann's HWID?" in text_of(asked.text)  # without script: a confirmation page first
    assert await db.fetch_value("SELECT COUNT(*) FROM user_hwids WHERE user_id = ?", ann) == 1
    await dash.post(path_of(shop, f"/{ann}/reset-hwid"), {"confirmed": "1"})
    assert await db.fetch_value("SELECT COUNT(*) FROM user_hwids WHERE user_id = ?", ann) == 0
    await dash.post(path_of(shop, f"/{ann}/variable"), {"var": "tier", "data": "gold"})
    assert (
        await db.fetch_value("SELECT value FROM user_vars WHERE user_id = ? AND name = 'tier'", ann) == "gold"
    )
    everyone = await dash.post(path_of(shop, "/variable"), {"var": "motd", "data": "hi", "confirmed": "1"})
    assert "set for 2 users" in text_of(everyone.text)


async def test_time_preview_then_apply(services: Services, dash: Dashboard, clock: MovableClock) -> None:
    shop = await make_shop(services)
    ann = await make_user(services, shop, "ann", days=10)
    now = services.clock.now()
    await dash.sign_in("alice")
    form = await dash.get(path_of(shop, f"/{ann}/time"))
    assert form.status_code == 200
    preview = await dash.post(
        path_of(shop, f"/{ann}/time"), {"preview": "1", "sub": "default", "amount": "5", "unit": "days"}
    )
    from licensegate.web.templating import when

    assert when(now + 10 * 86400) in text_of(preview.text)
    assert when(now + 15 * 86400) in text_of(preview.text)
    assert (
        await services.db.fetch_value("SELECT MAX(expires_at) FROM user_subscriptions WHERE user_id = ?", ann)
        == now + 10 * 86400
    )
    bad = await dash.post(path_of(shop, f"/{ann}/time"), {"sub": "default", "amount": "abc", "unit": "days"})
    assert bad.status_code == 400
    assert 'id="f-amount-error"' in bad.text
    await dash.post(path_of(shop, f"/{ann}/time"), {"sub": "default", "amount": "5", "unit": "days"})
    assert (
        await services.db.fetch_value("SELECT MAX(expires_at) FROM user_subscriptions WHERE user_id = ?", ann)
        == now + 15 * 86400
    )
    await dash.post(
        path_of(shop, f"/{ann}/time"),
        {"sub": "default", "amount": "1", "unit": "hours", "direction": "subtract"},
    )
    assert (
        await services.db.fetch_value("SELECT MAX(expires_at) FROM user_subscriptions WHERE user_id = ?", ann)
        == now + 15 * 86400 - 3600
    )


async def test_roles(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "mona", permissions="licenses")
    await make_member(services, shop, "reseller", "rita")
    owners = await make_user(services, shop, "owned-by-alice")
    rita = await give_balance(services, shop, "rita", month=5)
    hers = await make_user(services, shop, "ritas-user", scope=Scope(shop.app_id, Reseller(rita, "rita")))
    other = await make_shop(services, "bea", "Other")
    async with browser(services) as dash:
        await dash.sign_in("mona")
        home = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert f'href="{path_of(shop)}"' not in home.text  # no navigation link
        denied = await dash.get(path_of(shop))
        assert denied.status_code == 403
        assert (await dash.get(path_of(shop, f"/{owners}/ban"))).status_code == 403
    async with browser(services) as dash:
        await dash.sign_in("rita")
        page = await dash.get(path_of(shop))
        assert users_on(page.text) == ["ritas-user"]
        assert (await dash.get(path_of(shop, f"/{owners}/ban"))).status_code == 404
        refused = await dash.post(path_of(shop, f"/{owners}/pause"), {})
        assert refused.status_code == 404
        assert "owned-by-alice" not in refused.text
        assert (await dash.get(path_of(shop, f"/{hers}/ban"))).status_code == 200
    async with browser(services) as dash:
        await dash.sign_in("bea")
        assert (await dash.get(path_of(shop))).status_code == 403
        assert (await dash.get(path_of(other))).status_code == 200
