"""Reading a request body within a size limit: both faces (`api/` and `web/`) read bodies here, so
a body over its limit is refused before it is all in memory."""

from __future__ import annotations

from starlette.requests import Request

from licensegate.domain.errors import Invalid


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


def content_type_of(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
