"""Seller API — Global Variable group, over HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.services import Services
from tests.conftest import make_settings
from tests.helpers import Seller, create_seller

pytestmark = pytest.mark.anyio

DATETIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
TRICKY = "  héllo wörld ✓ 日本 a&b=c+d%20?x#y/z\\ 'q' \"d\"  "


# --- addvar / retrvvar ---------------------------------------------------------------------------


async def test_addvar_creates_a_variable_that_retrvvar_reads(seller: Seller) -> None:
    body = await seller.ok("addvar", name="motd", data="hello", authed=0)
    assert body == {"success": True, "message": "Successfully created variable!"}
    got = await seller.ok("retrvvar", name="motd")
    # KeyAuth clients read the value from `message`.
    assert got == {"success": True, "message": "hello", "value": "hello", "authed": 0}


async def test_addvar_requires_login_by_default(seller: Seller) -> None:
    await seller.ok("addvar", name="motd", data="hello")
    assert (await seller.ok("retrvvar", name="motd"))["authed"] == 1


async def test_addvar_refuses_a_duplicate_name(seller: Seller) -> None:
    await seller.ok("addvar", name="motd", data="hello")
    await seller.fails("addvar", 409, "variable_exists", name="motd", data="other")
    assert (await seller.ok("retrvvar", name="motd"))["value"] == "hello"


async def test_addvar_validates_its_parameters(seller: Seller) -> None:
    await seller.fails("addvar", 400, "missing_parameter", data="x")
    await seller.fails("addvar", 400, "missing_parameter", name="v")
    await seller.fails("addvar", 400, "missing_parameter", name="v", data="")
    await seller.fails("addvar", 400, "parameter_too_long", name="v" * 65, data="x")
    await seller.fails("addvar", 400, "parameter_too_long", name="v", data="x" * 1001)
    await seller.fails("addvar", 400, "invalid_boolean", name="v", data="x", authed="2")
    await seller.ok("addvar", name="v" * 64, data="x" * 1000)
    assert (await seller.ok("retrvvar", name="v" * 64))["value"] == "x" * 1000


async def test_the_same_name_may_exist_in_two_applications(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other app")
    await seller.ok("addvar", name="motd", data="mine")
    await other.ok("addvar", name="motd", data="theirs")
    assert (await seller.ok("retrvvar", name="motd"))["value"] == "mine"
    assert (await other.ok("retrvvar", name="motd"))["value"] == "theirs"


async def test_values_with_unicode_and_query_characters_survive(seller: Seller) -> None:
    await seller.ok("addvar", name="note", data=TRICKY)
    assert (await seller.ok("retrvvar", name="note"))["value"] == TRICKY
    assert (await seller.ok("fetchallvars"))["variables"][0]["setting_value"] == TRICKY
    await seller.ok("editvar", varid="note", data=TRICKY + "&=")
    assert (await seller.ok("retrvvar", varid="note"))["message"] == TRICKY + "&="


async def test_retrvvar_reports_an_unknown_variable(seller: Seller) -> None:
    await seller.fails("retrvvar", 404, "variable_not_found", name="nope")
    await seller.fails("retrvvar", 400, "missing_parameter")


# --- editvar -------------------------------------------------------------------------------------


async def test_editvar_replaces_the_value_and_optionally_authed(seller: Seller) -> None:
    await seller.ok("addvar", name="motd", data="hello", authed=1)
    body = await seller.ok("editvar", varid="motd", data="bye")
    assert body == {"success": True, "message": "Variable Edit Successful"}
    got = await seller.ok("retrvvar", name="motd")
    assert (got["value"], got["authed"]) == ("bye", 1)
    # `name` is accepted for `varid`.
    await seller.ok("editvar", name="motd", data="bye", authed=0)
    got = await seller.ok("retrvvar", name="motd")
    assert (got["value"], got["authed"]) == ("bye", 0)


async def test_editvar_failures(seller: Seller) -> None:
    await seller.fails("editvar", 404, "variable_not_found", varid="nope", data="x")
    await seller.ok("addvar", name="motd", data="hello")
    await seller.fails("editvar", 400, "missing_parameter", varid="motd")
    await seller.fails("editvar", 400, "missing_parameter", data="x")
    await seller.fails("editvar", 400, "parameter_too_long", varid="motd", data="x" * 1001)
    await seller.fails("editvar", 400, "invalid_boolean", varid="motd", data="x", authed="maybe")
    assert (await seller.ok("retrvvar", name="motd"))["value"] == "hello"


# --- fetchallvars --------------------------------------------------------------------------------


async def test_fetchallvars_has_exactly_the_documented_shape(seller: Seller, clock: MovableClock) -> None:
    await seller.ok("addvar", name="first", data="1")
    clock.advance(5)
    await seller.ok("addvar", name="second", data="two", authed=0)
    body = await seller.ok("fetchallvars")
    assert set(body) == {"success", "variables"}
    assert [v["setting_key"] for v in body["variables"]] == ["first", "second"]
    for entry in body["variables"]:
        assert set(entry) == {"setting_key", "setting_value", "created_at"}
        assert isinstance(entry["setting_value"], str)
        assert DATETIME.fullmatch(entry["created_at"])
    assert body["variables"][0]["setting_value"] == "1"  # a number-like value is still a string


async def test_fetchallvars_created_at_is_utc(seller: Seller, clock: MovableClock) -> None:
    clock.set(1_700_000_000)
    await seller.ok("addvar", name="v", data="x")
    entry = (await seller.ok("fetchallvars"))["variables"][0]
    assert entry["created_at"] == "2023-11-14 22:13:20"


async def test_fetchallvars_keeps_creation_order_after_edits(seller: Seller) -> None:
    for name in ("b", "a", "c"):
        await seller.ok("addvar", name=name, data=name)
    await seller.ok("editvar", varid="b", data="changed")
    body = await seller.ok("fetchallvars")
    assert [(v["setting_key"], v["setting_value"]) for v in body["variables"]] == [
        ("b", "changed"),
        ("a", "a"),
        ("c", "c"),
    ]


async def test_fetchallvars_with_no_variables_is_an_empty_success(seller: Seller) -> None:
    assert await seller.ok("fetchallvars") == {"success": True, "variables": []}


async def test_fetchallvars_shows_only_this_applications_variables(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other app")
    await other.ok("addvar", name="theirs", data="x")
    assert (await seller.ok("fetchallvars"))["variables"] == []


async def test_fetchallvars_credential_failures(seller: Seller) -> None:
    response = await seller.call("fetchallvars", sellerkey="")
    assert response.status_code in (401, 403)
    assert response.json()["success"] is False
    response = await seller.call("fetchallvars", sellerkey="0" * 32)
    assert response.status_code in (401, 403)
    limited = (await seller.ok("addsellerkey", permissions="users"))["sellerkey"]
    response = await seller.call("fetchallvars", sellerkey=limited)
    assert (response.status_code, response.json()["error"]) == (403, "permission_denied")


def test_fetchallvars_declares_exactly_the_documented_statuses() -> None:
    from licensegate.operations.seller.registry import registry

    op = registry.get("fetchallvars")
    assert op is not None
    assert op.statuses == frozenset({200, 400, 401, 403, 409, 500})


class TestThrottledFetchallvars:
    """With a seller limit of 2 calls per window, the third is throttled. 429 is not among the
    statuses the document lists for fetchallvars, so the protocol layer answers 403."""

    @pytest.fixture
    def settings(self, db_url: str, tmp_path: Path) -> Settings:
        return make_settings(db_url, tmp_path / "data", seller_rate_limit=2)

    async def test_a_throttled_call_is_403_rate_limited_with_retry_after(self, seller: Seller) -> None:
        await seller.ok("fetchallvars")
        await seller.ok("fetchallvars")
        response = await seller.call("fetchallvars")
        body = response.json()
        assert (response.status_code, body["error"]) == (403, "rate_limited")
        assert body["success"] is False
        assert int(response.headers["Retry-After"]) >= 1


# --- delvar / delallvars -------------------------------------------------------------------------


async def test_delvar_deletes_one_variable(seller: Seller) -> None:
    await seller.ok("addvar", name="a", data="1")
    await seller.ok("addvar", name="b", data="2")
    body = await seller.ok("delvar", name="a")
    assert body == {"success": True, "message": "Successfully deleted variable!"}
    await seller.fails("retrvvar", 404, "variable_not_found", name="a")
    assert [v["setting_key"] for v in (await seller.ok("fetchallvars"))["variables"]] == ["b"]
    # `varid` is accepted for `name`.
    await seller.ok("delvar", varid="b")


async def test_delvar_reports_an_unknown_variable(seller: Seller) -> None:
    await seller.fails("delvar", 404, "variable_not_found", name="nope")
    await seller.fails("delvar", 400, "missing_parameter")


async def test_delallvars_deletes_every_variable_of_this_application_only(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other app")
    await other.ok("addvar", name="theirs", data="x")
    await seller.ok("addvar", name="a", data="1")
    await seller.ok("addvar", name="b", data="2")
    body = await seller.ok("delallvars")
    assert body == {"success": True, "message": "Successfully deleted all variables!", "deleted": 2}
    assert (await seller.ok("fetchallvars"))["variables"] == []
    assert (await seller.ok("delallvars"))["deleted"] == 0
    assert len((await other.ok("fetchallvars"))["variables"]) == 1
    # A deleted name can be created again.
    await seller.ok("addvar", name="a", data="again")


async def test_global_variable_operations_need_the_variables_permission(seller: Seller) -> None:
    await seller.ok("addvar", name="v", data="1")
    limited = (await seller.ok("addsellerkey", permissions="users"))["sellerkey"]
    for type_, params in [
        ("addvar", {"name": "w", "data": "1"}),
        ("editvar", {"varid": "v", "data": "2"}),
        ("retrvvar", {"name": "v"}),
        ("delvar", {"name": "v"}),
        ("delallvars", {}),
    ]:
        response = await seller.call(type_, sellerkey=limited, **params)
        assert (response.status_code, response.json()["error"]) == (403, "permission_denied"), type_
