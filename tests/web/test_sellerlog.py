"""The Seller log page: calls with operation, parameters (secrets removed), status, key name,
address and time; filters by operation, status and key, keyset paged; the filtered view
exported; what it says while the application keeps no seller log, and the setting at hand;
and who reaches it (the logs area: never a reseller, a manager without it, another owner)."""

from __future__ import annotations

import re

import orjson
import pytest

from licensegate.domain import permissions, sellerkeys
from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio
ROW = re.compile(r"<tr>\s*<td class=\"when\">[^<]*</td>\s*<td><code>([^<]+)</code></td>")


def sl(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/seller-log" + (f"/{action}" if action else "")


def operations_on(page_html: str) -> list[str]:
    return ROW.findall(page_html)


async def bot_key(services: Services, shop: Shop) -> tuple[str, str]:
    """A second seller key named "bot"; the key and its id."""
    owner = await sellerkeys.authenticate(services.db, shop.sellerkey, services.clock.now())
    key = await sellerkeys.create(services.db, owner, name="bot", permissions=permissions.ALL, now=0)
    key_id = await services.db.fetch_value("SELECT id FROM seller_keys WHERE name = 'bot'")
    return key, str(key_id)


async def call(dash: Dashboard, key: str, type_: str, **params: str) -> None:
    await dash.http.get("/api/seller/", params={"sellerkey": key, "type": type_, **params})


async def test_off_says_so_then_records_calls_filtered_by_operation_status_and_key(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    key, key_id = await bot_key(services, shop)
    await dash.sign_in("alice")
    off = await dash.get(sl(shop))
    assert "The seller log is off for this application" in text_of(off.text)
    await call(dash, key, "adduser", user="early", expiry="1")
    on = await dash.post(sl(shop, "switch"), {"on": "1"})
    assert "The seller log is on" in text_of(on.text)
    assert "The seller log is off for this application" not in text_of(on.text)

    await call(dash, key, "adduser", user="ann", expiry="30", **{"pass": "hunter2-secret"})
    await call(dash, key, "deluser", user="nobody")
    await call(dash, shop.sellerkey, "fetchallsellerkeys")
    await dash.post(f"/dashboard/apps/{shop.app_id}/global-variables", {"name": "motd", "data": "hi"})
    page = await dash.get(sl(shop))
    assert operations_on(page.text) == ["addvar", "fetchallsellerkeys", "deluser", "adduser"]
    text = text_of(page.text)
    assert "hunter2" not in page.text
    assert '"pass":"[redacted]"' in text
    assert "early" not in text  # made while the log was off
    assert "bot" in text
    assert "Dashboard" in text
    assert "203.0.113.9" in text

    by_op = await dash.get(sl(shop), params={"operation": "adduser"})
    assert operations_on(by_op.text) == ["adduser"]
    refused = await dash.get(sl(shop), params={"status": "404"})
    assert operations_on(refused.text) == ["deluser"]
    by_key = await dash.get(sl(shop), params={"key": key_id})
    assert operations_on(by_key.text) == ["deluser", "adduser"]
    no_key = await dash.get(sl(shop), params={"key": "none"})
    assert operations_on(no_key.text) == ["addvar"]
    both = await dash.get(sl(shop), params={"key": key_id, "status": "200"})
    assert operations_on(both.text) == ["adduser"]


async def test_keyset_pages_and_the_export_of_the_filtered_view(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "updatesettings", sellerlogs="1")
    for i in range(30):
        await seller_op(services, shop, "adduser", user=f"u{i:02d}", expiry="30")
    await dash.sign_in("alice")
    first = await dash.get(sl(shop), params={"size": "25"})
    seen = operations_on(first.text)
    assert len(seen) == 25
    page = first
    while (found := re.search(r'<a href="([^"]+)" rel="next">', page.text)) is not None:
        page = await dash.get(found.group(1).replace("&amp;", "&"))
        seen += operations_on(page.text)
    assert len(seen) == 30
    as_json = await dash.get(sl(shop, "export"), params={"operation": "adduser", "format": "json"})
    entries = orjson.loads(as_json.content)
    assert [e["params"]["user"] for e in entries] == [f"u{i:02d}" for i in range(30)]  # oldest first
    assert entries[0]["status"] == 200
    as_csv = await dash.get(sl(shop, "export"), params={"operation": "adduser"})
    lines = as_csv.text.strip().splitlines()
    assert lines[0] == "id,created_at,operation,params,status,key_name,ip"
    assert len(lines) == 31


async def test_bad_views_are_refused_not_failed(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    for params in ({"status": "299"}, {"key": "abc"}, {"key": "999999"}, {"operation": "nope"}):
        answer = await dash.get(sl(shop), params=params)
        assert answer.status_code == 400, params
        [(name, value)] = params.items()
        assert f'id="flt-{name}-error">&#39;{value}&#39; is not a choice of the filter' in answer.text
        assert "Correct the filter marked above" in text_of(answer.text)
    assert (await dash.get(sl(shop, "export"), params={"format": "xls"})).status_code == 400


async def test_emptying_asks_first(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "updatesettings", sellerlogs="1")
    await seller_op(services, shop, "adduser", user="ann", expiry="30")
    await dash.sign_in("alice")
    await dash.get(sl(shop))
    asked = await dash.post(sl(shop, "clear"), {})
    assert "Delete every entry of the seller log?" in text_of(asked.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM seller_log") == 1
    done = await dash.post(sl(shop, "clear"), {"confirmed": "1"})
    assert "The seller log is emptied." in text_of(done.text)
    # Only the emptying itself is left (recorded as it finished).
    assert operations_on(done.text) == ["delsellerlogs"]


@pytest.mark.parametrize(("who", "granted"), [("bob", ""), ("manager", "licenses"), ("reseller", "")])
async def test_who_may_not_reach_it_gets_the_403_page(services: Services, who: str, granted: str) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "updatesettings", sellerlogs="1")
    await seller_op(services, shop, "adduser", user="secretive", expiry="30")
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(services, shop, who, who, permissions=granted or None)
    before = await services.db.fetch_value("SELECT COUNT(*) FROM seller_log")
    async with browser(services) as dash:
        await dash.sign_in(who)
        answers = [await dash.http.get(sl(shop)), await dash.http.get(sl(shop, "export"))]
        await dash.get("/dashboard/account")
        for action in ("switch", "clear"):
            answers.append(await dash.post(sl(shop, action), {"on": "0", "confirmed": "1"}, follow=False))
        for answer in answers:
            assert answer.status_code == 403
            assert "Not allowed" in answer.text
            assert "secretive" not in answer.text
    assert await services.db.fetch_value("SELECT COUNT(*) FROM seller_log") == before
    assert await services.db.fetch_value("SELECT seller_log FROM apps WHERE id = ?", shop.app_id) == 1


async def test_a_manager_with_the_logs_area_reads_it_without_the_setting(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "mo", permissions="logs")
    async with browser(services) as dash:
        await dash.sign_in("mo")
        page = await dash.get(sl(shop))
        assert page.status_code == 200
        assert "which your account cannot change" in text_of(page.text)
        assert "Turn the seller log on" not in page.text
