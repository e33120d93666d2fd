"""Seller API — Seller Key group: validate, create, list and delete seller keys."""

from __future__ import annotations

import re

import pytest

from licensegate.services import Services
from tests.helpers import Seller

pytestmark = pytest.mark.anyio


async def test_addsellerkey_returns_a_new_working_key_stored_only_as_a_digest(
    seller: Seller, services: Services
) -> None:
    body = await seller.ok("addsellerkey", name="bot", permissions="licenses,users")
    new_key = body["sellerkey"]
    assert re.fullmatch(r"[0-9a-f]{32}", new_key)
    assert body["permissions"] == ["licenses", "users"]
    assert (await seller.call("setseller", sellerkey=new_key)).status_code == 200
    stored = await services.db.fetch_all("SELECT key_hash FROM seller_keys")
    assert all(new_key not in row["key_hash"] and seller.key not in row["key_hash"] for row in stored)


async def test_addsellerkey_permission_forms(seller: Seller) -> None:
    assert (await seller.ok("addsellerkey", permissions="3"))["permissions"] == ["licenses", "users"]
    assert len((await seller.ok("addsellerkey"))["permissions"]) == 14
    await seller.fails("addsellerkey", 400, "invalid_permissions", permissions="licenses,nope")
    await seller.fails("addsellerkey", 400, "invalid_permissions", permissions="999999")


async def test_fetchallsellerkeys_lists_without_secrets(seller: Seller) -> None:
    await seller.ok("addsellerkey", name="second")
    keys = (await seller.ok("fetchallsellerkeys"))["keys"]
    assert [k["name"] for k in keys] == ["initial", "second"]
    assert [k["current"] for k in keys] == [True, False]
    assert keys[0]["prefix"] == seller.key[:6]
    assert set(keys[0]) == {
        "id",
        "name",
        "prefix",
        "permissions",
        "created_at",
        "last_used_at",
        "last_used_ip",
        "current",
        "account",
        "role",
    }
    assert (keys[0]["account"], keys[0]["role"]) == (None, "owner")
    await seller.ok("addAccount", role="Manager", user="mo", **{"pass": "pw"})
    team_key = (await seller.ok("fetchallsellerkeys"))["keys"][-1]
    assert (team_key["account"], team_key["role"]) == ("mo", "manager")
    assert keys[0]["last_used_at"] is not None
    assert keys[0]["last_used_ip"]  # the address of that call


async def test_delsellerkey_revokes_at_once(seller: Seller) -> None:
    other = (await seller.ok("addsellerkey", name="temp"))["sellerkey"]
    keys = (await seller.ok("fetchallsellerkeys"))["keys"]
    other_id = next(k["id"] for k in keys if k["name"] == "temp")
    await seller.ok("delsellerkey", id=other_id)
    await seller.fails("setseller", 401, "unknown_seller_key", sellerkey=other)
    await seller.fails("delsellerkey", 404, "seller_key_not_found", id=other_id)


async def test_a_key_cannot_delete_itself(seller: Seller) -> None:
    own_id = (await seller.ok("fetchallsellerkeys"))["keys"][0]["id"]
    await seller.fails("delsellerkey", 409, "cannot_delete_own_key", id=own_id)


async def test_keys_of_another_application_are_invisible(seller: Seller, services: Services) -> None:
    from tests.helpers import create_seller

    other = await create_seller(services, seller.http, owner="someone", name="other")
    other_id = (await other.ok("fetchallsellerkeys"))["keys"][0]["id"]
    await seller.fails("delsellerkey", 404, "seller_key_not_found", id=other_id)
    assert (await other.ok("setseller"))["app"]["name"] == "other"
