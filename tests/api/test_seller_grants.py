"""A seller key or team member can only grant what it holds (issue 10 item 2): a key limited to
`sellerkeys` cannot mint a key with more, a key limited to `team` cannot create (or edit, or get
a key for) a manager with areas it lacks, nor a reseller unless it holds `licenses` and `users`."""

from __future__ import annotations

import pytest

from licensegate.services import Services
from tests.api.test_seller_team import acting_as, add_account
from tests.helpers import Seller

pytestmark = pytest.mark.anyio


async def limited(seller: Seller, areas: str) -> Seller:
    key = (await seller.ok("addsellerkey", name=areas, permissions=areas))["sellerkey"]
    return acting_as(seller, key)


async def areas_of(seller: Seller) -> list[str]:
    areas: list[str] = (await seller.ok("setseller"))["permissions"]
    return areas


async def test_a_sellerkeys_key_cannot_mint_a_key_with_more_areas(seller: Seller) -> None:
    keys = await limited(seller, "sellerkeys")
    for asked, beyond in (("all", "licenses"), ("licenses", "licenses"), ("sellerkeys,team", "team")):
        body = await keys.fails("addsellerkey", 403, "beyond_own_areas", permissions=asked)
        assert beyond in body["message"]
    made = (await keys.ok("addsellerkey", permissions="sellerkeys"))["sellerkey"]
    assert await areas_of(acting_as(seller, made)) == ["sellerkeys"]
    listed = (await keys.ok("fetchallsellerkeys"))["keys"]
    assert sorted(tuple(k["permissions"]) for k in listed).count(("sellerkeys",)) == 2
    broader = await limited(seller, "licenses,sellerkeys")
    assert (await broader.ok("addsellerkey", permissions="licenses"))["permissions"] == ["licenses"]


async def test_a_limited_key_cannot_revoke_a_key_that_holds_more(seller: Seller) -> None:
    keys = await limited(seller, "sellerkeys")
    listed = (await seller.ok("fetchallsellerkeys"))["keys"]
    master = next(k for k in listed if k["name"] == "initial")
    await keys.fails("delsellerkey", 403, "beyond_own_areas", id=master["id"])
    assert await areas_of(seller)  # the owner's key still works
    twin = await limited(seller, "sellerkeys")
    twin_id = next(
        k["id"]
        for k in (await seller.ok("fetchallsellerkeys"))["keys"]
        if k["current"] is False and k["name"] == "sellerkeys" and k["prefix"] == twin.key[:6]
    )
    await keys.ok("delsellerkey", id=twin_id)


async def test_a_team_key_cannot_create_a_manager_with_areas_it_lacks(
    seller: Seller, services: Services
) -> None:
    team_only = await limited(seller, "team")
    await team_only.fails(
        "addAccount", 403, "beyond_own_areas", role="Manager", user="boss", perms="all", **{"pass": "pw"}
    )
    await team_only.fails(
        "addAccount", 403, "beyond_own_areas", role="Manager", user="boss", **{"pass": "pw"}
    )  # no perms: every manager area
    await team_only.fails(
        "addAccount", 403, "beyond_own_areas", role="Reseller", user="res", **{"pass": "pw"}
    )
    assert (await seller.ok("fetchteam"))["managers"] == []
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts WHERE role != 'seller'") == 0

    team_and_logs = await limited(seller, "team,logs,licenses,users")
    manager = await add_account(team_and_logs, "Manager", "boss", perms="logs")
    assert await areas_of(manager) == ["logs"]
    reseller = await add_account(team_and_logs, "Reseller", "res")
    assert await areas_of(reseller) == ["licenses", "users"]


async def test_a_team_key_cannot_touch_a_member_holding_more_than_it(seller: Seller) -> None:
    strong = await add_account(seller, "Manager", "strong", perms="licenses,settings,files")
    team_and_files = await limited(seller, "team,files")
    await team_and_files.fails("addaccountkey", 403, "beyond_own_areas", user="strong")
    await team_and_files.fails(
        "editmanager", 403, "beyond_own_areas", username="strong", **{"pass": "mine now"}
    )
    await team_and_files.fails(
        "editmanager", 403, "beyond_own_areas", username="strong", email="me@evil.test"
    )
    await team_and_files.fails("editmanager", 403, "beyond_own_areas", username="strong", disabled="1")
    assert await areas_of(strong) == ["licenses", "files", "settings"]

    await add_account(team_and_files, "Manager", "weak", perms="files")
    await team_and_files.fails(
        "editmanager", 403, "beyond_own_areas", username="weak", perms="files,settings"
    )
    await team_and_files.ok("editmanager", username="weak", perms="files", email="w@example.com")
    extra = (await team_and_files.ok("addaccountkey", user="weak"))["sellerkey"]
    assert await areas_of(acting_as(seller, extra)) == ["files"]
    await team_and_files.ok("deleteAccount", user="strong")  # taking away is not granting
