"""Reading what a browser posts: URL-encoded forms (every action) and multipart forms (files),
with limits on size and field count; a form that breaks them is refused, never half-read."""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.datastructures import UploadFile
from starlette.requests import Request

from licensegate.domain.errors import Invalid

MAX_FORM_BYTES = 256 * 1024  # a bulk form can carry a few thousand checked ids
MAX_FIELDS = 5000


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
            raise Invalid(f"'{name}' is too long (at most {max_length} characters).", "parameter_too_long")
        return value

    def all(self, name: str) -> list[str]:
        return list(self._fields.get(name, ()))

    def flag(self, name: str) -> bool:
        return self.get(name) in ("1", "on", "true", "yes")

    def items(self) -> list[tuple[str, str]]:
        return [(name, value) for name, values in self._fields.items() for value in values]

    def __contains__(self, name: str) -> bool:
        return name in self._fields


def _too_large() -> Invalid:
    return Invalid("The form is too large.", "form_too_large")


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise _too_large()
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise _too_large()
    return bytes(body)


async def read_form(request: Request, limit: int = MAX_FORM_BYTES) -> Form:
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if content_type == "multipart/form-data":
        return await read_multipart(request, limit)
    if content_type not in ("application/x-www-form-urlencoded", ""):
        raise Invalid("Forms are sent URL-encoded or as multipart.", "unsupported_form")
    text = (await read_body(request, limit)).decode("utf-8", "replace")
    try:
        fields = parse_qs(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError as exc:
        raise _too_large() from exc
    return Form(fields)


async def read_multipart(request: Request, limit: int) -> Form:
    try:
        parsed = await request.form(max_files=1, max_fields=MAX_FIELDS, max_part_size=limit)
    except Exception as exc:  # python-multipart's errors for malformed or oversized parts
        raise Invalid("The form could not be read (too large or malformed).", "invalid_form") from exc
    fields: dict[str, list[str]] = {}
    files: dict[str, UploadFile] = {}
    for name, value in parsed.multi_items():
        if isinstance(value, UploadFile):
            files[name] = value
        else:
            fields.setdefault(name, []).append(value)
    return Form(fields, files)
