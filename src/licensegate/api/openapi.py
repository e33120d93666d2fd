"""The API reference, derived from the operation declarations: an OpenAPI 3.1 document (served at
`/openapi.json`) and the Markdown pages in `docs/api/`.

Both interfaces select the operation with the `type` query parameter on one path. OpenAPI keys
operations by path and method only (a path key cannot hold a query string), so each interface is
one path whose query parameters are one exploded object: `oneOf` the operations' `arguments`
schemas, discriminated by `type`; each schema carries its operation's summary, description,
group and statuses. The success body is `anyOf` the operations' `answer` schemas.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import orjson

from licensegate import __version__
from licensegate.api.request import TRANSPORT_STATUSES
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
    414: "The query string is over `LICENSEGATE_MAX_QUERY_BYTES` (`uri_too_long`; send the parameters "
    "in a POST form body), in every dialect. A request target over 65,534 bytes is answered by the "
    "HTTP layer itself: an empty 414, without a signature.",
    431: "The headers are over `LICENSEGATE_MAX_HEADER_BYTES` (`headers_too_large`), in every dialect. "
    "Headers over about 400 KiB, or more than 100 header fields, are answered by the HTTP layer "
    "itself: an empty 431, without a signature.",
    429: "Rate limited; `Retry-After` says when to try again.",
    500: "Unexpected fault; the body carries a `request_id` that is in the service's log.",
    503: "The service cannot reach its database now (`service_unavailable`); `Retry-After` says when to "
    "try again.",
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
    preamble: tuple[str, ...] = ()  # Markdown lines after the introduction


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
            preamble=_dialects(),
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


def _dialects() -> tuple[str, ...]:
    """The client API's dialects and what differs between them (from `api.envelope`)."""
    from licensegate.api.envelope import DIALECTS, DIFFERENCES

    paths = ", ".join(f"`{d.paths[0]}`" for d in DIALECTS.values())
    lines = [
        "## Dialects and signatures",
        "",
        f"The same operations answer at {paths}. `/api/1.0/` is the interface document's dialect "
        "(described below); `/api/1.1/`, `/api/1.2/` and `/api/1.3/` speak KeyAuth's, which its "
        "client libraries need (see docs/clients.md). What differs:",
        "",
        "| | `/api/1.0/` | `/api/1.1/` – `/api/1.3/` |",
        "|---|---|---|",
        *(f"| {subject} | {plain} | {keyauth} |" for subject, plain, keyauth in DIFFERENCES),
        "",
        "Every answer on every client path (failures, unknown applications, rate limits, faults, and "
        "404/405 under `/api/`) carries `x-signature-timestamp` (Unix seconds when sent) and "
        "`x-signature-ed25519` (lowercase hex Ed25519 signature of the timestamp's bytes followed by "
        "the body's), made with the application's key (`public_key` from `create-app` or seller "
        "`getappkeys`), or with the deployment's own key (`licensegate public-key`) when the request "
        "names no known application; `Cache-Control: no-store`. A request may carry `clientnonce` "
        "(at most 64 characters): the answer echoes it in its signed body, so an answer recorded "
        "for one request does not verify for another. On `/api/1.2/` the header `signature` is the "
        "hex HMAC-SHA256 of the body, keyed with the application's secret for `init` and with "
        "`<enckey>-<secret>` afterwards (`enckey` as sent at `init`).",
        "",
    ]
    return tuple(lines)


def param_schema(param: Param) -> dict[str, Any]:
    schema: dict[str, Any]
    if param.kind == "int":
        schema = {"type": "integer", "description": "ASCII digits with an optional sign"}
    elif param.kind == "float":
        schema = {
            "type": "number",
            "description": "ASCII digits with an optional sign and `.fraction`; no exponent",
        }
    elif param.kind == "bool":
        schema = {"type": "string", "enum": ["1", "0", "true", "false", "yes", "no", "on", "off"]}
    else:
        schema = {"type": "string", "maxLength": param.max_length}
        if param.required:
            schema["minLength"] = 1  # an empty value counts as absent
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
    description = _param_doc(param)
    if description:
        entry["description"] = description
    return entry


def _param_doc(param: Param) -> str:
    description = param.doc
    if param.aliases:
        description += f" (also accepted as: {', '.join(param.aliases)})"
    return description.strip()


def _body_limit(max_bytes: int) -> str:
    return (
        f"Its form body may be up to {max_bytes:,} bytes (or `LICENSEGATE_MAX_BODY_BYTES` if larger): "
        "its longest parameter does not fit the query string, nor the default body limit once escaped."
    )


def _name(iface: Interface, op: Operation[Any], part: str) -> str:
    return f"{iface.name}.{op.type}.{part}"


def _description(iface: Interface, op: Operation[Any]) -> str:
    description = op.doc
    if op.aliases:
        description += f"\n\nAlso answers to type: {', '.join(op.aliases)}."
    if op.area:
        description += f"\n\nPermission area: `{op.area}`."
    if op.max_body_bytes:
        description += f"\n\n{_body_limit(op.max_body_bytes)}"
    if op.text is not None:
        description += "\n\nWith `format=text` the answer is `text/plain`: one entry per line."
    description += f"\n\nStatuses: {', '.join(str(s) for s in sorted(op.statuses))}."
    return description.strip()


