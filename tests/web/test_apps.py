"""The Applications pages: create, rename, delete (typed name, checked on the server), the
integration panel, and who may do what."""

from __future__ import annotations

import pytest

from licensegate.domain import appkeys
from licensegate.services import Services
from tests.web.pages import Dashboard, browser, make_keys, make_member, make_owner, make_shop, text_of

pytestmark = pytest.mark.anyio


async def test_an_owner_creates_an_application_and_sees_its_seller_key_once(
    services: Services, dash: Dashboard
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    empty = await dash.get("/dashboard/apps")
    assert "No applications yet." in text_of(empty.text)
    done = await dash.post("/dashboard/apps", {"name": "Cheat Engine"})
    assert "Cheat Engine is ready" in text_of(done.text)
    assert "Its seller key (shown once)" in text_of(done.text)
    app_id = await services.db.fetch_value("SELECT id FROM apps WHERE name = 'Cheat Engine'")
    # Post/redirect/get: the key came with the redirect to the new application's address; that
    # address asked again shows it no more (the overview instead), and posts nothing.
    assert done.url.path == f"/dashboard/apps/{app_id}/ready"
    later = await dash.get(f"/dashboard/apps/{app_id}/ready")
    assert later.url.path == f"/dashboard/apps/{app_id}/"
    assert "shown once" not in text_of(later.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM apps") == 1
    listed = await dash.get("/dashboard/apps")
    assert f'href="/dashboard/apps/{app_id}/"' in listed.text
    again = await dash.post("/dashboard/apps", {"name": "Cheat Engine"})
    assert again.status_code == 409
    assert "already has an application named" in text_of(again.text)
    blank = await dash.post("/dashboard/apps", {"name": "   "})
    assert blank.status_code == 400
    entry = await services.db.fetch_one(
        "SELECT actor, action, target FROM audit_log WHERE app_id = ?", app_id
    )
    assert entry == {"actor": "alice (dashboard)", "action": "createapp", "target": "Cheat Engine"}


async def test_the_integration_panel_shows_what_a_program_needs(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    keys = await appkeys.client_keys(services.db, services.secrets, shop.app_id)
    await dash.sign_in("alice")
    page = await dash.get(f"/dashboard/apps/{shop.app_id}/integration")
    text = text_of(page.text)
    for fact in (shop.ownerid, "Shop", keys.public_key, keys.secret, "/api/1.0/"):
        assert fact in text
    for library in ("Python", "C#", "C++", "Go", "Rust"):
        assert library in text


async def test_renaming_keeps_names_unique_per_owner(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    from licensegate.domain.apps import create_application

    await create_application(
        services.db, services.secrets, owner="alice", name="Second", now=services.clock.now()
    )
    await dash.sign_in("alice")
    await dash.get(f"/dashboard/apps/{shop.app_id}/")
    taken = await dash.post(f"/dashboard/apps/{shop.app_id}/rename", {"name": "Second"})
    assert taken.status_code == 409
    done = await dash.post(f"/dashboard/apps/{shop.app_id}/rename", {"name": "Renamed"})
    assert "The application is now called Renamed." in text_of(done.text)
    assert await services.db.fetch_value("SELECT name FROM apps WHERE id = ?", shop.app_id) == "Renamed"


async def test_deleting_needs_the_exact_name_typed_and_takes_everything(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await make_keys(services, shop, 3)
    await make_member(services, shop, "manager", "mo")
    await dash.sign_in("alice")
    await dash.get(f"/dashboard/apps/{shop.app_id}/")
    for typed in ("", "shop", "Sho"):
        wrong = await dash.post(f"/dashboard/apps/{shop.app_id}/delete", {"typed": typed, "confirmed": "1"})
        assert wrong.status_code == 400
        assert "nothing was deleted" in text_of(wrong.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM apps") == 1
    done = await dash.post(f"/dashboard/apps/{shop.app_id}/delete", {"typed": "Shop", "confirmed": "1"})
    assert done.url.path == "/dashboard/apps"
    assert "The application Shop and everything it held are deleted." in text_of(done.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM apps") == 0
    assert await services.db.fetch_value("SELECT COUNT(*) FROM license_keys") == 0
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts WHERE username = 'mo'") == 0
    assert (
        await services.db.fetch_value(
            "SELECT action FROM audit_log WHERE app_id = ? ORDER BY id DESC LIMIT 1", shop.app_id
        )
        == "deleteapp"
    )


async def test_team_members_neither_see_the_secret_nor_manage_the_application(services: Services) -> None:
    shop = await make_shop(services)
    keys = await appkeys.client_keys(services.db, services.secrets, shop.app_id)
    await make_member(services, shop, "manager", "mo")
    async with browser(services) as dash:
        await dash.sign_in("mo")
        page = await dash.get(f"/dashboard/apps/{shop.app_id}/integration")
        assert shop.ownerid in page.text
        assert keys.public_key in page.text
        assert keys.secret not in page.text
        assert "Manage the application" not in text_of(page.text)
        assert (await dash.get("/dashboard/apps")).url.path == f"/dashboard/apps/{shop.app_id}/"
        for action, data in (("rename", {"name": "Mine"}), ("delete", {"typed": "Shop", "confirmed": "1"})):
            refused = await dash.post(f"/dashboard/apps/{shop.app_id}/{action}", data)
            assert refused.status_code == 403, action
        assert (await dash.post("/dashboard/apps", {"name": "New"})).status_code == 403
    assert await services.db.fetch_value("SELECT name FROM apps WHERE id = ?", shop.app_id) == "Shop"
