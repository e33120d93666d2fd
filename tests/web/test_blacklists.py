"""The Blacklist and Whitelist pages: entries listed with where each came from (a user's ban, the
owner, a manager), filtered and keyset paged; adding an address, a range or a HWID (bad input
next to its field), removing one value or every entry (confirmed); who may open them."""

from __future__ import annotations

import re

import pytest

from licensegate.services import Services
from licensegate.store import users as user_store
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, seller_op, text_of
from tests.web.test_users import make_user

pytestmark = pytest.mark.anyio
VALUE = re.compile(r"<td class=\"wrap\"><code>([^<]+)</code></td>")
WHITE = re.compile(r"<tr>\s*<td><code>([^<]+)</code></td>")


def black(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/blacklist" + (f"/{action}" if action else "")


def white(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/whitelist" + (f"/{action}" if action else "")


async def entries(services: Services, shop: Shop) -> list[tuple[str, str]]:
    rows = await services.db.fetch_all(
        "SELECT kind, value FROM blacklist WHERE app_id = ? ORDER BY id", shop.app_id
    )
    return [(row["kind"], row["value"]) for row in rows]


async def a_shop_with_entries(services: Services) -> Shop:
    """A direct HWID and range from the owner, one from a manager, and the ban of mallory (its
    HWID)."""
    shop = await make_shop(services)
    mallory = await make_user(services, shop, "mallory")
    await user_store.add_hwid(services.db, mallory, "HW-MALLORY", services.clock.now())
    await seller_op(services, shop, "black", hwid="HW-DIRECT", reason="chargeback")
    await seller_op(services, shop, "black", ip="10.1.2.3/8")
    await seller_op(services, shop, "banuser", user="mallory", reason="cheating", blacklistIp="0")
    return shop


async def test_the_blacklist_lists_origins_filters_and_pages(services: Services, dash: Dashboard) -> None:
    shop = await a_shop_with_entries(services)
    await make_member(services, shop, "manager", "mia", permissions="blacklists")
    async with browser(services) as mia:
        await mia.sign_in("mia")
        await mia.get(black(shop))
        added = await mia.post(black(shop), {"ip": "2001:db8::1", "reason": "abuse"})
        assert "2001:db8::1 is blacklisted." in text_of(added.text)
    await dash.sign_in("alice")
    listed = await dash.get(black(shop))
    assert listed.status_code == 200
    assert VALUE.findall(listed.text) == ["2001:db8::1", "HW-MALLORY", "10.0.0.0/8", "HW-DIRECT"]
    shown = text_of(listed.text)
    assert "The ban of mallory" in shown
    assert "Added by mia" in shown
    assert "Added by alice (test)" in shown
    assert "chargeback" in shown
    assert f'href="/dashboard/apps/{shop.app_id}/users/' in listed.text

    def values(page: str) -> list[str]:
        return VALUE.findall(page)

    assert values((await dash.get(black(shop), params={"kind": "hwid"})).text) == ["HW-MALLORY", "HW-DIRECT"]
    assert values((await dash.get(black(shop), params={"kind": "cidr"})).text) == ["10.0.0.0/8"]
    assert values((await dash.get(black(shop), params={"origin": "ban"})).text) == ["HW-MALLORY"]
    # An address or range is found in any form it is written in.
    assert values((await dash.get(black(shop), params={"value": "10.9.9.9/8"})).text) == ["10.0.0.0/8"]
    for bad in ({"kind": "mac"}, {"sort": "value"}, {"after": "%%%"}, {"size": "7"}):
        refused = await dash.get(black(shop), params=bad)
        assert refused.status_code == 400, bad

    for i in range(30):
        await seller_op(services, shop, "black", hwid=f"HW-{i:02d}")
    page = await dash.get(black(shop), params={"size": "25"})
    seen = values(page.text)
    found = re.search(r'<a href="([^"]+)" rel="next">', page.text)
    assert found is not None
    seen += values((await dash.get(found.group(1).replace("&amp;", "&"))).text)
    assert len(seen) == 34
    assert len(set(seen)) == 34


async def test_add_remove_and_empty_the_blacklist(services: Services, dash: Dashboard) -> None:
    shop = await a_shop_with_entries(services)
    await dash.sign_in("alice")
    await dash.get(black(shop))
    nothing = await dash.post(black(shop), {"ip": "", "hwid": ""})
    assert nothing.status_code == 400
    assert "Give an 'ip', a 'hwid' or both" in text_of(nothing.text)
    bad = await dash.post(black(shop), {"ip": "300.1.1.1", "hwid": "HW-NEW"})
    assert bad.status_code == 400
    assert re.search(r'id="f-ip-error"[^>]*>[^<]*300\.1\.1\.1', bad.text)
    assert 'value="HW-NEW"' in bad.text  # what was typed stays
    long = await dash.post(black(shop), {"hwid": "h" * 300})
    assert long.status_code == 400
    assert re.search(r'id="f-hwid-error"', long.text)
    both = await dash.post(black(shop), {"ip": "::ffff:192.0.2.9", "hwid": "HW-NEW", "reason": "refund"})
    assert "::ffff:192.0.2.9 and HW-NEW are blacklisted." in text_of(both.text)
    assert ("ip", "192.0.2.9") in await entries(services, shop)
    again = await dash.post(black(shop), {"hwid": "HW-NEW"})
    assert "already blacklisted" in text_of(again.text)

    asked = await dash.post(black(shop, "delete"), {"data": "HW-NEW", "blacktype": "hwid"})
    assert "Remove HW-NEW from the blacklist?" in text_of(asked.text)
    assert ("hwid", "HW-NEW") in await entries(services, shop)
    removed = await dash.post(
        black(shop, "delete"), {"data": "HW-NEW", "blacktype": "hwid", "confirmed": "1"}
    )
    assert "HW-NEW is no longer blacklisted." in text_of(removed.text)
    gone = await dash.post(black(shop, "delete"), {"data": "HW-NEW", "blacktype": "hwid", "confirmed": "1"})
    assert gone.status_code == 200
    assert "No hwid blacklist entry 'HW-NEW' exists." in text_of(gone.text)
    assert ("hwid", "HW-NEW") not in await entries(services, shop)

    total = len(await entries(services, shop))
    asked = await dash.post(black(shop, "delete-all"), {})
    assert f"Every entry is removed ({total} entries) (those" in text_of(asked.text)
    emptied = await dash.post(black(shop, "delete-all"), {"confirmed": "1"})
    assert f"The blacklist is empty ({total} entries removed)." in text_of(emptied.text)
    assert await entries(services, shop) == []
    audited = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND target = 'blacklist:all'", shop.app_id
    )
    assert audited == 1


async def test_the_whitelist(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    empty = await dash.get(white(shop))
    assert "The whitelist is empty." in text_of(empty.text)
    for ip in ("192.0.2.1", "10.9.0.0/16", "2001:db8::/32"):
        added = await dash.post(white(shop), {"ip": ip})
        assert f"{ip} is whitelisted." in text_of(added.text)
    await seller_op(services, shop, "addWhite", ip="198.51.100.0/24")  # a seller operation ("test")
    await services.db.execute(
        "INSERT INTO whitelist (app_id, value, created_at) VALUES (?, '203.0.113.5', 1)", shop.app_id
    )
    listed = await dash.get(white(shop))
    rows = {
        code.group(1): text_of(row)
        for row in re.findall(r"<tr>(.*?)</tr>", listed.text, re.S)
        if (code := re.search(r"<code>([^<]+)</code>", row))
    }
    # Where each came from: who added it, as the audit log recorded it.
    assert "Added by alice (dashboard)" in rows["10.9.0.0/16"]
    assert "Added by alice (test)" in rows["198.51.100.0/24"]
    assert "Added directly" in rows["203.0.113.5"]  # no record of who (added before it was kept)
    for extra in ("198.51.100.0/24", "203.0.113.5"):
        await dash.post(white(shop, "delete"), {"ip": extra, "confirmed": "1"})
    listed = await dash.get(white(shop))
    assert WHITE.findall(listed.text) == ["2001:db8::/32", "10.9.0.0/16", "192.0.2.1"]
    assert WHITE.findall((await dash.get(white(shop), params={"value": "10.9.1.1/16"})).text) == [
        "10.9.0.0/16"
    ]
    again = await dash.post(white(shop), {"ip": "::ffff:192.0.2.1"})
    assert "was already whitelisted" in text_of(again.text)
    for bad, status in (("", 400), ("not an ip", 400), ("1" * 70, 400)):
        refused = await dash.post(white(shop), {"ip": bad})
        assert refused.status_code == status, bad
        assert re.search(r'id="f-ip-error"', refused.text), bad
    removed = await dash.post(white(shop, "delete"), {"ip": "192.0.2.1", "confirmed": "1"})
    assert "192.0.2.1 is no longer whitelisted." in text_of(removed.text)
    asked = await dash.post(white(shop, "delete-all"), {})
    assert "Every entry is removed (2 entries)" in text_of(asked.text)
    emptied = await dash.post(white(shop, "delete-all"), {"confirmed": "1"})
    assert "The whitelist is empty (2 entries removed)." in text_of(emptied.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM whitelist") == 0


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_others_get_the_403_page_and_nothing_changes(services: Services, who: str) -> None:
    shop = await a_shop_with_entries(services)
    await seller_op(services, shop, "addWhite", ip="198.51.100.0/24")
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        permissions = "licenses,users,sessions" if who == "manager" else None
        await make_member(services, shop, who, "member", permissions=permissions)
    before = await entries(services, shop)
    async with browser(services) as dash:
        await dash.sign_in("member" if who != "bob" else "bob")
        await dash.get("/dashboard/account")
        for url in (black(shop), white(shop)):
            listed = await dash.get(url)
            assert listed.status_code == 403
            assert "Not allowed" in listed.text
            shown = text_of(listed.text)
            for secret in ("HW-DIRECT", "mallory", "10.0.0.0/8", "198.51.100.0/24"):
                assert secret not in shown
        for url, fields in (
            (black(shop), {"hwid": "HW-X"}),
            (black(shop, "delete"), {"data": "HW-DIRECT", "blacktype": "hwid"}),
            (black(shop, "delete-all"), {}),
            (white(shop), {"ip": "192.0.2.1"}),
            (white(shop, "delete"), {"ip": "198.51.100.0/24"}),
            (white(shop, "delete-all"), {}),
        ):
            refused = await dash.post(url, {**fields, "confirmed": "1"}, follow=False)
            assert refused.status_code == 403, url
    assert await entries(services, shop) == before
    assert await services.db.fetch_value("SELECT COUNT(*) FROM whitelist") == 1


async def test_a_resellers_ban_blacklists_nothing(services: Services, dash: Dashboard) -> None:
    """The origins a blacklist entry can have: a reseller is never one. Without the blacklists
    area its ban bans the user only (a reseller cannot block a device or address for the whole
    application), so the list names only the owner, a manager, the seller key or a ban by them."""
    from licensegate.domain.permissions import identity_of_account
    from licensegate.operations.seller import Caller, invoke
    from tests.web.pages import give_balance

    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rosa")
    rosa = await give_balance(services, shop, "rosa", month=1)
    caller = Caller(await identity_of_account(services.db, shop.app_id, rosa), via="test")
    await invoke(services, caller, "adduser", {"user": "rosa-buyer", "expiry": "30"})
    buyer = await services.db.fetch_value("SELECT id FROM users WHERE username = 'rosa-buyer'")
    await user_store.add_hwid(services.db, buyer, "HW-ROSA-BUYER", services.clock.now())
    await invoke(services, caller, "banuser", {"user": "rosa-buyer", "reason": "resold"})
    assert await services.db.fetch_value("SELECT banned_reason FROM users WHERE id = ?", buyer) == "resold"
    assert await entries(services, shop) == []
    await dash.sign_in("alice")
    assert "HW-ROSA-BUYER" not in (await dash.get(black(shop))).text
