"""The OpenAPI document (issue 10 item 18): valid OpenAPI 3.1 by a validator from PyPI, one path per
interface (no `?type=` path keys), `minLength: 1` on required strings, `format=text` answers
described, built once per process, and real calls match the schema of their operation."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import pytest
from openapi_spec_validator import validate

from licensegate.api import openapi
from licensegate.operations.declarations import Param

pytestmark = pytest.mark.anyio


def arguments_schema(document: dict[str, Any], path: str) -> dict[str, Any]:
    """The `arguments` parameter's schema with its references resolvable (for jsonschema)."""
    parameter = document["paths"][path]["post"]["parameters"][0]
    assert parameter["name"] == "arguments"
    assert (parameter["in"], parameter["style"], parameter["explode"]) == ("query", "form", True)
    schema = {k: v for k, v in parameter["schema"].items() if k != "discriminator"}
    return {**schema, "components": document["components"]}


def test_the_document_is_valid_openapi_3_1() -> None:
    validate(openapi.document())


def test_path_keys_are_paths() -> None:
    paths = openapi.document()["paths"]
    assert set(paths) == {"/api/1.0/", "/api/seller/"}
    assert not [key for key in paths if "?" in key or "#" in key]
    assert set(paths["/api/seller/"]) == {"get", "post"}
    assert set(paths["/api/1.0/"]) == {"post"}


def test_required_strings_may_not_be_empty() -> None:
    schemas = openapi.document()["components"]["schemas"]
    checked = 0
    for iface in openapi.interfaces():
        for op in iface.registry:
            properties = schemas[f"{iface.name}.{op.type}.arguments"]["properties"]
            for param in op.params:
                if param.kind == "str":
                    assert properties[param.name].get("minLength") == (1 if param.required else None)
                    checked += param.required
    assert checked > 50
    credentials = openapi.document()["components"]["parameters"]
    assert credentials["seller_sellerkey"]["schema"]["minLength"] == 1
    assert credentials["client_ownerid"]["schema"]["minLength"] == 1
    assert "minLength" not in openapi.param_schema(Param("note"))


def test_text_answers_are_described() -> None:
    seller = openapi.document()["paths"]["/api/seller/"]["post"]
    assert seller["responses"]["200"]["content"]["text/plain"]["schema"] == {"type": "string"}
    fmt = next(p for p in seller["parameters"] if p.get("name") == "format")
    assert fmt["schema"]["enum"] == ["json", "text"]
    assert "`fetchallkeys`" in fmt["description"]
    schemas = openapi.document()["components"]["schemas"]
    assert "text/plain" in schemas["seller.fetchallkeys.arguments"]["description"]
    assert "text/plain" not in schemas["seller.addsub.arguments"]["description"]


@pytest.mark.parametrize(
    ("path", "query", "valid"),
    [
        ("/api/1.0/", {"type": "init", "ver": "1.0"}, True),
        ("/api/1.0/", {"type": "license", "key": "ABC-DEF"}, True),
        ("/api/1.0/", {"type": "license"}, False),  # key is required
        ("/api/1.0/", {"type": "license", "key": ""}, False),  # an empty key counts as absent
        ("/api/1.0/", {"type": "nosuchtype"}, False),
        ("/api/seller/", {"type": "add", "expiry": 1.5, "amount": 3}, True),
        ("/api/seller/", {"type": "add", "expiry": 1.5, "amount": 0}, False),  # at least 1
        ("/api/seller/", {"type": "adduser", "user": "kim"}, False),  # sub and expiry missing
    ],
)
def test_calls_match_the_schema_of_their_operation(path: str, query: dict[str, Any], valid: bool) -> None:
    schema = arguments_schema(openapi.document(), path)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(query))
    assert (not errors) == valid, errors


def test_every_operation_with_its_required_parameters_matches_exactly_one_schema() -> None:
    document = openapi.document()
    for iface in openapi.interfaces():
        schema = arguments_schema(document, iface.path)
        validator = jsonschema.Draft202012Validator(schema)
        for op in iface.registry:
            query: dict[str, Any] = {"type": op.type}
            for param in op.params:
                if param.required:
                    fits = param.choices[0] if param.choices else "x"
                    query[param.name] = {"int": 1, "float": 1.0, "bool": "1"}.get(param.kind, fits)
            assert not list(validator.iter_errors(query)), (op.type, query)


async def test_the_document_is_built_once(client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    served = openapi.document_json()

    def rebuilt() -> dict[str, Any]:
        raise AssertionError("the OpenAPI document was built again")

    monkeypatch.setattr(openapi, "_build", rebuilt)
    first = await client.get("/openapi.json")
    second = await client.get("/openapi.json")
    assert first.status_code == second.status_code == 200
    assert first.content == second.content == served
    assert first.headers["content-type"] == "application/json"
    assert openapi.document() is openapi.document()
