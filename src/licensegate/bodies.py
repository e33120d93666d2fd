"""Reading a request body within a size limit: both faces (`api/` and `web/`) read bodies here, so
a body over its limit is refused before it is all in memory."""

from __future__ import annotations

from starlette.requests import Request

from licensegate.domain import errorcodes


async def read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise errorcodes.INVALID_REQUEST()
        if int(declared) > max_bytes:
            raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=max_bytes)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


def content_type_of(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
