"""The Subscriptions page: list with users, create, rename, change level, pause/unpause, delete
(whose confirmation says how many users it affects); errors next to their field; every change
through the seller operations (so it is audited)."""

from __future__ import annotations

import re

import pytest

from licensegate.domain import subscriptions
from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio


def sub_path(shop: Shop, sub_id: str = "", action: str = "") -> str:
    base = f"/dashboard/apps/{shop.app_id}/subscriptions"
    return base + (f"/{sub_id}" if sub_id else "") + (f"/{action}" if action else "")


async def sub_id_of(services: Services, shop: Shop, name: str) -> str:
    for row in await subscriptions.list_all(services.db, shop.app_id):
        if row["name"] == name:
            return str(row["id"])
    raise AssertionError(f"no subscription {name}")


async def vip_of_three(services: Services) -> tuple[Shop, str]:
    """A shop whose subscription vip is held by three users; and the subscription's id."""
    shop = await make_shop(services)
    await seller_op(services, shop, "addsub", name="vip", level="3")
    for user in ("u1", "u2", "u3"):
        await seller_op(services, shop, "adduser", user=user, sub="vip", expiry="10")
    return shop, await sub_id_of(services, shop, "vip")


async def test_create_lists_it_with_its_users_and_refuses_a_duplicate_next_to_the_field(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    page = await dash.get(sub_path(shop))
    assert page.status_code == 200
    created = await dash.post(sub_path(shop), {"name": "premium", "level": "2"})
    assert created.status_code == 200
    assert created.url.path == sub_path(shop)
    assert "The subscription premium is created (level 2)." in text_of(created.text)
    await seller_op(services, shop, "adduser", user="ann", sub="premium", expiry="30")
    await seller_op(services, shop, "adduser", user="ben", sub="premium", expiry="30")
    listed = text_of((await dash.get(sub_path(shop))).text)
    assert re.search(r"premium 2 2 Active", listed), listed

    twice = await dash.post(sub_path(shop), {"name": "premium", "level": "3"})
    assert twice.status_code == 409
    assert re.search(r'id="f-name-error">[^<]*premium', twice.text)
    assert 'aria-invalid="true"' in twice.text
    assert 'value="premium"' in twice.text
    assert 'value="3"' in twice.text
    missing = await dash.post(sub_path(shop), {"name": "gold", "level": ""})
    assert missing.status_code == 400
    assert '<p class="error" id="f-level-error">Fill this in.</p>' in missing.text
    too_long = await dash.post(sub_path(shop), {"name": "x" * 65, "level": "1"})
    assert too_long.status_code == 400
    assert 'id="f-name-error"' in too_long.text
    actions = [row["action"] for row in await services.db.fetch_all("SELECT action FROM audit_log")]
    assert "addsub" in actions


async def test_rename_relevel_pause_and_unpause(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "addsub", name="basic", level="1")
    await seller_op(services, shop, "addsub", name="taken", level="1")
    sub_id = await sub_id_of(services, shop, "basic")
    await dash.sign_in("alice")
    detail = await dash.get(sub_path(shop, sub_id))
    assert detail.status_code == 200
    assert "Subscription basic" in text_of(detail.text)
    clash = await dash.post(sub_path(shop, sub_id, "edit"), {"name": "taken", "level": "1"})
    assert clash.status_code == 409
    assert 'id="f-name-error"' in clash.text
    saved = await dash.post(sub_path(shop, sub_id, "edit"), {"name": "standard", "level": "5"})
    assert "The subscription standard is saved (level 5)." in text_of(saved.text)
    rows = {row["name"]: row for row in await subscriptions.list_all(services.db, shop.app_id)}
    assert rows["standard"]["level"] == "5"
    assert "basic" not in rows

    paused = await dash.post(sub_path(shop, sub_id, "pause"), {"confirmed": "1"})
    assert "standard is paused" in text_of(paused.text)
    assert re.search(r"standard 5 0 Paused", text_of(paused.text))
    again = await dash.post(sub_path(shop, sub_id, "pause"), {"confirmed": "1"})
    assert "already paused" in text_of(again.text)
    resumed = await dash.post(sub_path(shop, sub_id, "unpause"))
    assert "standard is running again" in text_of(resumed.text)
    rows = {row["name"]: row for row in await subscriptions.list_all(services.db, shop.app_id)}
    assert rows["standard"]["paused"] == 0


async def test_delete_asks_first_saying_how_many_users_it_affects(
    services: Services, dash: Dashboard
) -> None:
    shop, sub_id = await vip_of_three(services)
    await dash.sign_in("alice")
    listed = await dash.get(sub_path(shop))
    assert "3 users hold it and will lose it." in listed.text  # the dialog's question
    ask = await dash.post(sub_path(shop, sub_id, "delete"))
    assert ask.status_code == 200
    assert "Delete the subscription vip?" in text_of(ask.text)
    assert "3 users hold it and will lose it." in text_of(ask.text)
    assert await sub_id_of(services, shop, "vip") == sub_id  # nothing deleted yet
    done = await dash.post(sub_path(shop, sub_id, "delete"), {"confirmed": "1"})
    assert "The subscription vip is deleted. 3 users lost it." in text_of(done.text)
    assert [row["name"] for row in await subscriptions.list_all(services.db, shop.app_id)] == ["default"]
    gone = await dash.get(sub_path(shop, sub_id))
    assert gone.status_code == 404


async def test_a_long_list_counts_users_up_to_a_cap_and_a_deletion_counts_them_all(
    services: Services, dash: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subscriptions, "USERS_CAP", 2)
    shop, sub_id = await vip_of_three(services)
    await dash.sign_in("alice")
    listed = text_of((await dash.get(sub_path(shop))).text)
    assert re.search(r"vip 3 at least 3 Active", listed), listed
    ask = await dash.post(sub_path(shop, sub_id, "delete"))
    assert "3 users hold it and will lose it." in text_of(ask.text)


async def test_bad_ids_and_missing_csrf(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "addsub", name="vip", level="3")
    sub_id = await sub_id_of(services, shop, "vip")
    await dash.sign_in("alice")
    assert (await dash.get(sub_path(shop, "99999999"))).status_code == 404
    assert (await dash.get(sub_path(shop) + "/abc")).status_code == 404
    await dash.get(sub_path(shop))
    refused = await dash.post(sub_path(shop, sub_id, "delete"), {"confirmed": "1"}, csrf=False)
    assert refused.status_code == 403
    assert await sub_id_of(services, shop, "vip") == sub_id
