"""How both interfaces answer: the JSON envelope, and the client API's `code`, `nonce` and
`ownerid` on every answer.

A version of the client API (a dialect) decides the status of a refusal or fault, the success
`code` and how a body becomes bytes: the client endpoint asks a `ClientDialect` for each. The
default, `CLIENT_1_0`, is the interface document's `/api/1.0/`; other versions subclass it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import orjson
from starlette.responses import PlainTextResponse, Response

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.operations.declarations import CLIENT_SUCCESS_CODE, Operation, status_of

log = logging.getLogger("licensegate.api")


def json_response(
    body: Mapping[str, Any], status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        orjson.dumps(body),
        status_code=status,
        media_type="application/json",
        headers=dict(headers) if headers else None,
    )


def failure_body(message: str, error: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`success`, `message`, `error`, then what the refusal adds (`param`: the parameter at fault)."""
    body: dict[str, Any] = {"success": False, "message": message, "error": error}
    if extra:
        body.update(extra)
    return body


def refusal_headers(refusal: Refusal) -> dict[str, str] | None:
    if isinstance(refusal, RateLimited):
        return {"Retry-After": str(refusal.retry_after)}
    return None


def unexpected_fault(where: str) -> tuple[dict[str, Any], str]:
    """Log the exception in flight with a request id; return the body that carries that id."""
    request_id = ids.request_id()
    log.exception("unexpected fault in %s (request %s)", where, request_id)
    fault = errorcodes.INTERNAL_ERROR
    body = failure_body(fault.message.format(request_id=request_id), fault.code)
    body["request_id"] = request_id
    return body, request_id


def seller_success(op: Operation[Any], body: dict[str, Any], fmt: str | None) -> Response:
    """A seller API success: `success` first, then the handler's fields (or the operation's plain
    text rendering when the caller asks for `format=text`)."""
    if fmt == "text" and op.text is not None:
        return PlainTextResponse(op.text(body))
    envelope: dict[str, Any] = {"success": True}
    envelope.update(body)
    return json_response(envelope)


# --- the client API's envelope ----------------------------------------------------------------

# Client responses always carry an integer `code` (KeyAuth's C++ SDK reads it before anything
# else): the operation's success code on success (see `declarations.CLIENT_SUCCESS_CODE`), and on
# failure a code per kind of refusal, so a program can branch without parsing `error`.
CLIENT_FAILURE_CODES = {
    "invalid": 40,
    "unauthorized": 41,
    "forbidden": 43,
    "not_found": 44,
    "conflict": 49,
    "rate_limited": 42,
    "internal": 50,  # an unexpected fault
}


def client_success(
    ownerid: str, message: str, fields: Mapping[str, Any] | None = None, code: int = CLIENT_SUCCESS_CODE
) -> dict[str, Any]:
    """A client API success: `success`, `code`, `message`, the operation's fields, then a fresh
    `nonce` (32 lowercase hex from the CSPRNG) and the caller's `ownerid`."""
    body: dict[str, Any] = {"success": True, "code": code, "message": message}
    if fields:
        body.update(fields)
    body["nonce"] = ids.nonce()
    body["ownerid"] = ownerid
    return body


def client_failure(
    ownerid: str, message: str, error: str, kind: str, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A client API failure: the seller API's failure body plus `code`, `nonce` and `ownerid`."""
    body: dict[str, Any] = {
        "success": False,
        "code": CLIENT_FAILURE_CODES.get(kind, CLIENT_FAILURE_CODES["invalid"]),
        "message": message,
        "error": error,
    }
    if extra:
        body.update(extra)
    body["nonce"] = ids.nonce()
    body["ownerid"] = ownerid
    return body


class ClientDialect:
    """What one version of the client API decides about its answers. This base is `/api/1.0/`,
    the interface document's: a refusal answers the status its operation declares for it, a fault
    500 (or 403 where the operation may not answer 500), a success the operation's `code`, and the
    body is compact JSON."""

    name = "1.0"

    def refusal_status(self, op: Operation[Any] | None, refusal: Refusal) -> int:
        return status_of(op, refusal)

    def fault_status(self, op: Operation[Any] | None) -> int:
        return op.fault_status() if op is not None else 500

    def success_code(self, op: Operation[Any]) -> int:
        return op.success_code

    def response(
        self, body: Mapping[str, Any], status: int = 200, headers: Mapping[str, str] | None = None
    ) -> Response:
        return json_response(body, status, headers)


CLIENT_1_0 = ClientDialect()
