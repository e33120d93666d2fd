"""The User variables page (search by user, name and value prefix; keyset pages; set for one or
every user; read-only; delete one or a name for everyone) and the Global variables page."""

from __future__ import annotations

import re

import pytest

from licensegate.domain import globalvars, uservars
from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio
ROW = re.compile(r"<tr>\s*<td>([^<]+)</td>\s*<td><code>([^<]+)</code></td>\s*<td class=\"wrap\">([^<]*)</td>")


def rows_on(page_html: str) -> list[tuple[str, str, str]]:
    return [(user, name, value) for user, name, value in ROW.findall(page_html)]


def uv(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/user-variables" + (f"/{action}" if action else "")


def gv(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/global-variables" + (f"/{action}" if action else "")


async def users(services: Services, shop: Shop, *names: str) -> None:
    for name in names:
        await seller_op(services, shop, "adduser", user=name, expiry="30")


async def test_search_by_user_name_and_value_prefix_paged_by_keyset(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await users(services, shop, "ann", "ben")
    for i in range(30):
        await seller_op(services, shop, "setvar", user="ann", var=f"v{i:02d}", data=f"value {i:02d}")
    await seller_op(services, shop, "setvar", user="ben", var="plan", data="Gold_tier 100%")
    await seller_op(services, shop, "setvar", user="ben", var="v01", data="gold")
    await dash.sign_in("alice")

    first = await dash.get(uv(shop), params={"size": "25"})
    assert first.status_code == 200
    shown = rows_on(first.text)
    assert len(shown) == 25
    assert shown[0] == ("ben", "v01", "gold")
    seen = list(shown)
    page = first
    while (found := re.search(r'<a href="([^"]+)" rel="next">', page.text)) is not None:
        page = await dash.get(found.group(1).replace("&amp;", "&"))
        seen += rows_on(page.text)
    assert len(seen) == 32
    assert len(set(seen)) == 32

    by_user = rows_on((await dash.get(uv(shop), params={"user": "ben"})).text)
    assert sorted(by_user) == [("ben", "plan", "Gold_tier 100%"), ("ben", "v01", "gold")]
    by_name = rows_on((await dash.get(uv(shop), params={"name": "v01"})).text)
    assert sorted(by_name) == [("ann", "v01", "value 01"), ("ben", "v01", "gold")]
    # A prefix, case-sensitive, with LIKE's wildcards taken literally.
    assert rows_on((await dash.get(uv(shop), params={"value": "Gold_"})).text) == [
        ("ben", "plan", "Gold_tier 100%")
    ]
    assert rows_on((await dash.get(uv(shop), params={"value": "G%"})).text) == []
    assert len(rows_on((await dash.get(uv(shop), params={"value": "value 1"})).text)) == 10
    nobody = await dash.get(uv(shop), params={"user": "nobody"})
    assert nobody.status_code == 200
    assert "Nothing matches these filters." in text_of(nobody.text)
    assert (await dash.get(uv(shop), params={"sort": "value"})).status_code == 400


async def test_set_for_one_or_every_user_read_only_and_errors_next_to_the_field(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await users(services, shop, "ann", "ben", "cy")
    await dash.sign_in("alice")
    await dash.get(uv(shop))
    one = await dash.post(uv(shop), {"user": "ann", "var": "tier", "data": "gold", "read_only": "1"})
    assert "tier is set for ann." in text_of(one.text)
    found = await uservars.get(services.db, shop.app_id, "ann", "tier")
    assert found.value == "gold"
    assert found.read_only
    everyone = await dash.post(uv(shop), {"everyone": "1", "var": "motd", "data": "hello"})
    assert "motd is set for every user (3 users)." in text_of(everyone.text)
    for name in ("ann", "ben", "cy"):
        assert (await uservars.get(services.db, shop.app_id, name, "motd")).value == "hello"

    unknown = await dash.post(uv(shop), {"user": "zed", "var": "tier", "data": "x"})
    assert unknown.status_code == 404
    assert re.search(r'id="f-user-error">[^<]*zed', unknown.text)
    assert 'value="zed"' in unknown.text
    no_user = await dash.post(uv(shop), {"user": "", "var": "tier", "data": "x"})
    assert no_user.status_code == 400
    assert 'id="f-user-error">Fill this in.' in no_user.text
    literal_all = await dash.post(uv(shop), {"user": "all", "var": "tier", "data": "x"})
    assert literal_all.status_code == 400
    assert 'id="f-user-error"' in literal_all.text
    too_long = await dash.post(uv(shop), {"user": "ann", "var": "tier", "data": "x" * 501})
    assert too_long.status_code == 400
    assert 'id="f-data-error"' in too_long.text


async def test_delete_one_and_a_name_for_everyone_after_saying_how_many(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await users(services, shop, "ann", "ben")
    await seller_op(services, shop, "setvar", user="all", var="motd", data="hi")
    await seller_op(services, shop, "setvar", user="ann", var="tier", data="gold")
    await dash.sign_in("alice")
    await dash.get(uv(shop))
    ask = await dash.post(uv(shop, "delete"), {"user": "ann", "var": "tier"})
    assert "Delete tier of ann?" in text_of(ask.text)
    done = await dash.post(uv(shop, "delete"), {"user": "ann", "var": "tier", "confirmed": "1"})
    assert "The variable tier of ann is deleted." in text_of(done.text)
    ask_all = await dash.post(uv(shop, "delete-name"), {"name": "motd"})
    assert "2 users have a variable named motd" in text_of(ask_all.text)
    all_done = await dash.post(uv(shop, "delete-name"), {"name": "motd", "confirmed": "1"})
    assert "motd is deleted from 2 users." in text_of(all_done.text)
    assert rows_on(all_done.text) == []
    empty = await dash.post(uv(shop, "delete-name"), {"name": ""})
    assert empty.status_code == 400
    assert 'id="f-name-error"' in empty.text


async def test_global_variables_create_edit_flag_and_delete(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get(gv(shop))
    created = await dash.post(
        gv(shop), {"name": "download", "data": "https://example.test/v2", "authed": "1"}
    )
    assert "The global variable download is created." in text_of(created.text)
    public = await dash.post(gv(shop), {"name": "status", "data": "online"})  # box unticked
    assert (await globalvars.get(services.db, shop.app_id, "status")).authed is False
    assert (await globalvars.get(services.db, shop.app_id, "download")).authed is True
    twice = await dash.post(gv(shop), {"name": "status", "data": "again"})
    assert twice.status_code == 409
    assert 'id="f-name-error"' in twice.text
    assert public.status_code == 200

    edited = await dash.post(gv(shop, "edit"), {"name": "download", "data": "https://example.test/v3"})
    assert "The global variable download is saved." in text_of(edited.text)
    found = await globalvars.get(services.db, shop.app_id, "download")
    assert found.value == "https://example.test/v3"
    assert found.authed is False
    bad = await dash.post(gv(shop, "edit"), {"name": "download", "data": ""})
    assert bad.status_code == 400
    assert 'class="error" id="gv-1-error"' in bad.text
    ask = await dash.post(gv(shop, "delete"), {"name": "status"})
    assert "Delete the global variable status?" in text_of(ask.text)
    gone = await dash.post(gv(shop, "delete"), {"name": "status", "confirmed": "1"})
    assert "The global variable status is deleted." in text_of(gone.text)
    assert [row["name"] for row in await globalvars.list_with_flags(services.db, shop.app_id)] == ["download"]
    actions = {row["action"] for row in await services.db.fetch_all("SELECT action FROM audit_log")}
    assert {"addvar", "editvar", "delvar"} <= actions
