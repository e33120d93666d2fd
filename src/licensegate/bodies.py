"""Reading a request body within a size limit: both faces (`api/` and `web/`) read bodies here, so
a body over its limit is refused before it is all in memory."""

from __future__ import annotations

import logging

from starlette.requests import ClientDisconnect, Request
from starlette.types import Receive

from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal

log = logging.getLogger("licensegate.api")


async def read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    _check_declared(declared, max_bytes)
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


async def receive_body(receive: Receive, declared: str | None, max_bytes: int) -> bytes:
    """`read_body` on the ASGI `receive` itself (the client API's hot path: no `Request`, no stream
    generator), the declared Content-Length given; the same refusals."""
    _check_declared(declared, max_bytes)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "http.request":
            chunk: bytes = message.get("body", b"")
            if chunk:
                size += len(chunk)
                if size > max_bytes:
                    raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=max_bytes)
                chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        elif kind == "http.disconnect":
            raise incomplete_body()


def _check_declared(declared: str | None, max_bytes: int) -> None:
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise errorcodes.INVALID_REQUEST()
        if int(declared) > max_bytes:
            raise errorcodes.REQUEST_TOO_LARGE(what="request body", max_bytes=max_bytes)


def incomplete_body() -> Refusal:
    """The client's fault, so worth a debug line only: it went away mid-body (the answer goes
    nowhere), sent a malformed chunk, or was slower than the body deadline (`app.BodyDeadline`)."""
    log.debug("request body incomplete: the client disconnected, sent a malformed chunk or was too slow")
    return errorcodes.INCOMPLETE_BODY()


def content_type_of(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
