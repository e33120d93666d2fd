"""What every call of both interfaces shares.

An operation is declared once (its `type`, parameters, handler and the statuses it may answer);
dispatch, validation and the API reference all come from that declaration. This module also
reads parameters (query string, then a form body; the query string wins), enforces size limits,
renders the JSON envelope and is the one place a domain refusal becomes an HTTP status.
"""

from __future__ import annotations

import inspect
import logging
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import unquote_plus

import orjson
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import Request
from starlette.responses import Response

from licensegate import ids
from licensegate.domain.errors import Invalid, RateLimited, Refusal

log = logging.getLogger("licensegate.api")

ParamKind = Literal["str", "int", "float", "bool"]

STATUS_OF_KIND = {
    "invalid": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "rate_limited": 429,
}
ALL_STATUSES = frozenset({200, 400, 401, 403, 404, 409, 429, 500})

_INT = re.compile(r"[+-]?\d{1,18}")
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
MAX_FIELDS = 200


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    kind: ParamKind = "str"
    required: bool = False
    max_length: int = 256
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    aliases: tuple[str, ...] = ()  # other names existing clients send for it
    strip: bool = True  # trim surrounding white space (never for passwords or free text)
    secret: bool = False  # kept out of logs
    choices: tuple[str, ...] = ()

    def parse(self, raw: str) -> Any:
        if len(raw) > self.max_length:
            raise Invalid(
                f"Parameter '{self.name}' is too long (at most {self.max_length} characters).",
                "parameter_too_long",
            )
        if self.kind == "str":
            if self.choices and raw not in self.choices:
                raise Invalid(
                    f"Parameter '{self.name}' must be one of: {', '.join(self.choices)}.",
                    "invalid_parameter",
                )
            return raw
        if self.kind == "bool":
            lowered = raw.lower()
            if lowered in _TRUE:
                return True
            if lowered in _FALSE:
                return False
            raise Invalid(f"Parameter '{self.name}' must be 1 or 0.", "invalid_boolean")
        value: float
        if self.kind == "int":
            if not _INT.fullmatch(raw):
                raise Invalid(f"Parameter '{self.name}' must be a whole number.", "invalid_number")
            value = int(raw)
        else:
            try:
                value = float(raw)
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                raise Invalid(f"Parameter '{self.name}' must be a number.", "invalid_number")
        if self.minimum is not None and value < self.minimum:
            raise Invalid(
                f"Parameter '{self.name}' must be at least {_num(self.minimum)}.",
                "number_out_of_range",
            )
        if self.maximum is not None and value > self.maximum:
            raise Invalid(
                f"Parameter '{self.name}' must be at most {_num(self.maximum)}.",
                "number_out_of_range",
            )
        return value


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class Args:
    """Validated parameters of one call; absent optional ones are None."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any]) -> None:
        self._values = values

    def __contains__(self, name: str) -> bool:
        return self._values.get(name) is not None

    def text(self, name: str) -> str:
        value = self._values[name]
        assert isinstance(value, str)
        return value

    def opt_text(self, name: str) -> str | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, str)
        return value

    def integer(self, name: str) -> int:
        value = self._values[name]
        assert isinstance(value, int)
        return value

    def opt_integer(self, name: str) -> int | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, int)
        return value

    def number(self, name: str) -> float:
        value = self._values[name]
        assert isinstance(value, float)
        return value

    def opt_number(self, name: str) -> float | None:
        value = self._values.get(name)
        assert value is None or isinstance(value, float)
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self._values.get(name)
        return default if value is None else bool(value)

    def opt_flag(self, name: str) -> bool | None:
        value = self._values.get(name)
        return None if value is None else bool(value)

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)


CallT = TypeVar("CallT")
Handler = Callable[[CallT], Awaitable[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Operation(Generic[CallT]):
    type: str
    group: str
    summary: str
    handler: Handler[CallT]
    params: tuple[Param, ...] = ()
    statuses: frozenset[int] = ALL_STATUSES
    aliases: tuple[str, ...] = ()
    area: str = ""  # the permission area a seller key or manager needs
    mutates: bool = False
    doc: str = ""
    # Fields of the success body beyond success/message, for the reference: name -> description.
    returns: Mapping[str, str] = field(default_factory=dict)
    # Renders the success body as plain text when the caller asks for format=text.
    text: Callable[[dict[str, Any]], str] | None = None
    max_body_bytes: int | None = None  # a larger body limit
    uploads: tuple[str, ...] = ()  # names of the multipart file fields this operation accepts
    # Client API: what the call must present ("app": ownerid + name; "session": a live session;
    # "validated": a logged-in session), and the integer `code` of its success.
    requires: str = "app"
    success_code: int = 68
    # Client API: run the whole call on one database connection (not for operations that await
    # password hashing: they would hold a pooled connection while waiting for a hashing thread).
    pinned: bool = True

    def parse_args(self, raw: Mapping[str, str]) -> Args:
        values: dict[str, Any] = {}
        for param in self.params:
            value = raw.get(param.name)
            if value is None:
                for alias in param.aliases:
                    value = raw.get(alias)
                    if value is not None:
                        break
            if value is not None and param.strip:
                value = value.strip()
            if value is None or value == "":
                if param.required:
                    raise Invalid(f"Parameter '{param.name}' is required.", "missing_parameter")
                values[param.name] = None
                continue
            values[param.name] = param.parse(value)
        return Args(values)

    def status_for(self, refusal: Refusal) -> int:
        """The status for a refusal, within the statuses this operation is declared to answer.

        Where the natural status is not declared (the interface document lists no 429 for
        License Login, say), the call is refused with 403 and keeps its `error` code.
        """
        status = STATUS_OF_KIND.get(refusal.kind, 400)
        if status in self.statuses:
            return status
        return 403

    def fault_status(self) -> int:
        """The status of an unexpected fault: 500, unless the operation may not answer it (the
        interface document lists no 500 for Webhook); then 403, still with `internal_error`."""
        return 500 if 500 in self.statuses else 403


class Registry(Generic[CallT]):
    """The operations of one interface, by `type` value (aliases included)."""

    def __init__(self, interface: str) -> None:
        self.interface = interface
        self._by_type: dict[str, Operation[CallT]] = {}
        self._ordered: list[Operation[CallT]] = []

    def add(self, op: Operation[CallT]) -> Operation[CallT]:
        if not {400, 403} <= op.statuses or 200 not in op.statuses:
            raise ValueError(f"{op.type}: every operation may answer 200, 400 and 403")
        for name in (op.type, *op.aliases):
            if name in self._by_type:
                raise ValueError(f"{self.interface}: type {name!r} declared twice")
            self._by_type[name] = op
        self._ordered.append(op)
        return op

    def operation(
        self,
        type: str,
        *,
        group: str,
        summary: str,
        params: Iterable[Param] = (),
        **options: Any,
    ) -> Callable[[Handler[CallT]], Handler[CallT]]:
        def register(handler: Handler[CallT]) -> Handler[CallT]:
            self.add(
                Operation(
                    type=type,
                    group=group,
                    summary=summary,
                    handler=handler,
                    params=tuple(params),
                    doc=inspect.cleandoc(handler.__doc__ or ""),
                    **options,
                )
            )
            return handler

        return register

    def get(self, type_value: str) -> Operation[CallT] | None:
        return self._by_type.get(type_value)

    def lookup(self, raw: Mapping[str, str]) -> Operation[CallT]:
        type_value = raw.get("type")
        if type_value is None or type_value.strip() == "":
            raise Invalid("The 'type' parameter is required.", "missing_type")
        op = self._by_type.get(type_value.strip())
        if op is None:
            raise Invalid(f"Unknown type '{type_value[:64]}'.", "unknown_type")
        return op

    def __iter__(self) -> Any:
        return iter(self._ordered)

    def __len__(self) -> int:
        return len(self._ordered)


# --- reading a request ------------------------------------------------------------------------


def _unquote(text: str, what: str) -> str:
    if "%" not in text and "+" not in text:
        return text  # the common case: nothing to decode
    try:
        return unquote_plus(text, encoding="utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise Invalid(f"The {what} is not valid UTF-8.", "invalid_encoding") from exc


def _parse_pairs(data: str, what: str) -> dict[str, str]:
    """`a=1&b=2` into a dict: `+` and percent-escapes decoded as UTF-8, a name without `=` has an
    empty value, and the last occurrence of a name wins, as PHP-based clients expect. Written
    out because it is on every request and `urllib.parse.parse_qsl` costs several times more."""
    if not data:
        return {}
    parts = data.split("&")
    if len(parts) > MAX_FIELDS:
        raise Invalid(f"The {what} has too many parameters.", "too_many_parameters")
    values: dict[str, str] = {}
    for part in parts:
        if not part:
            continue
        name, _, value = part.partition("=")
        name = _unquote(name, what)
        value = _unquote(value, what)
        if "\x00" in value or "\x00" in name:
            raise Invalid(f"Parameter '{name[:64]}' contains a NUL character.", "invalid_character")
        values[name] = value
    return values


def read_query(request: Request, max_bytes: int) -> dict[str, str]:
    raw: bytes = request.scope.get("query_string", b"")
    if len(raw) > max_bytes:
        raise Invalid(f"The query string is too large (at most {max_bytes} bytes).", "request_too_large")
    if not raw:
        return {}
    try:
        text = raw.decode("utf-8")  # clients that do not escape their values send raw UTF-8
    except UnicodeDecodeError as exc:
        raise Invalid("The query string is not valid UTF-8.", "invalid_encoding") from exc
    return _parse_pairs(text, "query string")


async def read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise Invalid("The Content-Length header is not a number.", "invalid_request")
        if int(declared) > max_bytes:
            raise Invalid(f"The request body is too large (at most {max_bytes} bytes).", "request_too_large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise Invalid(f"The request body is too large (at most {max_bytes} bytes).", "request_too_large")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_form_body(request: Request, max_bytes: int) -> dict[str, str]:
    """Parameters from an application/x-www-form-urlencoded body. Other bodies are not read at
    all (multipart uploads are read by the operations that take them)."""
    if request.method != "POST" or content_type_of(request) != "application/x-www-form-urlencoded":
        return {}
    body = await read_body(request, max_bytes)
    if not body:
        return {}
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid("The request body is not valid UTF-8.", "invalid_encoding") from exc
    return _parse_pairs(text, "request body")


def content_type_of(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


async def read_multipart(
    request: Request, max_bytes: int, file_fields: tuple[str, ...]
) -> tuple[dict[str, str], dict[str, UploadFile], FormData]:
    """Text fields and the accepted file fields of a multipart/form-data body.

    The body must declare its length (so an upload over the limit is refused before it is read);
    files are spooled to disk by the parser past 1 MiB. The caller closes the returned form."""
    declared = request.headers.get("content-length")
    if declared is None or not declared.isdigit():
        raise Invalid("A multipart request must declare its Content-Length.", "length_required")
    if int(declared) > max_bytes:
        raise Invalid(f"The request body is too large (at most {max_bytes} bytes).", "request_too_large")
    try:
        form = await request.form(max_files=len(file_fields), max_fields=MAX_FIELDS, max_part_size=64 * 1024)
    except (MultiPartException, HTTPException) as exc:
        raise Invalid(
            f"The multipart body cannot be read: {getattr(exc, 'message', exc)}", "invalid_multipart"
        ) from exc
    fields: dict[str, str] = {}
    files: dict[str, UploadFile] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):
            if "\x00" in value:
                raise Invalid(f"Parameter '{name[:64]}' contains a NUL character.", "invalid_character")
            fields[name] = value
        elif name in file_fields:
            files[name] = value
        else:
            await form.close()
            raise Invalid(f"Unexpected file field '{name[:64]}'.", "invalid_multipart")
    return fields, files, form


def merge(query: dict[str, str], body: dict[str, str]) -> dict[str, str]:
    if not body:
        return query
    merged = dict(body)
    merged.update(query)  # the query string wins on conflict
    return merged


# --- writing a response -----------------------------------------------------------------------


def json_response(
    body: Mapping[str, Any], status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        orjson.dumps(body),
        status_code=status,
        media_type="application/json",
        headers=dict(headers) if headers else None,
    )


def failure_body(message: str, error: str) -> dict[str, Any]:
    return {"success": False, "message": message, "error": error}


def refusal_headers(refusal: Refusal) -> dict[str, str] | None:
    if isinstance(refusal, RateLimited):
        return {"Retry-After": str(refusal.retry_after)}
    return None


def unexpected_fault(where: str) -> tuple[dict[str, Any], str]:
    """Log the exception in flight with a request id; return the body that carries that id."""
    request_id = ids.request_id()
    log.exception("unexpected fault in %s (request %s)", where, request_id)
    body = failure_body(
        f"An unexpected error occurred; it has been logged with request id {request_id}.",
        "internal_error",
    )
    body["request_id"] = request_id
    return body, request_id


# --- paging, shared by every list operation -----------------------------------------------------

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
PAGE = Param("page", "int", minimum=1, maximum=1_000_000, max_length=8, doc="page number, from 1 (default 1)")
LIMIT = Param(
    "limit",
    "int",
    minimum=1,
    maximum=MAX_PAGE_SIZE,
    max_length=5,
    doc=f"items per page (default {DEFAULT_PAGE_SIZE}, at most {MAX_PAGE_SIZE})",
)


def paging(args: Args) -> tuple[int, int]:
    """(limit, offset) from the optional `page` and `limit` parameters."""
    limit = args.opt_integer("limit") or DEFAULT_PAGE_SIZE
    page = args.opt_integer("page") or 1
    return limit, (page - 1) * limit


# --- the client API's envelope ----------------------------------------------------------------

# Client responses always carry an integer `code` (KeyAuth's C++ SDK reads it before anything
# else): 68 on success (69 for Webhook, as the interface document shows), and on failure a code
# per kind of refusal, so a program can branch without parsing `error`.
CLIENT_SUCCESS_CODE = 68
CLIENT_WEBHOOK_SUCCESS_CODE = 69
CLIENT_FAILURE_CODES = {
    "invalid": 40,
    "unauthorized": 41,
    "forbidden": 43,
    "not_found": 44,
    "conflict": 49,
    "rate_limited": 42,
    "internal_error": 50,
}


def client_success(
    ownerid: str, message: str, fields: Mapping[str, Any] | None = None, code: int = 68
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
