"""The seller API's shared behaviour: credentials, parameters, envelope and statuses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from licensegate.domain import permissions
from licensegate.domain.errors import Invalid
from licensegate.operations.declarations import Operation, Param
from licensegate.operations.seller.registry import SellerCall, registry
from licensegate.services import Services
from tests.helpers import SELLER_PATH, Seller

pytestmark = pytest.mark.anyio


async def test_missing_seller_key_is_401(client: httpx.AsyncClient) -> None:
    response = await client.get(SELLER_PATH, params={"type": "setseller"})
    assert response.status_code == 401
    assert response.json() == {
        "success": False,
        "message": "No seller key specified.",
        "error": "missing_seller_key",
    }


async def test_malformed_and_unknown_seller_keys_are_401(seller: Seller) -> None:
    await seller.fails("setseller", 401, "invalid_seller_key", sellerkey="not-a-key")
    await seller.fails("setseller", 401, "invalid_seller_key", sellerkey=seller.key.upper())
    await seller.fails("setseller", 401, "unknown_seller_key", sellerkey="0" * 32)


async def test_validate_seller_key_names_the_application(seller: Seller) -> None:
    body = await seller.ok("setseller")
    assert body["message"] == "Seller Key Successfully Found"
    assert body["app"] == {"name": "app", "ownerid": seller.ownerid}
    assert body["permissions"] == list(permissions.AREAS)


async def test_type_missing_or_unknown_is_400(seller: Seller, client: httpx.AsyncClient) -> None:
    response = await client.get(SELLER_PATH, params={"sellerkey": seller.key})
    assert (response.status_code, response.json()["error"]) == (400, "missing_type")
    await seller.fails("doesnotexist", 400, "unknown_type")


async def test_post_with_query_and_form_body(seller: Seller, client: httpx.AsyncClient) -> None:
    # Parameters may come in a form body; the query string wins on conflict.
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "addsub", "name": "fromquery"},
        data={"name": "frombody", "level": "7"},
    )
    assert response.status_code == 200, response.text
    subs = {s["name"]: s["level"] for s in (await seller.ok("fetchallsubs"))["subs"]}
    assert subs["fromquery"] == "7"
    assert "frombody" not in subs
    # Everything in the body works too, including type and seller key.
    response = await client.post(
        SELLER_PATH, data={"sellerkey": seller.key, "type": "addsub", "name": "bodyonly", "level": "1"}
    )
    assert response.status_code == 200, response.text


async def test_other_methods_and_paths_answer_json(client: httpx.AsyncClient) -> None:
    response = await client.delete(SELLER_PATH)
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
    response = await client.get("/nowhere")
    assert response.status_code == 404
    assert response.json() == {
        "success": False,
        "message": "There is nothing at this address.",
        "error": "not_found",
    }


async def test_path_without_trailing_slash_works(seller: Seller, client: httpx.AsyncClient) -> None:
    response = await client.get("/api/seller", params={"sellerkey": seller.key, "type": "setseller"})
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"name": "x" * 65, "level": "1"}, "parameter_too_long"),
        ({"name": "a\x00b", "level": "1"}, "invalid_character"),
        ({"name": "", "level": "1"}, "missing_parameter"),
        ({"name": "   ", "level": "1"}, "missing_parameter"),
    ],
)
async def test_bad_parameters_are_400(seller: Seller, params: dict[str, str], error: str) -> None:
    await seller.fails("addsub", 400, error, **params)


async def test_bad_numbers_are_400(seller: Seller) -> None:
    await seller.fails("delsellerkey", 400, "invalid_number", id="abc")
    await seller.fails("delsellerkey", 400, "invalid_number", id="1.5")
    await seller.fails("delsellerkey", 400, "number_out_of_range", id="0")


async def test_a_parameter_error_names_the_parameter(seller: Seller) -> None:
    too_long = await seller.fails("addsub", 400, "parameter_too_long", name="x" * 65, level="1")
    assert too_long["param"] == "name"
    assert (await seller.fails("addsub", 400, "missing_parameter", name="pro"))["param"] == "level"
    assert (await seller.fails("delsellerkey", 400, "invalid_number", id="abc"))["param"] == "id"
    assert (await seller.fails("delsellerkey", 400, "number_out_of_range", id="0"))["param"] == "id"
    assert "param" not in await seller.fails("doesnotexist", 400, "unknown_type")


async def test_oversized_query_string_is_414(seller: Seller) -> None:
    body = await seller.fails("addsub", 414, "uri_too_long", name="x" * 20_000, level="1")
    assert "query string" in body["message"]


async def test_oversized_body_is_400(seller: Seller, client: httpx.AsyncClient) -> None:
    response = await client.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "addsub"},
        data={"name": "x" * 70_000, "level": "1"},
    )
    assert (response.status_code, response.json()["error"]) == (400, "request_too_large")


async def test_too_many_parameters_is_400(seller: Seller, client: httpx.AsyncClient) -> None:
    query = "&".join(f"p{i}=1" for i in range(300))
    response = await client.get(f"{SELLER_PATH}?sellerkey={seller.key}&type=setseller&{query}")
    assert (response.status_code, response.json()["error"]) == (400, "too_many_parameters")


async def test_invalid_utf8_is_400(seller: Seller, client: httpx.AsyncClient) -> None:
    response = await client.get(f"{SELLER_PATH}?sellerkey={seller.key}&type=addsub&name=%ff%fe&level=1")
    assert (response.status_code, response.json()["error"]) == (400, "invalid_encoding")


async def test_repeated_parameter_last_one_wins(seller: Seller, client: httpx.AsyncClient) -> None:
    # KeyAuth's Telegram bot sends `type` twice; PHP keeps the last.
    response = await client.get(f"{SELLER_PATH}?sellerkey={seller.key}&type=nope&type=setseller")
    assert response.status_code == 200


async def test_limited_key_is_refused_other_areas(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", name="subs only", permissions="subscriptions"))["sellerkey"]
    assert (await seller.call("fetchallsubs", sellerkey=limited)).status_code == 200
    body = await seller.fails("fetchallsellerkeys", 403, "permission_denied", sellerkey=limited)
    assert "sellerkeys" in body["message"]


async def test_disabled_account_is_403(seller: Seller, services: Services) -> None:
    # Raw: no operation disables an owner's account (only a team member's).
    await services.db.execute("UPDATE accounts SET disabled = 1")
    await seller.fails("setseller", 403, "account_disabled")


@pytest.fixture
async def broken_operation() -> AsyncIterator[None]:
    async def explode(_call: SellerCall) -> dict[str, Any]:
        raise RuntimeError("secret internal detail")

    op = Operation(type="__explode", group="test", summary="fails", handler=explode)
    registry.add(op)
    yield
    registry._by_type.pop("__explode")
    registry._ordered.remove(op)


@pytest.mark.usefixtures("broken_operation")
async def test_unexpected_fault_is_500_with_a_request_id_and_no_details(
    seller: Seller, caplog: pytest.LogCaptureFixture
) -> None:
    response = await seller.call("__explode")
    body = response.json()
    assert response.status_code == 500
    assert body["error"] == "internal_error"
    assert "secret internal detail" not in response.text
    assert "Traceback" not in response.text
    assert body["request_id"] in body["message"]
    assert body["request_id"] in caplog.text
    assert "secret internal detail" in caplog.text


def test_operation_refusal_outside_declared_statuses_becomes_403() -> None:
    from licensegate.domain.errors import NotFound, RateLimited

    async def handler(_call: SellerCall) -> dict[str, Any]:
        return {}

    op = Operation(type="x", group="g", summary="s", handler=handler, statuses=frozenset({200, 400, 403}))
    assert op.status_for(RateLimited(5)) == 403
    assert op.status_for(NotFound("m", "e")) == 403
    full = Operation(type="y", group="g", summary="s", handler=handler)
    assert full.status_for(RateLimited(5)) == 429


def test_registry_refuses_duplicates_and_missing_base_statuses() -> None:
    async def handler(_call: SellerCall) -> dict[str, Any]:
        return {}

    with pytest.raises(ValueError, match="declared twice"):
        registry.add(Operation(type="setseller", group="g", summary="s", handler=handler))
    with pytest.raises(ValueError, match="200, 400 and 403"):
        registry.add(Operation(type="zz", group="g", summary="s", handler=handler, statuses=frozenset({200})))


def test_every_seller_operation_is_declared_sanely() -> None:
    for op in registry:
        assert op.summary, op.type
        assert op.doc, f"{op.type} has no description"
        assert op.statuses <= frozenset({200, 400, 401, 403, 404, 409, 429, 500, 503})
        assert 401 in op.statuses, op.type  # every seller call carries a credential
        assert op.area == "" or op.area in permissions.AREAS, op.type
        for param in op.params:
            assert isinstance(param, Param)
            assert 0 < param.max_length <= 1_000_000


def test_raw_utf8_and_escaped_utf8_mean_the_same() -> None:
    from starlette.requests import Request

    from licensegate.api.request import read_query

    def query(raw: bytes) -> dict[str, str]:
        return read_query(Request({"type": "http", "query_string": raw, "headers": []}), 16384)

    # Some clients send values unescaped; a raw UTF-8 query string is read as UTF-8.
    assert query("name=café&x".encode()) == {"name": "caf\u00e9", "x": ""}
    assert query(b"name=caf%C3%A9+au+lait") == {"name": "caf\u00e9 au lait"}
    with pytest.raises(Invalid, match="UTF-8"):
        query(b"name=caf\xe9")