def _arguments(iface: Interface, op: Operation[Any]) -> dict[str, Any]:
    """The query parameters of one operation, as one object schema; `type` tells them apart."""
    properties: dict[str, Any] = {
        "type": {"type": "string", "enum": [op.type, *op.aliases], "description": "selects the operation"}
    }
    for param in op.params:
        schema = param_schema(param)
        description = _param_doc(param)
        if description:
            schema["description"] = description
        properties[param.name] = schema
    return {
        "type": "object",
        "title": f"{op.summary} (type={op.type})",
        "description": _description(iface, op),
        "properties": properties,
        "required": ["type", *(p.name for p in op.params if p.required)],
        "x-group": op.group,
        "x-statuses": sorted(op.statuses),
        **({"x-permission-area": op.area} if op.area else {}),
    }


def _answer(iface: Interface, op: Operation[Any]) -> dict[str, Any]:
    """The success body of one operation."""
    properties: dict[str, Any] = {"success": {"type": "boolean", "const": True}}
    for name, text in op.returns.items():
        properties[name] = {"description": text}
    return {
        "type": "object",
        "title": f"{op.summary} (type={op.type})",
        "required": ["success"],
        "properties": properties,
    }


def _schemas(iface: Interface) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    for op in iface.registry:
        schemas[_name(iface, op, "arguments")] = _arguments(iface, op)
        schemas[_name(iface, op, "answer")] = _answer(iface, op)
    return schemas


def _path_operation(iface: Interface, method: str) -> dict[str, Any]:
    """One interface's single path: the operation is chosen by `type`, so its query parameters are
    one exploded object whose schema is one of the operations' (a discriminator on `type`), and
    its success body is any of their answers."""
    ops = list(iface.registry)
    arguments = [{"$ref": f"#/components/schemas/{_name(iface, op, 'arguments')}"} for op in ops]
    mapping = {
        value: f"#/components/schemas/{_name(iface, op, 'arguments')}"
        for op in ops
        for value in (op.type, *op.aliases)
    }
    parameters: list[dict[str, Any]] = [
        {
            "name": "arguments",
            "in": "query",
            "required": True,
            "style": "form",
            "explode": True,
            "description": "`type` and the parameters of the operation it selects (each its own query "
            "parameter); the schema of each operation carries its description and statuses.",
            "schema": {
                "type": "object",
                "oneOf": arguments,
                "discriminator": {"propertyName": "type", "mapping": mapping},
            },
        },
        *({"$ref": f"#/components/parameters/{iface.name}_{p.name}"} for p in iface.credentials),
    ]
    success: dict[str, Any] = {
        "application/json": {
            "schema": {
                "anyOf": [{"$ref": f"#/components/schemas/{_name(iface, op, 'answer')}"} for op in ops]
            }
        }
    }
    texts = [op.type for op in ops if op.text is not None]
    success_text = STATUS_TEXT[200]
    if texts:
        parameters.append(
            {
                "name": "format",
                "in": "query",
                "required": False,
                "description": "`text` asks " + ", ".join(f"`{t}`" for t in texts) + " for a `text/plain` "
                "answer (one entry per line); other operations answer JSON whatever it says.",
                "schema": {"type": "string", "enum": ["json", "text"]},
            }
        )
        success["text/plain"] = {"schema": {"type": "string"}}
        success_text += " With `format=text`, " + ", ".join(f"`{t}`" for t in texts) + " answer text/plain."
    # 414 and 431 refuse a request before its operation is known: every path may answer them.
    statuses = sorted({status for op in ops for status in op.statuses} | set(TRANSPORT_STATUSES.values()))
    responses: dict[str, Any] = {}
    for status in statuses:
        if status == 200:
            responses["200"] = {"description": success_text, "content": success}
        else:
            responses[str(status)] = {"$ref": f"#/components/responses/{iface.name}{status}"}
    return {
        "operationId": f"{iface.name}_{method}",
        "summary": f"{iface.name.capitalize()} API: the operation `type` selects",
        "description": f"Every {iface.name} operation, selected by `type`; see the `arguments` "
        "schemas (one per operation) for each one's parameters, description and statuses.",
        "tags": [iface.name],
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


def _build() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    ifaces = interfaces()
    shared_responses, shared_parameters = _shared(ifaces)
    schemas: dict[str, Any] = {}
    for iface in ifaces:
        paths[iface.path] = {method: _path_operation(iface, method) for method in iface.methods}
        schemas.update(_schemas(iface))
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "licensegate",
            "version": __version__,
            "description": "Client API (`/api/1.0/`) and seller API (`/api/seller/`). Each interface is "
            "one path; the `type` query parameter selects the operation, so each path has one "
            "operation per method whose query parameters are one of the operations' `arguments` "
            "schemas (discriminated by `type`). Every seller operation answers GET and POST alike.",
        },
        "tags": [{"name": iface.name, "description": f"the {iface.name} API"} for iface in ifaces],
        "paths": paths,
        "components": {
            "responses": shared_responses,
            "parameters": shared_parameters,
            "schemas": {
                **schemas,
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
                        "param": {"type": "string", "description": "the parameter at fault, when one is"},
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
                        "param": {"type": "string", "description": "the parameter at fault, when one is"},
                    },
                },
            },
        },
    }


@functools.cache
def document() -> dict[str, Any]:
    """The OpenAPI document, built once per process (the registries are complete at import).
    Treat it as read-only."""
    return _build()


@functools.cache
def document_json() -> bytes:
    """The document as served at `/openapi.json`: encoded once, the same bytes for every request."""
    return orjson.dumps(document())


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
        *iface.preamble,
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
            if op.max_body_bytes:
                lines += [_body_limit(op.max_body_bytes), ""]
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
