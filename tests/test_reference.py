"""The committed API reference matches the operation declarations it is generated from."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from licensegate import app
from licensegate.api import errorreference, openapi
from licensegate.domain import errorcodes
from licensegate.domain.errors import ErrorCode

DOCS = Path(__file__).resolve().parent.parent / "docs"
HOW = "run `.venv/bin/licensegate reference` to regenerate it"


def test_markdown_reference_is_current() -> None:
    for iface in openapi.interfaces():
        page = DOCS / "api" / f"{iface.name}.md"
        assert page.exists(), HOW
        assert page.read_text() == openapi.markdown(iface), f"{page} is stale: {HOW}"


def test_error_code_reference_is_current() -> None:
    page = DOCS / "api" / "errors.md"
    assert page.exists(), HOW
    assert page.read_text() == errorreference.markdown(app.ROUTING_ERRORS, app.HTTP_ERROR), (
        f"{page} is stale: {HOW}"
    )
    assert "(errors.md)" in (DOCS / "api" / "README.md").read_text()  # the conventions page links it


def test_openapi_document_is_current_and_covers_every_operation() -> None:
    committed = json.loads((DOCS / "openapi.json").read_text())
    document = openapi.document()
    assert committed == document, f"docs/openapi.json is stale: {HOW}"
    components = document["components"]

    def resolve(item: dict[str, Any]) -> dict[str, Any]:
        if "$ref" not in item:
            return item
        _, _, kind, name = item["$ref"].split("/")
        found: dict[str, Any] = components[kind][name]  # every reference resolves
        return found

    for iface in openapi.interfaces():
        entry = document["paths"][iface.path]
        assert set(entry) == set(iface.methods)
        for operation in entry.values():
            arguments = resolve(operation["parameters"][0])
            assert arguments["name"] == "arguments"
            choices = [resolve(choice) for choice in arguments["schema"]["oneOf"]]
            assert len(choices) == len(iface.registry)
            names = [resolve(p)["name"] for p in operation["parameters"][1:]]
            assert names[: len(iface.credentials)] == [p.name for p in iface.credentials]
            for response in operation["responses"].values():
                assert resolve(response)["description"]
        for op in iface.registry:
            schema = components["schemas"][f"{iface.name}.{op.type}.arguments"]
            assert schema["x-statuses"] == sorted(op.statuses)
            assert [p.name for p in op.params] == list(schema["properties"])[1:]
            assert schema["properties"]["type"]["enum"] == [op.type, *op.aliases]
            statuses = {int(s) for s in entry["post"]["responses"]}
            assert set(op.statuses) <= statuses


def test_operation_docs_give_error_codes_the_statuses_the_catalogue_gives_them() -> None:
    """Where an operation's description names an error code with a status ("`key_used` (403)",
    "404 `file_not_found`"), the code is catalogued and this operation answers it so."""
    entries: dict[str, list[ErrorCode]] = {}
    for entry in errorcodes.catalogue():
        entries.setdefault(entry.code, []).append(entry)
    code_then_status = re.compile(r"`([a-z][a-z0-9_]*)` \((\d{3})\)")
    status_then_code = re.compile(r"(\d{3}) (?:with )?`([a-z][a-z0-9_]*)`")
    mentions = 0
    for iface in openapi.interfaces():
        for op in iface.registry:
            text = " ".join(op.doc.split())
            pairs = [(m[1], int(m[2])) for m in code_then_status.finditer(text)]
            pairs += [(m[2], int(m[1])) for m in status_then_code.finditer(text)]
            for code, status in pairs:
                mentions += 1
                assert code in entries, f"{iface.name} {op.type}: `{code}` is not in the error catalogue"
                answered = {op.status_for(entry) for entry in entries[code]}
                assert status in answered, (
                    f"{iface.name} {op.type}: `{code}` is answered {answered}, not {status}"
                )
    assert mentions > 40  # the patterns still find what the descriptions say
