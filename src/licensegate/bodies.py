"""Reading a request body within a size limit: both faces (`api/` and `web/`) read bodies here, so
a body over its limit is refused before it is all in memory."""

from __future__ import annotations

import logging

from starlette.requests import ClientDisconnect, Request

from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal

log = logging.getLogger("licensegate.api")


async def read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise errorcodes.INVALID_REQUEST()
        if int(declared) > max_bytes:
            raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=max_bytes)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=max_bytes)
            chunks.append(chunk)
    except ClientDisconnect as exc:
        raise incomplete_body() from exc
    return b"".join(chunks)


def incomplete_body() -> Refusal:
    """The client's fault, so worth a debug line only: it went away mid-body (the answer goes
    nowhere), sent a malformed chunk, or was slower than the body deadline (`app.BodyDeadline`)."""
    log.debug("request body incomplete: the client disconnected, sent a malformed chunk or was too slow")
    return errorcodes.INCOMPLETE_BODY()


def content_type_of(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
