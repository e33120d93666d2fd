"""The API reference, derived from the operation declarations: an OpenAPI 3.1 document (served at
`/openapi.json`) and the Markdown pages in `docs/api/`.

Both interfaces select the operation with the `type` query parameter on one path, which OpenAPI
cannot key on; each operation is listed under `<path>?type=<value>` so every one has its own
entry, parameters and statuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate import __version__
from licensegate.operations.declarations import Operation, Param, Registry

# The order the interface document lists each interface's groups in; groups it does not name follow.
CLIENT_GROUPS = (
    "Initialization",
    "Authentication",
    "Sessions",
    "Licensing",
    "Users",
    "Files",
    "Chat",
    "Webhooks",
    "Security",
)
SELLER_GROUPS = (
    "Seller Key",
    "Users",
    "User Variable",
    "Session",
    "Log",
    "Subscription",
    "Global Variable",
    "Reseller & Manager",
    "License",
)

STATUS_TEXT = {
    200: "Success: `success` is true.",
    400: "Malformed request: missing or unknown `type`, a missing, over-long or badly formed parameter.",
    401: "The credential is missing or unknown.",
    403: "The credential is known but the action is refused.",
    404: "A named object does not exist.",
    409: "The action conflicts with existing state.",
    429: "Rate limited; `Retry-After` says when to try again.",
    500: "Unexpected fault; the body carries a `request_id` that is in the service's log.",
}


@dataclass(frozen=True)
class Interface:
    name: str
    path: str
    methods: tuple[str, ...]
    registry: Registry[Any]
    credentials: tuple[Param, ...]
    envelope: str
    group_order: tuple[str, ...]


def interfaces() -> list[Interface]:
    from licensegate.operations.client import registry as client_registry
    from licensegate.operations.seller import registry as seller_registry

    return [
        Interface(
            name="client",
            path="/api/1.0/",
            methods=("post",),
            registry=client_registry,
            credentials=(
                Param("ownerid", required=True, max_length=64, doc="the application owner's id"),
                Param("name", required=True, max_length=64, doc="the application's name"),
                Param("sessionid", max_length=128, doc="from init; every operation but init needs it"),
            ),
            envelope="`success`, `code` (68 on success; 69 for Webhook), `message`, the fields below, "
            "`nonce` (32 hex) and `ownerid`. Failures: "
            "`{success: false, code, message, error, nonce, ownerid}`.",
            group_order=CLIENT_GROUPS,
        ),
        Interface(
            name="seller",
            path="/api/seller/",
            methods=("post", "get"),
            registry=seller_registry,
            credentials=(
                Param("sellerkey", required=True, max_length=32, doc="the application's seller key"),
            ),
            envelope="`success` plus the fields below. Failures: `{success: false, message, error}`.",
            group_order=SELLER_GROUPS,
        ),
    ]


def param_schema(param: Param) -> dict[str, Any]:
    schema: dict[str, Any]
    if param.kind == "int":
        schema = {"type": "integer"}
    elif param.kind == "float":
        schema = {"type": "number"}
    elif param.kind == "bool":
        schema = {"type": "string", "enum": ["1", "0", "true", "false"]}
    else:
        schema = {"type": "string", "maxLength": param.max_length}
        if param.choices:
            schema["enum"] = list(param.choices)
    if param.minimum is not None:
        schema["minimum"] = param.minimum
    if param.maximum is not None:
        schema["maximum"] = param.maximum
    return schema


def _parameter(param: Param) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": param.name,
        "in": "query",
        "required": param.required,
        "schema": param_schema(param),
    }
    description = param.doc
    if param.aliases:
        description += f" (also accepted as: {', '.join(param.aliases)})"
    if description:
        entry["description"] = description.strip()
    return entry


def _operation(iface: Interface, op: Operation[Any]) -> dict[str, Any]:
    parameters = [
        {
            "name": "type",
            "in": "query",
            "required": True,
            "schema": {"type": "string", "const": op.type},
        },
        *({"$ref": f"#/components/parameters/{iface.name}_{p.name}"} for p in iface.credentials),
        *(_parameter(p) for p in op.params),
    ]
    description = op.doc
    if op.aliases:
        description += f"\n\nAlso answers to type: {', '.join(op.aliases)}."
    if op.area:
        description += f"\n\nPermission area: `{op.area}`."
    success_props: dict[str, Any] = {"success": {"type": "boolean", "const": True}}
    for name, text in op.returns.items():
        success_props[name] = {"description": text}
    responses: dict[str, Any] = {}
    for status in sorted(op.statuses):
        if status == 200:
            responses["200"] = {
                "description": STATUS_TEXT[200],
                "content": {"application/json": {"schema": {"type": "object", "properties": success_props}}},
            }
        else:
            responses[str(status)] = {"$ref": f"#/components/responses/{iface.name}{status}"}
    return {
        "operationId": f"{iface.name}_{op.type}",
        "summary": op.summary,
        "description": description.strip(),
        "tags": [f"{iface.name}: {op.group}"],
        "parameters": parameters,
        "responses": responses,
    }


def _shared(ifaces: list[Interface]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Failure responses and credential parameters, written once and referenced."""
    responses: dict[str, Any] = {}
    parameters: dict[str, Any] = {}
    for iface in ifaces:
        schema = "ClientFailure" if iface.name == "client" else "Failure"
        for status, text in STATUS_TEXT.items():
            if status != 200:
                responses[f"{iface.name}{status}"] = {
                    "description": text,
                    "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
                }
        for param in iface.credentials:
            parameters[f"{iface.name}_{param.name}"] = _parameter(param)
    return responses, parameters


