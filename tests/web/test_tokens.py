"""The Tokens page: every key's and user's token, linked to its key or user, searched by token,
key or username, filtered by type and state, keyset paged; ban with a reason (errors next to the
field), unban, reset the file hash, delete (confirmed); who may open it."""

from __future__ import annotations

import re

import pytest

from licensegate.services import Services
from tests.web.pages import (
    Dashboard,
    Shop,
    browser,
    joined,
    make_keys,
    make_member,
    make_shop,
    seller_op,
    text_of,
)
from tests.web.test_users import make_user

pytestmark = pytest.mark.anyio
TOKEN = re.compile(r"<tr>\s*<td><code>([0-9a-f]{32})</code></td>")


def tokens_on(page_html: str) -> list[str]:
    return TOKEN.findall(joined(page_html))


def path(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/tokens" + (f"/{action}" if action else "")


async def token_of(services: Services, shop: Shop, assigned: str) -> str:
    found = await seller_op(services, shop, "fetchalltokens", assigned=assigned)
    token: str = found["tokens"][0]["token"]
    return token


async def state(services: Services, shop: Shop) -> list[tuple[str, str | None, str | None]]:
    rows = await services.db.fetch_all(
        "SELECT assigned, banned_reason, file_hash FROM tokens WHERE app_id = ? ORDER BY id", shop.app_id
    )
    return [(row["assigned"], row["banned_reason"], row["file_hash"]) for row in rows]


async def a_shop_with_tokens(services: Services) -> tuple[Shop, str, int, int]:
    """Two keys and the user ann, the first key's token bound to a file hash; returns the shop,
    the first key, its id and ann's id."""
    shop = await make_shop(services)
    keys = await make_keys(services, shop, 2)
    ann = await make_user(services, shop, "ann")
    await services.db.execute(
        "UPDATE tokens SET file_hash = 'f' || 'a' || assigned, used_at = 1 WHERE assigned = ?", keys[0]
    )
    key_id = await services.db.fetch_value("SELECT id FROM license_keys WHERE key = ?", keys[0])
    return shop, keys[0], key_id, ann


async def test_list_links_searches_and_filters(services: Services, dash: Dashboard) -> None:
    shop, key, key_id, ann = await a_shop_with_tokens(services)
    await dash.sign_in("alice")
    listed = await dash.get(path(shop))
    assert listed.status_code == 200
    assert len(tokens_on(listed.text)) == 3
    assert f'href="/dashboard/apps/{shop.app_id}/licenses/{key_id}"' in listed.text
    assert f'href="/dashboard/apps/{shop.app_id}/users/{ann}"' in listed.text
    ann_token = await token_of(services, shop, "ann")
    assert tokens_on((await dash.get(path(shop), params={"search": ann_token})).text) == [ann_token]
    assert tokens_on((await dash.get(path(shop), params={"search": "ann"})).text) == [ann_token]
    key_token = await token_of(services, shop, key)
    assert tokens_on((await dash.get(path(shop), params={"search": key})).text) == [key_token]
    assert len(tokens_on((await dash.get(path(shop), params={"kind": "license"})).text)) == 2
    assert tokens_on((await dash.get(path(shop), params={"state": "used"})).text) == [key_token]
    assert len(tokens_on((await dash.get(path(shop), params={"state": "unused"})).text)) == 2
    for bad in ({"kind": "seller"}, {"state": "odd"}, {"sort": "token"}, {"search": "x" * 200}):
        refused = await dash.get(path(shop), params=bad)
        assert refused.status_code == 400, bad

    await make_keys(services, shop, 30)
    page = await dash.get(path(shop), params={"size": "25"})
    seen = tokens_on(page.text)
    found = re.search(r'<a href="([^"]+)" rel="next">', page.text)
    assert found is not None
    seen += tokens_on((await dash.get(found.group(1).replace("&amp;", "&"))).text)
    assert len(set(seen)) == 33


async def test_ban_unban_reset_and_delete(services: Services, dash: Dashboard) -> None:
    shop, key, _key_id, _ann = await a_shop_with_tokens(services)
    token = await token_of(services, shop, key)
    await dash.sign_in("alice")
    await dash.get(path(shop))
    no_reason = await dash.post(path(shop, "ban"), {"token": token, "reason": ""})
    assert no_reason.status_code == 400
    assert re.search(r'id="f-reason-error"', no_reason.text)
    unknown = await dash.post(path(shop, "ban"), {"token": "0" * 32, "reason": "leaked"})
    assert unknown.status_code == 404
    assert re.search(r'id="f-token-error"[^>]*>[^<]*0000', unknown.text)
    too_long = await dash.post(path(shop, "ban"), {"token": token, "reason": "r" * 300})
    assert too_long.status_code == 400
    assert re.search(r'id="f-reason-error"', too_long.text)
    banned = await dash.post(path(shop, "ban"), {"token": token, "reason": "leaked online"})
    assert f"The token {token} is banned" in text_of(banned.text)
    assert (await state(services, shop))[0] == (key, "leaked online", "fa" + key)
    assert "Banned : leaked online" in text_of(banned.text) or "Banned: leaked online" in text_of(banned.text)

    unbanned = await dash.post(path(shop, "unban"), {"token": token})
    assert f"The token {token} is no longer banned." in text_of(unbanned.text)
    reset = await dash.post(path(shop, "reset-hash"), {"token": token})
    assert "is reset" in text_of(reset.text)
    assert (await state(services, shop))[0] == (key, None, None)

    asked = await dash.post(path(shop, "delete"), {"token": token})
    assert f"Delete the token {token}?" in text_of(asked.text)
    assert len(await state(services, shop)) == 3
    deleted = await dash.post(path(shop, "delete"), {"token": token, "confirmed": "1"})
    assert f"The token {token} is deleted." in text_of(deleted.text)
    assert len(await state(services, shop)) == 2
    again = await dash.post(path(shop, "delete"), {"token": token, "confirmed": "1"})
    assert "No token" in text_of(again.text)
    audited = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND action = 'deltoken'", shop.app_id
    )
    assert audited == 1


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_others_get_the_403_page_and_nothing_changes(services: Services, who: str) -> None:
    shop, key, _key_id, _ann = await a_shop_with_tokens(services)
    token = await token_of(services, shop, key)
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        permissions = "licenses,users,sessions,blacklists" if who == "manager" else None
        await make_member(services, shop, who, "member", permissions=permissions)
    before = await state(services, shop)
    async with browser(services) as dash:
        await dash.sign_in("member" if who != "bob" else "bob")
        await dash.get("/dashboard/account")
        listed = await dash.get(path(shop), params={"search": key})
        assert listed.status_code == 403
        assert "Not allowed" in listed.text
        assert token not in listed.text
        assert "ann" not in text_of(listed.text)
        for action, fields in (
            ("ban", {"token": token, "reason": "x"}),
            ("unban", {"token": token}),
            ("reset-hash", {"token": token}),
            ("delete", {"token": token}),
        ):
            refused = await dash.post(path(shop, action), {**fields, "confirmed": "1"}, follow=False)
            assert refused.status_code == 403, action
    assert await state(services, shop) == before
