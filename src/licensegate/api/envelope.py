"""How both interfaces answer: the JSON envelope, and the client API's `code`, `nonce` and
`ownerid` on every answer.

A version of the client API (a dialect, `ClientDialect`) decides where parameters come from, the
status of a refusal or fault, the success `code`, a few field formats and how a body becomes
bytes: the client endpoint asks it for each. `CLIENT_1_0` is the interface document's `/api/1.0/`;
`CLIENT_1_1` to `CLIENT_1_3` are KeyAuth's.
"""

from __future__ import annotations

import calendar
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
from starlette.responses import PlainTextResponse, Response

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain.errors import RateLimited, Refusal, Unavailable
from licensegate.operations.declarations import CLIENT_SUCCESS_CODE, Operation, status_of
from licensegate.store.database import DatabaseUnavailable

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
    if refusal.retry_after is not None:
        return {"Retry-After": str(refusal.retry_after)}
    if errorcodes.INCOMPLETE_BODY.refuses(refusal):
        # The rest of the body was never read: without this the server would keep the
        # connection open for as long as the client keeps (or keeps not) sending it.
        return {"Connection": "close"}
    return None


OUTAGE_LOG_INTERVAL = 60.0  # seconds between two log lines about one outage


class _OutageLog:
    """Says that the database is unavailable once a minute at most, not once per request."""

    def __init__(self) -> None:
        self._last = -OUTAGE_LOG_INTERVAL
        self._since_last = 0

    def note(self, exc: DatabaseUnavailable) -> None:
        now = time.monotonic()
        self._since_last += 1
        if now - self._last >= OUTAGE_LOG_INTERVAL:
            log.warning("%s; answering 503 (%d request(s) since the last such line)", exc, self._since_last)
            self._last, self._since_last = now, 0


_outages = _OutageLog()


def refusal_of(caught: Refusal | DatabaseUnavailable) -> Refusal:
    """A refusal as it is, and a database outage as the refusal it is answered with: 503 where
    the operation declares it (else 500, or 403), with Retry-After."""
    if isinstance(caught, Refusal):
        return caught
    _outages.note(caught)
    entry = errorcodes.SERVICE_UNAVAILABLE
    return Unavailable(caught.retry_after, entry.message, entry.code)


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
    # `format` is case-insensitive: `text`, `Text`, `TEXT`; anything else (`JSON`, say) is JSON.
    if fmt is not None and fmt.strip().lower() == "text" and op.text is not None:
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
    "unavailable": 53,  # the database does not answer (503, or 500/403 where 503 is not declared)
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


# --- the client API's dialects ----------------------------------------------------------------
#
# One set of operations is spoken at several paths. `/api/1.0/` is the interface document's
# dialect; `/api/1.1/` to `/api/1.3/` speak KeyAuth's, which its client libraries depend on. A
# dialect is only this declaration: the client endpoint consults it for where parameters come
# from, which status a refusal gets, how a few fields are written and how the body is encoded
# (signing: `api.client.answers`). `DIFFERENCES` documents them (the API reference prints it).

KEYAUTH_SUCCESS_CODE = 68
NOT_BLACKLISTED = "Client is not blacklisted"
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@dataclass(frozen=True, slots=True)
class ClientDialect:
    version: str
    keyauth: bool  # KeyAuth's conventions (see DIFFERENCES) instead of the interface document's
    methods: frozenset[str]
    hmac: bool = False  # API 1.2: the `signature` header (HMAC-SHA256 of the body)
    legacy: bool = False  # recognises KeyAuth 1.0's hex-encoded, AES-encrypted requests

    @property
    def paths(self) -> tuple[str, str]:
        return f"/api/{self.version}/", f"/api/{self.version}"

    def merge(self, query: dict[str, str], form: dict[str, str]) -> dict[str, str]:
        """The call's parameters: the interface document's query string wins over the body;
        KeyAuth reads each parameter from the POST body, falling back to the query string."""
        if not form:
            raw = query
        elif self.keyauth:
            raw = {**query, **form}
        else:
            raw = {**form, **query}
        if self.keyauth and raw.get("type") == "var" and "varid" not in raw and "var" in raw:
            raw = {**raw, "varid": raw["var"]}  # a published library names it `var`
        return raw

    def refusal_status(self, op: Operation[Any] | None, refusal: Refusal) -> int:
        """The interface document's dialect answers the status the operation declares for the
        refusal. KeyAuth's libraries treat any status but 2xx as a dead connection (C#) or ignore
        it, so its dialect answers every business failure with 200; rate limiting stays 429 (with
        Retry-After), which they understand, and a database outage 503 (a dead connection it is)."""
        if self.keyauth and not isinstance(refusal, (RateLimited, Unavailable)):
            return 200
        return status_of(op, refusal)

    def fault_status(self, op: Operation[Any] | None) -> int:
        """An internal fault: 500 (or 403 where the interface document lists no 500 for the
        operation; KeyAuth's dialect always 500)."""
        if self.keyauth or op is None:
            return 500
        return op.fault_status()

    def success_code(self, op: Operation[Any]) -> int:
        """KeyAuth's C++ library accepts `success: true` only with code 68 (Webhook included)."""
        return KEYAUTH_SUCCESS_CODE if self.keyauth else op.success_code

    def shape(self, op_type: str, body: dict[str, Any]) -> dict[str, Any]:
        """KeyAuth's field formats on a success body (the interface document's are the default)."""
        if not self.keyauth:
            return body
        info = body.get("info")
        if isinstance(info, dict) and isinstance(info.get("createdate"), str):
            info["createdate"] = unix_seconds(info["createdate"])
        if op_type == "checkblacklist" and body.get("blacklisted") is False:
            # KeyAuth's meaning, which every library reads: success says "blacklisted".
            body["success"] = False
            body["message"] = NOT_BLACKLISTED
        return body

    def encode(self, raw_json: bytes) -> bytes:
        """KeyAuth's bodies are pure ASCII (PHP's json_encode): its C# library checks the signature
        over the body re-encoded in the machine's ANSI code page, so any other byte breaks it."""
        if not self.keyauth or raw_json.isascii():
            return raw_json
        return _NON_ASCII.sub(_escape, raw_json.decode("utf-8")).encode("ascii")