def document() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    shared_responses, shared_parameters = _shared(interfaces())
    for iface in interfaces():
        for op in iface.registry:
            # The interface document defines POST; GET (the seller API's compatibility with tools
            # that use it) behaves the same and is stated in the description, not listed twice.
            paths[f"{iface.path}?type={op.type}"] = {"post": _operation(iface, op)}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "licensegate",
            "version": __version__,
            "description": "Client API (`/api/1.0/`) and seller API (`/api/seller/`). Every operation "
            "is selected by the `type` query parameter on its interface's single path. Every seller "
            "operation also answers GET with the same parameters and results.",
        },
        "paths": paths,
        "components": {
            "responses": shared_responses,
            "parameters": shared_parameters,
            "schemas": {
                "ClientFailure": {
                    "type": "object",
                    "required": ["success", "code", "message", "error", "nonce", "ownerid"],
                    "properties": {
                        "success": {"type": "boolean", "const": False},
                        "code": {"type": "integer", "description": "see docs/api/README.md"},
                        "message": {"type": "string", "description": "text a person understands"},
                        "error": {"type": "string", "description": "stable snake_case code"},
                        "nonce": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                        "ownerid": {"type": "string", "description": "the caller's ownerid"},
                        "request_id": {"type": "string", "description": "present on unexpected faults"},
                    },
                },
                "Failure": {
                    "type": "object",
                    "required": ["success", "message", "error"],
                    "properties": {
                        "success": {"type": "boolean", "const": False},
                        "message": {"type": "string", "description": "text a person understands"},
                        "error": {"type": "string", "description": "stable snake_case code"},
                        "request_id": {"type": "string", "description": "present on 500 answers"},
                    },
                },
            },
        },
    }


def markdown(iface: Interface) -> str:
    """One Markdown page per interface, grouped as the interface document groups operations."""
    lines = [
        f"# {iface.name.capitalize()} API reference",
        "",
        "Generated from the operation declarations by `licensegate reference`; do not edit by hand.",
        "",
        f"Every operation is `{' or '.join(m.upper() for m in iface.methods)} {iface.path}?type=<type>`; "
        "parameters go in the query string (a form body is read too; the query string wins).",
        f"Credentials: {', '.join(f'`{p.name}`' for p in iface.credentials)}. Responses: {iface.envelope}",
        "",
    ]
    groups: dict[str, list[Operation[Any]]] = {}
    for op in iface.registry:
        groups.setdefault(op.group, []).append(op)
    order = iface.group_order
    ordered = sorted(groups, key=lambda g: order.index(g) if g in order else len(order))
    lines += ["| group | operation | `type` |", "|---|---|---|"]
    for group in ordered:
        for op in groups[group]:
            aliases = "".join(f", `{a}`" for a in op.aliases)
            lines.append(f"| {group} | {op.summary} | `{op.type}`{aliases} |")
    lines.append("")
    for group in ordered:
        ops = groups[group]
        lines += [f"## {group}", ""]
        for op in ops:
            lines += [f"### {op.summary} — `type={op.type}`", ""]
            if op.doc:
                lines += [op.doc, ""]
            if op.aliases:
                lines += [f"Also answers to: {', '.join(f'`{a}`' for a in op.aliases)}.", ""]
            if op.area:
                lines += [f"Permission area: `{op.area}`.", ""]
            if op.params:
                lines += [
                    "| parameter | type | required | max length | meaning |",
                    "|---|---|---|---|---|",
                ]
                for p in op.params:
                    meaning = p.doc + (f" (also: {', '.join(p.aliases)})" if p.aliases else "")
                    required = "yes" if p.required else "no"
                    lines.append(f"| `{p.name}` | {p.kind} | {required} | {p.max_length} | {meaning} |")
                lines.append("")
            if op.returns:
                lines += ["Success fields:", ""]
                lines += [f"- `{name}`: {text}" for name, text in op.returns.items()]
                lines.append("")
            lines += [f"Statuses: {', '.join(str(s) for s in sorted(op.statuses))}.", ""]
    return "\n".join(lines).rstrip() + "\n"
