"""Reading the parameters of a call: the query string, then a form body (the query string wins on
conflict), or a multipart body with its uploads; every size and count limited, text decoded as
UTF-8 and NUL characters refused."""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import unquote_plus

from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect, Request
from starlette.types import Receive, Scope

from licensegate.bodies import content_type_of, incomplete_body, read_body, receive_body
from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal

MAX_FIELDS = 200

# The longest request target the HTTP layer (hyper, under Granian) hands the service: a longer one
# is answered there with an empty 414 that no dialect shapes or signs.
HTTP_MAX_URI_BYTES = 65_534

# Refused before any operation is considered, so with the same status in every dialect.
TRANSPORT_STATUSES = {errorcodes.URI_TOO_LONG.code: 414, errorcodes.HEADERS_TOO_LARGE.code: 431}


def transport_status(refusal: Refusal) -> int | None:
    """414 or 431 for a request refused for its URL's or headers' size, else None."""
    return TRANSPORT_STATUSES.get(refusal.error)


def check_headers(request: Request, max_bytes: int) -> None:
    """Refuses headers over `max_bytes` in all (each counted as `name: value` and its line end)."""
    size = sum(len(name) + len(value) + 4 for name, value in request.scope.get("headers", ()))
    if size > max_bytes:
        raise errorcodes.HEADERS_TOO_LARGE(max_bytes=max_bytes)


class Heads(NamedTuple):
    """What the client API reads of a request's headers, found in one pass over them."""

    size: int  # bytes, each header counted as `name: value` and its line end
    content_type: str  # the first Content-Type's media type, lower case ("" without one)
    content_length: str | None  # the first Content-Length as sent


def read_heads(scope: Scope, max_bytes: int) -> Heads:
    """The headers' size (refused over `max_bytes`, as `check_headers` does), media type and
    declared length, in one pass (Starlette's `Headers` would be built and searched twice)."""
    size = 0
    content_type: bytes | None = None
    content_length: bytes | None = None
    for name, value in scope.get("headers", ()):
        size += len(name) + len(value) + 4
        if name == b"content-type":
            if content_type is None:
                content_type = value
        elif name == b"content-length" and content_length is None:
            content_length = value
    if size > max_bytes:
        raise errorcodes.HEADERS_TOO_LARGE(max_bytes=max_bytes)
    media = "" if content_type is None else content_type.decode("latin-1").split(";", 1)[0].strip().lower()
    return Heads(size, media, None if content_length is None else content_length.decode("latin-1"))