def _escape(match: re.Match[str]) -> str:
    point = ord(match.group())
    if point < 0x10000:
        return f"\\u{point:04x}"
    point -= 0x10000
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"


@lru_cache(maxsize=8192)  # a user's `createdate`, at every login on KeyAuth's dialects
def unix_seconds(text: str) -> str:
    """`YYYY-MM-DD HH:MM:SS` (UTC) as Unix seconds in decimal; anything else is left as it is."""
    if len(text) != 19 or text[4] != "-" or text[10] != " ":
        return text
    try:
        parts = (
            int(text[0:4]),
            int(text[5:7]),
            int(text[8:10]),
            int(text[11:13]),
            int(text[14:16]),
            int(text[17:19]),
        )
    except ValueError:
        return text
    return str(calendar.timegm((*parts, 0, 0, 0)))


CLIENT_1_0 = ClientDialect("1.0", keyauth=False, methods=frozenset({"POST"}), legacy=True)
# A KeyAuth 1.0 library's request on /api/1.0/ (hex + AES) is answered with KeyAuth's conventions
# (statuses, `createdate` in Unix seconds, `checkblacklist`'s meaning): those libraries read them.
LEGACY_1_0 = ClientDialect("1.0", keyauth=True, methods=frozenset({"POST"}), legacy=True)
CLIENT_1_1 = ClientDialect("1.1", keyauth=True, methods=frozenset({"GET", "POST"}))
CLIENT_1_2 = ClientDialect("1.2", keyauth=True, methods=frozenset({"GET", "POST"}), hmac=True)
CLIENT_1_3 = ClientDialect("1.3", keyauth=True, methods=frozenset({"GET", "POST"}))
DIALECTS: Mapping[str, ClientDialect] = {
    d.version: d for d in (CLIENT_1_0, CLIENT_1_1, CLIENT_1_2, CLIENT_1_3)
}

# What each dialect does differently, for the API reference: (subject, 1.0, 1.1–1.3).
DIFFERENCES: tuple[tuple[str, str, str], ...] = (
    ("methods", "POST", "GET and POST"),
    (
        "parameters",
        "query string; a form body is read too, the query string wins",
        "each parameter from the form body, falling back to the query string",
    ),
    (
        "HTTP status of a refusal",
        "per operation (400, 401, 403, 404, 409, 429 as declared)",
        "200 with `success: false`; rate limiting 429 with `Retry-After`; internal faults 500",
    ),
    ("`code` of a success", "68; Webhook 69", "68 for every operation"),
    ("`info.createdate`", "`YYYY-MM-DD HH:MM:SS` (UTC)", "Unix seconds as a decimal string"),
    (
        "`checkblacklist`",
        "`success: true` either way; `blacklisted` tells",
        "`success: true` only when blacklisted (KeyAuth's meaning); `blacklisted` kept",
    ),
    (
        "`fetchStats.appinfo.numOnlineUsers`",
        "validated, unexpired sessions",
        "the number of users `fetchOnline` lists (never more)",
    ),
    ("Global Variable", "`varid`", "`varid`, or `var` as its alias"),
    ("body encoding", "UTF-8 JSON", "ASCII-only JSON: other characters escaped as `\\uXXXX`"),
    (
        "signatures",
        "Ed25519 headers on every answer; a KeyAuth 1.0 library's hex/AES requests answered "
        "encrypted, with the 1.1–1.3 column's conventions (`KeyAuth_Invalid` for an unknown "
        "application)",
        "Ed25519 headers on every answer; 1.2 also the HMAC `signature` header",
    ),
)
