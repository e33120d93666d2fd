"""Reading what a browser posts: URL-encoded forms (every action) and multipart forms (files),
within the limits of the route (`Limits`): the whole body (a declared length over it is refused
before a byte is read, a body without one is counted as it arrives and cut off there), the number
of fields, the size of each text field, and whether it may carry files at all. A form that breaks
them is refused, never half-read; a file part is only ever spooled to disk on a route that takes
files, once the handler has checked who may post it (`Visit.read_upload`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from urllib.parse import parse_qs

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import ClientDisconnect, Request

from licensegate.bodies import content_type_of, incomplete_body, read_body
from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal
from licensegate.operations.declarations import STATUS_OF_KIND

MAX_FORM_BYTES = 256 * 1024  # a bulk form can carry a few thousand checked ids
MAX_FIELDS = 5000
MAX_UPLOAD_FIELD = 64 * 1024  # a text field of an upload form (its name, a flag, the token)
MAX_UPLOAD_FIELDS = 20  # an upload form has a handful; each held in memory


@dataclass(frozen=True, slots=True)
class Limits:
    """What one route's form may carry."""

    body: int = MAX_FORM_BYTES  # the whole body, declared or counted as it arrives
    files: int = 0  # file parts; a route that takes none refuses one (400)
    field: int = MAX_FORM_BYTES  # one text field of a multipart form
    fields: int = MAX_FIELDS
    length_required: bool = False  # an upload's body declares its length (browsers always do)


FORM = Limits()


def status_of(refusal: Refusal) -> int:
    """The status a dashboard page answers a refusal with: 413 for a body over its route's limit
    (what browsers and proxies understand), else its kind's."""
    if refusal.error == "request_too_large":
        return 413
    return STATUS_OF_KIND.get(refusal.kind, 400)


def upload_limits(body: int, field: int = MAX_UPLOAD_FIELD, files: int = 1) -> Limits:
    """A form carrying one file (or `files`): up to `body` bytes in all, its text fields small."""
    return Limits(body=body, files=files, field=field, fields=MAX_UPLOAD_FIELDS, length_required=True)


class Form:
    """The fields of one form; a missing field reads as ''."""

    def __init__(self, fields: dict[str, list[str]], files: dict[str, UploadFile] | None = None) -> None:
        self._fields = fields
        self.files = files or {}

    def get(self, name: str, default: str = "") -> str:
        values = self._fields.get(name)
        return values[0] if values else default

    def text(self, name: str, max_length: int = 256) -> str:
        """A trimmed single-line value, refused when longer than `max_length`."""
        value = self.get(name).strip()
        if len(value) > max_length:
            raise errorcodes.PARAMETER_TOO_LONG(name=name, max_length=max_length)
        return value

    def all(self, name: str) -> list[str]:
        return list(self._fields.get(name, ()))

    def flag(self, name: str) -> bool:
        return self.get(name) in ("1", "on", "true", "yes")

    def items(self) -> list[tuple[str, str]]:
        return [(name, value) for name, values in self._fields.items() for value in values]

    def __contains__(self, name: str) -> bool:
        return name in self._fields


async def read_form(request: Request, limits: Limits = FORM) -> Form:
    _check_length(request, limits)
    content_type = content_type_of(request)
    if content_type == "multipart/form-data":
        return await _read_multipart(request, limits)
    if content_type not in ("application/x-www-form-urlencoded", ""):
        raise errorcodes.INVALID_FORM("Forms are sent URL-encoded or as multipart.")
    # URL-encoded text is held in memory whole: never more than an ordinary form's allowance,
    # even on a route whose uploads may be larger.
    text = (await read_body(request, min(limits.body, MAX_FORM_BYTES))).decode("utf-8", "replace")
    try:
        fields = parse_qs(text, keep_blank_values=True, max_num_fields=limits.fields)
    except ValueError as exc:
        raise errorcodes.INVALID_FORM(f"The form has too many fields (at most {limits.fields}).") from exc
    return Form(fields)


async def read_upload(request: Request, limit: int, field: int = MAX_UPLOAD_FIELD, files: int = 1) -> Form:
    """A form that carries a large file: its body must declare its length, and a length over
    `limit` is refused before a byte is read. The file is spooled to disk by the parser; its
    text fields stay within `field` bytes. The caller closes `form.files`."""
    return await read_form(request, upload_limits(limit, field, files))


def _check_length(request: Request, limits: Limits) -> None:
    declared = request.headers.get("content-length")
    if declared is None:
        if limits.length_required and content_type_of(request) == "multipart/form-data":
            raise errorcodes.LENGTH_REQUIRED()
        return
    if not (declared.isascii() and declared.isdigit()):
        raise errorcodes.INVALID_REQUEST()
    if int(declared) > limits.body:
        raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=limits.body)


async def _counted(request: Request, limit: int) -> AsyncGenerator[bytes, None]:
    """The body as it arrives, cut off past `limit` bytes (a body declaring no length, or
    sending more than it declared)."""
    size = 0
    async with aclosing(request.stream()) as stream:
        async for chunk in stream:
            size += len(chunk)
            if size > limit:
                raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=limit)
            yield chunk


async def _read_multipart(request: Request, limits: Limits) -> Form:
    parser = MultiPartParser(
        request.headers,
        _counted(request, limits.body),
        max_files=limits.files,
        max_fields=limits.fields,
        max_part_size=limits.field,
    )
    try:
        parsed = await parser.parse()
    except Refusal:
        raise
    except ClientDisconnect as exc:
        raise incomplete_body() from exc
    except MultiPartException as exc:
        if limits.files == 0 and exc.message.startswith("Too many files"):
            raise errorcodes.INVALID_FORM("This form does not take files.") from exc
        raise errorcodes.INVALID_FORM(f"The form could not be read: {exc.message}") from exc
    except Exception as exc:  # anything else python-multipart finds malformed
        raise errorcodes.INVALID_FORM("The form could not be read (malformed).") from exc
    fields: dict[str, list[str]] = {}
    files: dict[str, UploadFile] = {}
    for name, value in parsed.multi_items():
        if isinstance(value, UploadFile):
            files[name] = value
        else:
            fields.setdefault(name, []).append(value)
    return Form(fields, files)
