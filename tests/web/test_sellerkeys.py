"""The Seller keys page: the keys listed with their areas (the all-areas key flagged), where
they were last used from; creating one with a name and ticked areas (the key shown once, working
with exactly those areas); revoking one after a confirmation; bad input next to its field; and
nobody but the application's owner reaching it."""

from __future__ import annotations

import re

import pytest

from licensegate.domain import permissions, sellerkeys
from licensegate.domain.errors import Refusal
from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, text_of

pytestmark = pytest.mark.anyio
NEW_KEY = re.compile(r'<code id="sellerkey">([0-9a-f]{32})</code>')


def sk(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/seller-keys" + (f"/{action}" if action else "")


async def test_create_with_ticked_areas_shown_once_and_listed_with_last_use(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    listed = await dash.get(sk(shop))
    assert listed.status_code == 200
    shown = text_of(listed.text)
    assert shop.sellerkey[:6] in shown
    assert "All areas" in shown  # the application's first key holds every area
    assert "Never" in shown

    made = await dash.post(sk(shop), {"name": "shop bot", "areas": ["licenses", "users"]})
    assert made.status_code == 200
    found = NEW_KEY.search(made.text)
    assert found, "the new key is not shown"
    key = found.group(1)
    assert "The seller key shop bot is created." in text_of(made.text)
    identity = await sellerkeys.authenticate(services.db, key, services.clock.now(), "198.51.100.7")
    assert permissions.names(identity.permissions) == ["licenses", "users"]
    assert identity.key_name == "shop bot"

    again = text_of((await dash.get(sk(shop))).text)
    assert key not in again  # shown once: the list has its prefix only
    assert f"shop bot {key[:6]}…" in again
    assert "licenses, users" in again
    assert "from 198.51.100.7" in again
    audit = await services.db.fetch_one(
        "SELECT actor, action, after FROM audit_log WHERE app_id = ? ORDER BY id DESC LIMIT 1", shop.app_id
    )
    assert audit is not None
    assert (audit["actor"], audit["action"]) == ("alice (dashboard)", "addsellerkey")
    assert key not in (audit["after"] or "")


async def test_bad_input_is_shown_next_to_its_field(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get(sk(shop))
    before = await services.db.fetch_value("SELECT COUNT(*) FROM seller_keys")
    none = await dash.post(sk(shop), {"name": "nothing"})
    assert none.status_code == 400
    assert 'id="areas-error">Tick at least one area.' in none.text
    assert 'value="nothing"' in none.text
    unknown = await dash.post(sk(shop), {"name": "odd", "areas": ["licenses", "bogus"]})
    assert unknown.status_code == 400
    assert re.search(r'id="areas-error">[^<]*bogus', unknown.text)
    long_name = await dash.post(sk(shop), {"name": "n" * 65, "areas": ["licenses"]})
    assert long_name.status_code == 400
    assert 'id="f-name-error"' in long_name.text
    assert 'aria-invalid="true"' in long_name.text
    assert await services.db.fetch_value("SELECT COUNT(*) FROM seller_keys") == before


async def test_a_key_can_grant_only_the_areas_it_holds(services: Services) -> None:
    """What the page's checkboxes rely on: `addsellerkey` refuses areas beyond the caller's."""
    shop = await make_shop(services)
    limited = await sellerkeys.create(
        services.db,
        await sellerkeys.authenticate(services.db, shop.sellerkey, services.clock.now()),
        name="limited",
        permissions=permissions.parse("licenses,sellerkeys"),
        now=services.clock.now(),
    )
    identity = await sellerkeys.authenticate(services.db, limited, services.clock.now())
    with pytest.raises(Refusal) as refused:
        await sellerkeys.create(
            services.db, identity, name="more", permissions=permissions.parse("users"), now=0
        )
    assert refused.value.error == "beyond_own_areas"


async def test_revoke_asks_first_then_the_key_stops_working(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    made = await dash.post(sk(shop), {"name": "temp", "areas": ["logs"]})
    found = NEW_KEY.search(made.text)
    assert found
    key_id = await services.db.fetch_value("SELECT id FROM seller_keys WHERE name = 'temp'")
    await dash.get(sk(shop))
    asked = await dash.post(sk(shop, "revoke"), {"id": str(key_id), "label": "temp"})
    assert "Revoke the seller key temp?" in text_of(asked.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM seller_keys WHERE id = ?", key_id) == 1
    done = await dash.post(sk(shop, "revoke"), {"id": str(key_id), "label": "temp", "confirmed": "1"})
    assert "The seller key temp is revoked." in text_of(done.text)
    assert "temp" not in text_of(done.text).split("Seller keys", 2)[-1].split("Create a seller key")[0]
    with pytest.raises(Refusal):
        await sellerkeys.authenticate(services.db, found.group(1), services.clock.now())
    gone = await dash.post(sk(shop, "revoke"), {"id": "999999", "label": "x", "confirmed": "1"})
    assert "No seller key with this id exists" in text_of(gone.text)
    bad = await dash.post(sk(shop, "revoke"), {"id": "abc", "label": "x", "confirmed": "1"})
    assert bad.status_code < 500
    assert "Problem:" in text_of(bad.text)


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_only_the_owner_reaches_it(services: Services, who: str) -> None:
    shop = await make_shop(services)
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(services, shop, who, who, permissions="all" if who == "manager" else None)
    before = await services.db.fetch_value("SELECT COUNT(*) FROM seller_keys")
    async with browser(services) as dash:
        await dash.sign_in(who)
        await dash.get("/dashboard/account")
        for answer in (
            await dash.http.get(sk(shop)),
            await dash.post(sk(shop), {"name": "x", "areas": ["licenses"]}, follow=False),
            await dash.post(sk(shop, "revoke"), {"id": "1", "label": "x", "confirmed": "1"}, follow=False),
        ):
            assert answer.status_code == 403
            assert "Not allowed" in answer.text
            assert shop.sellerkey[:6] not in answer.text
    assert await services.db.fetch_value("SELECT COUNT(*) FROM seller_keys") == before
