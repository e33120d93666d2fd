"""Seller API — User Variable group, over HTTP."""

from __future__ import annotations

import httpx
import pytest

from licensegate.services import Services
from tests.helpers import Seller, create_seller, make_user

pytestmark = pytest.mark.anyio

# Characters a query string must escape, non-Latin text and surrounding spaces (data is not stripped).
TRICKY = "  héllo wörld ✓ 日本 a&b=c+d%20?x#y/z\\ 'q' \"d\"  "


async def var_rows(services: Services, app_id: int) -> int:
    count: int = await services.db.fetch_value("SELECT COUNT(*) FROM user_vars WHERE app_id = ?", app_id)
    return count


# --- setvar / getvar ----------------------------------------------------------------------------


async def test_setvar_creates_a_variable_that_getvar_reads(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    body = await seller.ok("setvar", user="alice", var="color", data="blue")
    assert body == {"success": True, "message": "Successfully set variable!", "updated": 1}
    got = await seller.ok("getvar", user="alice", var="color")
    assert got == {
        "success": True,
        "message": "Successfully retrieved variable",
        "response": "blue",
        "readOnly": 0,
    }


async def test_setvar_replaces_an_existing_value_in_place(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.ok("setvar", user="alice", var="color", data="blue")
    assert (await seller.ok("setvar", user="alice", var="color", data="red"))["updated"] == 1
    assert (await seller.ok("getvar", user="alice", var="color"))["response"] == "red"
    assert await var_rows(services, seller.app_id) == 1


async def test_setvar_with_all_sets_the_variable_for_every_user(seller: Seller, services: Services) -> None:
    for name in ("alice", "bob", "carol"):
        await make_user(services, seller.app_id, name)
    await seller.ok("setvar", user="bob", var="tier", data="old", readOnly=1)
    body = await seller.ok("setvar", user="all", var="tier", data="gold")
    assert body["updated"] == 3
    for name in ("alice", "bob", "carol"):
        assert (await seller.ok("getvar", user=name, var="tier"))["response"] == "gold"
    # bob's existing variable was overwritten, and kept its read-only flag.
    assert (await seller.ok("getvar", user="bob", var="tier"))["readOnly"] == 1
    assert (await seller.ok("getvar", user="alice", var="tier"))["readOnly"] == 0
    assert await var_rows(services, seller.app_id) == 3


async def test_setvar_with_all_leaves_other_applications_alone(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other app")
    await make_user(services, seller.app_id, "alice")
    await make_user(services, other.app_id, "zed")
    assert (await seller.ok("setvar", user="all", var="v", data="1"))["updated"] == 1
    assert await var_rows(services, other.app_id) == 0
    await other.fails("getvar", 404, "variable_not_found", user="zed", var="v")


async def test_setvar_with_all_and_no_users_is_404_no_users(seller: Seller) -> None:
    await seller.fails("setvar", 404, "no_users", user="all", var="v", data="1")


async def test_setvar_for_an_unknown_user_is_404(seller: Seller, services: Services) -> None:
    await seller.fails("setvar", 404, "user_not_found", user="ghost", var="v", data="1")
    assert await var_rows(services, seller.app_id) == 0


async def test_setvar_requires_user_var_and_non_empty_data(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.fails("setvar", 400, "missing_parameter", var="v", data="1")
    await seller.fails("setvar", 400, "missing_parameter", user="alice", data="1")
    await seller.fails("setvar", 400, "missing_parameter", user="alice", var="v")
    await seller.fails("setvar", 400, "missing_parameter", user="alice", var="v", data="")


async def test_setvar_size_limits(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.fails("setvar", 400, "parameter_too_long", user="alice", var="v", data="x" * 501)
    await seller.fails("setvar", 400, "parameter_too_long", user="alice", var="v" * 65, data="1")
    await seller.fails("setvar", 400, "parameter_too_long", user="u" * 129, var="v", data="1")
    await seller.ok("setvar", user="alice", var="v" * 64, data="x" * 500)
    assert (await seller.ok("getvar", user="alice", var="v" * 64))["response"] == "x" * 500


async def test_setvar_refuses_a_read_only_value_that_is_not_a_flag(
    seller: Seller, services: Services
) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.fails("setvar", 400, "invalid_boolean", user="alice", var="v", data="1", readOnly="maybe")


async def test_read_only_flag_round_trips_and_the_owner_may_overwrite(
    seller: Seller, services: Services
) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.ok("setvar", user="alice", var="plan", data="pro", readOnly=1)
    assert (await seller.ok("getvar", user="alice", var="plan"))["readOnly"] == 1
    listed = (await seller.ok("fetchalluservars"))["vars"]
    assert listed == [{"name": "plan", "data": "pro", "user": "alice", "readOnly": 1}]
    # The owner may overwrite a read-only variable; without readOnly the flag stays.
    await seller.ok("setvar", user="alice", var="plan", data="max")
    got = await seller.ok("getvar", user="alice", var="plan")
    assert (got["response"], got["readOnly"]) == ("max", 1)
    # KeyAuth's JavaScript client spells it `readonly`.
    await seller.ok("setvar", user="alice", var="plan", data="max", readonly=0)
    assert (await seller.ok("getvar", user="alice", var="plan"))["readOnly"] == 0


async def test_values_with_unicode_and_query_characters_survive(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.ok("setvar", user="alice", var="note", data=TRICKY)
    assert (await seller.ok("getvar", user="alice", var="note"))["response"] == TRICKY
    assert (await seller.ok("fetchalluservars", user="alice"))["vars"][0]["data"] == TRICKY
    await seller.ok("edituservar", user="alice", var="note", data=TRICKY + "&=")
    assert (await seller.ok("getvar", user="alice", var="note"))["response"] == TRICKY + "&="


async def test_getvar_reports_an_unknown_user_and_an_unknown_variable(
    seller: Seller, services: Services
) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.fails("getvar", 404, "user_not_found", user="ghost", var="v")
    await seller.fails("getvar", 404, "variable_not_found", user="alice", var="v")
    await seller.fails("getvar", 400, "missing_parameter", user="alice")
    await seller.fails("getvar", 400, "missing_parameter", var="v")


# --- fetchalluservars ---------------------------------------------------------------------------


async def test_fetchalluservars_with_no_variables_is_an_empty_success(seller: Seller) -> None:
    body = await seller.ok("fetchalluservars")
    assert body == {
        "success": True,
        "message": "Successfully retrieved user variables",
        "vars": [],
        "count": 0,
    }


async def test_fetchalluservars_lists_filters_and_pages(seller: Seller, services: Services) -> None:
    for name in ("alice", "bob"):
        await make_user(services, seller.app_id, name)
    await seller.ok("setvar", user="alice", var="a", data="1")
    await seller.ok("setvar", user="alice", var="b", data="2", readOnly=1)
    await seller.ok("setvar", user="bob", var="a", data="3")

    body = await seller.ok("fetchalluservars")
    assert body["count"] == 3
    assert body["vars"] == [
        {"name": "a", "data": "1", "user": "alice", "readOnly": 0},
        {"name": "b", "data": "2", "user": "alice", "readOnly": 1},
        {"name": "a", "data": "3", "user": "bob", "readOnly": 0},
    ]
    by_user = await seller.ok("fetchalluservars", user="bob")
    assert (by_user["count"], [v["data"] for v in by_user["vars"]]) == (1, ["3"])
    by_name = await seller.ok("fetchalluservars", var="a")
    assert (by_name["count"], [v["user"] for v in by_name["vars"]]) == (2, ["alice", "bob"])
    both = await seller.ok("fetchalluservars", user="alice", var="b")
    assert [v["data"] for v in both["vars"]] == ["2"]

    page = await seller.ok("fetchalluservars", limit=2, page=2)
    assert page["count"] == 3  # the total across pages
    assert [v["data"] for v in page["vars"]] == ["3"]
    empty = await seller.ok("fetchalluservars", user="bob", var="b")
    assert (empty["count"], empty["vars"]) == (0, [])


async def test_fetchalluservars_refuses_an_unknown_user_and_bad_paging(seller: Seller) -> None:
    await seller.fails("fetchalluservars", 404, "user_not_found", user="ghost")
    await seller.fails("fetchalluservars", 400, "number_out_of_range", limit=0)
    await seller.fails("fetchalluservars", 400, "invalid_number", page="x")


async def test_fetchalluservars_shows_only_this_applications_variables(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other app")
    await make_user(services, other.app_id, "zed")
    await other.ok("setvar", user="zed", var="v", data="1")
    assert (await seller.ok("fetchalluservars"))["vars"] == []
    # Another application's user is unknown here.
    await seller.fails("fetchalluservars", 404, "user_not_found", user="zed")


# --- edituservar --------------------------------------------------------------------------------


async def test_edituservar_changes_value_and_optionally_the_flag(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.ok("setvar", user="alice", var="v", data="1", readOnly=1)
    body = await seller.ok("edituservar", user="alice", var="v", data="2")
    assert body == {"success": True, "message": "Successfully edited variable!"}
    got = await seller.ok("getvar", user="alice", var="v")
    assert (got["response"], got["readOnly"]) == ("2", 1)
    await seller.ok("edituservar", user="alice", var="v", data="3", readOnly=0)
    got = await seller.ok("getvar", user="alice", var="v")
    assert (got["response"], got["readOnly"]) == ("3", 0)


async def test_edituservar_never_creates_a_variable(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.fails("edituservar", 404, "variable_not_found", user="alice", var="v", data="1")
    await seller.fails("getvar", 404, "variable_not_found", user="alice", var="v")
    await seller.fails("edituservar", 404, "user_not_found", user="ghost", var="v", data="1")
    await seller.fails("edituservar", 400, "missing_parameter", user="alice", var="v")
    await seller.fails("edituservar", 400, "parameter_too_long", user="alice", var="v", data="x" * 501)
    assert await var_rows(services, seller.app_id) == 0


# --- deluservar, massUserVarDelete, delalluservars ----------------------------------------------


async def test_deluservar_deletes_one_users_variable(seller: Seller, services: Services) -> None:
    for name in ("alice", "bob"):
        await make_user(services, seller.app_id, name)
    await seller.ok("setvar", user="all", var="v", data="1")
    body = await seller.ok("deluservar", user="alice", var="v")
    assert body == {"success": True, "message": "Successfully deleted variable!"}
    await seller.fails("getvar", 404, "variable_not_found", user="alice", var="v")
    assert (await seller.ok("getvar", user="bob", var="v"))["response"] == "1"


async def test_deluservar_reports_unknown_user_and_variable(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.fails("deluservar", 404, "variable_not_found", user="alice", var="v")
    await seller.fails("deluservar", 404, "user_not_found", user="ghost", var="v")
    await seller.fails("deluservar", 400, "missing_parameter", user="alice")


async def test_massuservardelete_deletes_the_name_from_every_user(seller: Seller, services: Services) -> None:
    for name in ("alice", "bob"):
        await make_user(services, seller.app_id, name)
    await seller.ok("setvar", user="all", var="gone", data="1")
    await seller.ok("setvar", user="alice", var="kept", data="2")
    body = await seller.ok("massUserVarDelete", name="gone")
    assert body == {
        "success": True,
        "message": "Successfully deleted user variables with that name!",
        "deleted": 2,
    }
    assert [v["name"] for v in (await seller.ok("fetchalluservars"))["vars"]] == ["kept"]
    # Nothing left to delete is still a success; KeyAuth's Telegram bot sends `var`.
    assert (await seller.ok("massUserVarDelete", var="gone"))["deleted"] == 0
    await seller.fails("massUserVarDelete", 400, "missing_parameter")


async def test_delalluservars_deletes_every_variable_of_this_application_only(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other app")
    await make_user(services, other.app_id, "zed")
    await other.ok("setvar", user="zed", var="v", data="1")
    for name in ("alice", "bob"):
        await make_user(services, seller.app_id, name)
    await seller.ok("setvar", user="all", var="a", data="1")
    await seller.ok("setvar", user="alice", var="b", data="2")
    body = await seller.ok("delalluservars")
    assert body == {"success": True, "message": "Successfully deleted all user variables!", "deleted": 3}
    assert (await seller.ok("fetchalluservars"))["count"] == 0
    assert (await seller.ok("delalluservars"))["deleted"] == 0
    assert await var_rows(services, other.app_id) == 1


async def test_deleting_a_user_deletes_their_variables(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "alice")
    await seller.ok("setvar", user="alice", var="v", data="1")
    await seller.ok("deluser", user="alice")
    assert await var_rows(services, seller.app_id) == 0


async def test_user_variable_operations_need_the_variables_permission(
    seller: Seller, services: Services
) -> None:
    await make_user(services, seller.app_id, "alice")
    limited = (await seller.ok("addsellerkey", permissions="users"))["sellerkey"]
    for type_, params in [
        ("setvar", {"user": "alice", "var": "v", "data": "1"}),
        ("getvar", {"user": "alice", "var": "v"}),
        ("fetchalluservars", {}),
        ("edituservar", {"user": "alice", "var": "v", "data": "1"}),
        ("deluservar", {"user": "alice", "var": "v"}),
        ("massUserVarDelete", {"name": "v"}),
        ("delalluservars", {}),
    ]:
        response = await seller.call(type_, sellerkey=limited, **params)
        assert (response.status_code, response.json()["error"]) == (403, "permission_denied"), type_
