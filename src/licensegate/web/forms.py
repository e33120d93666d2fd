"""Reading what a browser posts: URL-encoded forms (every action) and multipart forms (files),
with limits on size and field count; a form that breaks them is refused, never half-read."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.datastructures import UploadFile
from starlette.requests import ClientDisconnect, Request

from licensegate.bodies import content_type_of, incomplete_body, read_body
from licensegate.domain import errorcodes

MAX_FORM_BYTES = 256 * 1024  # a bulk form can carry a few thousand checked ids
MAX_FIELDS = 5000
MAX_UPLOAD_FIELD = 64 * 1024  # a text field of an upload form (its name, a flag, the token)


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


async def read_form(request: Request, limit: int = MAX_FORM_BYTES) -> Form:
    content_type = content_type_of(request)
    if content_type == "multipart/form-data":
        return await read_multipart(request, limit)
    if content_type not in ("application/x-www-form-urlencoded", ""):
        raise errorcodes.INVALID_FORM("Forms are sent URL-encoded or as multipart.")
    text = (await read_body(request, limit)).decode("utf-8", "replace")
    try:
        fields = parse_qs(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError as exc:
        raise errorcodes.INVALID_FORM(f"The form has too many fields (at most {MAX_FIELDS}).") from exc
    return Form(fields)


async def read_multipart(request: Request, limit: int) -> Form:
    try:
        parsed = await request.form(max_files=1, max_fields=MAX_FIELDS, max_part_size=limit)
    except Exception as exc:  # python-multipart's errors for malformed or oversized parts
        raise errorcodes.INVALID_FORM("The form could not be read (too large or malformed).") from exc
    fields: dict[str, list[str]] = {}
    files: dict[str, UploadFile] = {}
    for name, value in parsed.multi_items():
        if isinstance(value, UploadFile):
            files[name] = value
        else:
            fields.setdefault(name, []).append(value)
    return Form(fields, files)


async def read_upload(request: Request, limit: int) -> Form:
    """A form that carries a large file: its body must declare its length (browsers always do),
    and a length over `limit` is refused before a byte is read. The file is spooled to disk by
    the parser; its text fields stay small. The caller closes `form.files`."""
    declared = request.headers.get("content-length")
    if declared is None or not (declared.isascii() and declared.isdigit()):
        raise errorcodes.LENGTH_REQUIRED()
    if int(declared) > limit:
        raise errorcodes.REQUEST_TOO_LARGE(what="upload", max_bytes=limit)
    if content_type_of(request) != "multipart/form-data":
        return await read_form(request, min(limit, MAX_FORM_BYTES))
    try:
        parsed = await request.form(max_files=1, max_fields=100, max_part_size=MAX_UPLOAD_FIELD)
    except ClientDisconnect as exc:
        raise incomplete_body() from exc
    except Exception as exc:  # python-multipart's errors for malformed parts, several files
        raise errorcodes.INVALID_FORM(
            "The form could not be read (malformed, or more than one file)."
        ) from exc
    fields: dict[str, list[str]] = {}
    files: dict[str, UploadFile] = {}
    for name, value in parsed.multi_items():
        if isinstance(value, UploadFile):
            files[name] = value
        else:
            fields.setdefault(name, []).append(value)
    return Form(fields, files)
