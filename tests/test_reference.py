"""The committed API reference matches the operation declarations it is generated from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from licensegate.api import openapi

DOCS = Path(__file__).resolve().parent.parent / "docs"
HOW = "run `.venv/bin/licensegate reference` to regenerate it"


def test_markdown_reference_is_current() -> None:
    for iface in openapi.interfaces():
        page = DOCS / "api" / f"{iface.name}.md"
        assert page.exists(), HOW
        assert page.read_text() == openapi.markdown(iface), f"{page} is stale: {HOW}"


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
        for op in iface.registry:
            entry = document["paths"][f"{iface.path}?type={op.type}"]
            assert set(entry) == {"post"}
            post = entry["post"]
            assert {int(s) for s in post["responses"]} == set(op.statuses)
            for response in post["responses"].values():
                assert resolve(response)["description"]
            names = [resolve(p)["name"] for p in post["parameters"]]
            assert names[0] == "type"
            assert names[1 : 1 + len(iface.credentials)] == [p.name for p in iface.credentials]
            assert [p.name for p in op.params] == names[1 + len(iface.credentials) :]
