"""The Audit log page: entries with who, what, target, before → after, address and time; filters
by actor, action and target, keyset paged; the hash chain verified on the page (intact since its
first entry, or the entry where it breaks); the filtered view exported; and only the
application's owner reaching it (never a manager, even one with every area, nor a reseller)."""

from __future__ import annotations

import re

import orjson
import pytest

from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, browser, joined, make_member, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio
ROW = re.compile(
    r"<tr>\s*<td class=\"when\">[^<]*</td>\s*"
    r"<td><a [^>]*>([^<]+)</a></td>\s*<td><a [^>]*><code>([^<]+)</code>"
)


def al(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/audit-log" + (f"/{action}" if action else "")


def rows_on(page_html: str) -> list[tuple[str, str]]:
    return ROW.findall(joined(page_html))


async def fill(services: Services, shop: Shop, users: int) -> None:
    for i in range(users):
        await seller_op(services, shop, "adduser", user=f"u{i:02d}", expiry="30")
    await seller_op(services, shop, "addvar", name="motd", data="hello")


async def test_entries_filtered_and_paged_by_keyset(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await fill(services, shop, 30)
    await dash.sign_in("alice")
    first = await dash.get(al(shop), params={"size": "25"})
    assert first.status_code == 200
    shown = rows_on(first.text)
    assert len(shown) == 25
    assert shown[0] == ("alice (test)", "addvar")  # newest first
    text = text_of(first.text)
    assert re.search(r'— → \{[^}]*"name":"motd"', text)
    seen = list(shown)
    page = first
    while (found := re.search(r'<a href="([^"]+)" rel="next">', page.text)) is not None:
        page = await dash.get(found.group(1).replace("&amp;", "&"))
        seen += rows_on(page.text)
    assert len(seen) == 31

    adds = rows_on((await dash.get(al(shop), params={"action": "adduser"})).text)
    assert len(adds) == 30
    one = await dash.get(al(shop), params={"target": "user:u07"})
    assert rows_on(one.text) == [("alice (test)", "adduser")]
    assert "user:u07" in text_of(one.text)
    by_actor = await dash.get(al(shop), params={"actor": "alice (test)", "action": "addvar"})
    assert rows_on(by_actor.text) == [("alice (test)", "addvar")]
    nobody = await dash.get(al(shop), params={"actor": "mallory"})
    assert "Nothing matches these filters." in text_of(nobody.text)
    # A cell links to its own filter.
    assert f'href="{al(shop)}?target=user%3Au07"' in first.text


async def test_bad_views_are_refused_not_failed(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    for params in ({"after": "not-a-cursor!"}, {"size": "7"}, {"sort": "actor"}):
        answer = await dash.get(al(shop), params=params)
        assert answer.status_code == 400, params
        assert "Not accepted" in text_of(answer.text)
    # A filter's value is refused next to its field, the page otherwise shown.
    marked = await dash.get(al(shop), params={"actor": "a" * 129})
    assert marked.status_code == 400
    assert '<p class="error" id="flt-actor-error">The filter &#39;Who&#39; is too long.</p>' in marked.text
    assert "Correct the filter marked above" in text_of(marked.text)
    assert (await dash.get(al(shop, "export"), params={"actor": "a" * 129})).status_code == 400
    assert (await dash.get(al(shop, "export"), params={"format": "xml"})).status_code == 400


async def test_the_chain_is_verified_on_the_page_and_a_break_is_located(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    empty = text_of((await dash.get(al(shop, "verify"))).text)
    assert "Intact There are no entries yet." in empty
    await fill(services, shop, 3)
    listed = await dash.get(al(shop))
    assert f'hx-get="{al(shop)}/verify"' in listed.text  # checked as soon as the page is shown
    assert "Check the chain now" in text_of(listed.text)  # or by its link, without script
    intact = text_of((await dash.get(al(shop, "verify"))).text)
    assert re.search(r"Intact since .+: all 4 entries fit the chain\.", intact)
    second = await services.db.fetch_value(
        "SELECT id FROM audit_log WHERE app_id = ? ORDER BY id LIMIT 1 OFFSET 1", shop.app_id
    )
    await services.db.execute("UPDATE audit_log SET ip = '10.0.0.66' WHERE id = ?", second)
    broken = text_of((await dash.get(al(shop, "verify"))).text)
    assert f"Broken at entry #{second}" in broken
    assert "The 4 entries were checked" in broken


async def test_export_of_the_filtered_view(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await fill(services, shop, 3)
    await dash.sign_in("alice")
    await dash.get(al(shop))
    as_json = await dash.get(al(shop, "export"), params={"action": "adduser", "format": "json"})
    assert as_json.status_code == 200
    entries = orjson.loads(as_json.content)
    assert [e["target"] for e in entries] == ["user:u00", "user:u01", "user:u02"]  # oldest first
    assert entries[0]["actor"] == "alice (test)"
    assert entries[0]["after"]["user"] == "u00"
    as_csv = await dash.get(al(shop, "export"), params={"target": "user:u01"})
    lines = as_csv.text.strip().splitlines()
    assert lines[0] == "id,created_at,actor,action,target,before,after,ip"
    assert len(lines) == 2
    assert "user:u01" in lines[1]
    assert "attachment" in as_csv.headers["content-disposition"]


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_only_the_owner_reaches_it(services: Services, who: str) -> None:
    shop = await make_shop(services)
    await fill(services, shop, 1)
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(services, shop, who, who, permissions="all" if who == "manager" else None)
    async with browser(services) as dash:
        await dash.sign_in(who)
        for path in (al(shop), al(shop, "verify"), al(shop, "export")):
            answer = await dash.http.get(path)
            assert answer.status_code == 403, path
            assert "Not allowed" in answer.text
            assert "u00" not in answer.text
            assert "alice (test)" not in answer.text
        home = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert "audit-log" not in home.text
