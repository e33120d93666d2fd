"""The named rate limits part of the user and key pages: set, change and remove a limit through
the seller operations (audited, in the timeline); a refused form says why; a manager without the
users area sees no part and cannot post to it."""

from __future__ import annotations

import pytest

from licensegate.domain import namedlimits
from licensegate.domain.credits import Owner, Target
from licensegate.services import Services
from tests.web.pages import Dashboard, browser, make_member, make_shop, text_of
from tests.web.test_details import redeemed

pytestmark = pytest.mark.anyio


async def limits_of(services: Services, owner: Owner, owner_id: int) -> list[tuple[str, int, int]]:
    rows = await namedlimits.of_target(services.db, Target(owner, owner_id, ""))
    return [(row["name"], row["max_requests"], row["window_seconds"]) for row in rows]


async def test_set_change_and_remove_a_limit_on_the_user_and_key_pages(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    ann, key_id, key = await redeemed(services, shop, "ann")
    await dash.sign_in("alice")
    user_page = f"/dashboard/apps/{shop.app_id}/users/{ann}"
    action = f"/dashboard/apps/{shop.app_id}/ratelimits"
    shown = text_of((await dash.get(user_page)).text)
    assert "Rate limits" in shown
    assert "No rate limit of its own" in shown
    form = {"owner": "user", "owner_name": "ann", "back": user_page}
    saved = await dash.post(action, {**form, "name": "api", "requests": "100", "window": "60"})
    assert saved.url.path == user_page
    assert "The rate limit is saved." in text_of(saved.text)
    assert await limits_of(services, "user", ann) == [("api", 100, 60)]
    await dash.post(action, {**form, "name": "api", "requests": "5", "window": "1"})  # the same name: changed
    assert await limits_of(services, "user", ann) == [("api", 5, 1)]
    refused = await dash.post(action, {**form, "name": "api", "requests": "0", "window": "60"})
    assert "requests" in text_of(refused.text)
    assert await limits_of(services, "user", ann) == [("api", 5, 1)]
    page = text_of((await dash.get(user_page)).text)
    assert "setratelimit" in page  # the timeline shows the change
    removed = await dash.post(action, {**form, "action": "remove", "name": "api"})
    assert "The rate limit is removed." in text_of(removed.text)
    assert await limits_of(services, "user", ann) == []

    key_page = f"/dashboard/apps/{shop.app_id}/licenses/{key_id}"
    await dash.get(key_page)
    done = await dash.post(
        action,
        {
            "owner": "key",
            "owner_name": key,
            "back": key_page,
            "name": "burst",
            "requests": "10",
            "window": "1",
        },
    )
    assert done.url.path == key_page
    assert await limits_of(services, "key", key_id) == [("burst", 10, 1)]
    assert "burst" in text_of(done.text)


async def test_a_manager_without_the_users_area_neither_sees_nor_sets_limits(services: Services) -> None:
    shop = await make_shop(services)
    _ann, key_id, key = await redeemed(services, shop, "ann")
    await make_member(services, shop, "manager", "lena", permissions="licenses")
    async with browser(services) as dash:
        await dash.sign_in("lena")
        key_page = f"/dashboard/apps/{shop.app_id}/licenses/{key_id}"
        assert "Rate limits" not in text_of((await dash.get(key_page)).text)
        refused = await dash.post(
            f"/dashboard/apps/{shop.app_id}/ratelimits",
            {
                "owner": "key",
                "owner_name": key,
                "back": key_page,
                "name": "x",
                "requests": "1",
                "window": "1",
            },
        )
        assert refused.status_code == 403
    assert await limits_of(services, "key", key_id) == []