def _unquote(text: str, what: str) -> str:
    try:
        return unquote_plus(text, encoding="utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise errorcodes.INVALID_ENCODING(what=what) from exc


def _parse_pairs(data: str, what: str) -> dict[str, str]:
    """`a=1&b=2` into a dict: `+` and percent-escapes decoded as UTF-8, a name without `=` has an
    empty value, and the last occurrence of a name wins, as PHP-based clients expect. Written
    out because it is on every request and `urllib.parse.parse_qsl` costs several times more."""
    if not data:
        return {}
    parts = data.split("&")
    if len(parts) > MAX_FIELDS:
        raise errorcodes.TOO_MANY_PARAMETERS(what=what)
    values: dict[str, str] = {}
    if "%" not in data and "+" not in data and "\x00" not in data:
        # Most requests: nothing to decode and no NUL anywhere, so nothing to check per pair.
        for part in parts:
            if part:
                name, _, value = part.partition("=")
                values[name] = value
        return values
    for part in parts:
        if not part:
            continue
        name, _, value = part.partition("=")
        if "%" in part or "+" in part:  # most pairs have nothing to decode
            name, value = _unquote(name, what), _unquote(value, what)
        if "\x00" in value or "\x00" in name:
            raise errorcodes.INVALID_CHARACTER(name=name[:64], param=name[:64])
        values[name] = value
    return values


def read_query(request: Request, max_bytes: int) -> dict[str, str]:
    return read_query_of(request.scope, max_bytes)


def read_query_of(scope: Scope, max_bytes: int) -> dict[str, str]:
    raw: bytes = scope.get("query_string", b"")
    if len(raw) > max_bytes:
        raise errorcodes.URI_TOO_LONG(max_bytes=max_bytes)
    if not raw:
        return {}
    try:
        text = raw.decode("utf-8")  # clients that do not escape their values send raw UTF-8
    except UnicodeDecodeError as exc:
        raise errorcodes.INVALID_ENCODING(what="query string") from exc
    return _parse_pairs(text, "query string")


async def read_form_body(request: Request, max_bytes: int) -> dict[str, str]:
    """Parameters from an application/x-www-form-urlencoded body. Other bodies are not read at
    all (multipart uploads are read by the operations that take them)."""
    return (await read_form_body_sized(request, max_bytes))[0]


async def read_form_body_sized(request: Request, max_bytes: int) -> tuple[dict[str, str], int]:
    """`read_form_body`, with the body's size in bytes (for a limit known only once the body
    names its operation)."""
    if request.method != "POST" or content_type_of(request) != "application/x-www-form-urlencoded":
        return {}, 0
    return _form_fields(await read_body(request, max_bytes))


async def read_form_fields(
    scope: Scope, receive: Receive, heads: Heads, max_bytes: int
) -> tuple[dict[str, str], int]:
    """`read_form_body_sized` on the ASGI scope and `receive` itself, with the headers already
    read (`read_heads`): no Starlette `Request`, `Headers` or stream generator on the way."""
    if scope["method"] != "POST" or heads.content_type != "application/x-www-form-urlencoded":
        return {}, 0
    return _form_fields(await receive_body(receive, heads.content_length, max_bytes))


def _form_fields(body: bytes) -> tuple[dict[str, str], int]:
    if not body:
        return {}, 0
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errorcodes.INVALID_ENCODING(what="request body") from exc
    return _parse_pairs(text, "request body"), len(body)


async def read_multipart(
    request: Request, max_bytes: int, file_fields: tuple[str, ...], *, query_names_operation: bool = True
) -> tuple[dict[str, str], dict[str, UploadFile], FormData]:
    """Text fields and the accepted file fields of a multipart/form-data body.

    The body must declare its length (so an upload over the limit is refused before it is read);
    files are spooled to disk by the parser past 1 MiB. The caller closes the returned form."""
    declared = request.headers.get("content-length")
    if declared is None or not (declared.isascii() and declared.isdigit()):
        raise errorcodes.LENGTH_REQUIRED()
    if int(declared) > max_bytes:
        raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=max_bytes)
    try:
        # One file part is let through even where none is taken, to be refused below by name.
        max_files = max(1, len(file_fields))
        form = await request.form(max_files=max_files, max_fields=MAX_FIELDS, max_part_size=64 * 1024)
    except ClientDisconnect as exc:
        raise incomplete_body() from exc
    except (MultiPartException, HTTPException) as exc:
        raise errorcodes.INVALID_MULTIPART(reason=getattr(exc, "message", exc)) from exc
    fields: dict[str, str] = {}
    files: dict[str, UploadFile] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):
            if "\x00" in value:
                raise errorcodes.INVALID_CHARACTER(name=name[:64], param=name[:64])
            fields[name] = value
        elif name in file_fields:
            files[name] = value
        else:
            await form.close()
            if not query_names_operation:  # an upload's `type` (and key) sent in the body
                raise errorcodes.UPLOAD_CREDENTIALS_IN_QUERY()
            raise errorcodes.INVALID_MULTIPART(f"Unexpected file field '{name[:64]}'.")
    return fields, files, form


def merge(query: dict[str, str], body: dict[str, str]) -> dict[str, str]:
    if not body:
        return query
    merged = dict(body)
    merged.update(query)  # the query string wins on conflict
    return merged
