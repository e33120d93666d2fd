"""Every declared parameter fits the transport it can arrive by, generated from the declarations so
the two cannot drift: at its maximum length, each character percent-escaped (3 bytes, what a
library that escapes everything sends for ASCII), with its name, it fits its operation's body
limit (every parameter may come in a form body). The query-string limit sits under the longest URL
the HTTP layer hands the service, so an oversized query string is answered by the service."""

from __future__ import annotations

from typing import Any

import pytest

from licensegate.api.openapi import interfaces
from licensegate.api.request import HTTP_MAX_URI_BYTES
from licensegate.config import Settings
from licensegate.operations.declarations import Operation, Param, Registry

DEFAULTS = Settings()
ESCAPED = 3  # bytes of a percent-escaped ASCII character


def escaped_size(param: Param) -> int:
    return len(param.name) + 1 + ESCAPED * param.max_length


def declared() -> list[tuple[str, Operation[Any], Param]]:
    found = []
    for iface in interfaces():
        for op in iface.registry:
            for param in (*iface.credentials, *op.params):
                found.append((iface.name, op, param))
    return found


@pytest.mark.parametrize(
    ("iface", "op", "param"), declared(), ids=lambda v: getattr(v, "type", None) or getattr(v, "name", v)
)
def test_every_parameter_at_its_maximum_length_fits_its_operations_body(
    iface: str, op: Operation[Any], param: Param
) -> None:
    limit = op.body_limit(DEFAULTS.max_body_bytes)
    assert escaped_size(param) <= limit, (
        f"{iface} {op.type}: `{param.name}` (max_length {param.max_length}) needs {escaped_size(param)} "
        f"bytes escaped; the operation reads at most {limit} (declare max_body_bytes)"
    )


def test_only_operations_that_need_it_declare_a_larger_body() -> None:
    for iface in interfaces():
        for op in iface.registry:
            if op.max_body_bytes is not None:
                longest = max(escaped_size(param) for param in op.params)
                assert longest > DEFAULTS.max_body_bytes, f"{iface.name} {op.type} needs no larger body"


def test_the_query_limit_is_under_the_http_layers_cap() -> None:
    assert DEFAULTS.max_query_bytes + len("/api/seller/?") < HTTP_MAX_URI_BYTES


def test_the_registrys_body_limit_is_its_largest_operations_and_follows_a_new_one() -> None:
    """The registry works its body limit out once per default; an operation added later (every
    declaration is made at import, but nothing forbids one after) is still counted."""

    async def handler(_call: object) -> dict[str, Any]:
        return {}

    registry: Registry[object] = Registry("test")
    registry.add(Operation("small", "g", "s", handler))
    assert registry.body_limit(1000) == 1000
    assert registry.body_limit(1000) == 1000  # asked again: the same answer
    registry.add(Operation("large", "g", "s", handler, max_body_bytes=5000))
    assert registry.body_limit(1000) == 5000
    assert registry.body_limit(8000) == 8000
    for iface in interfaces():
        largest = max(op.body_limit(DEFAULTS.max_body_bytes) for op in iface.registry)
        assert iface.registry.body_limit(DEFAULTS.max_body_bytes) == largest
