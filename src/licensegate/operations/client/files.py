"""Client API — Download File."""

from __future__ import annotations

import logging
from typing import Any

from licensegate.domain import errorcodes, files, filestore
from licensegate.domain.errors import Forbidden, Invalid, Refusal, recast
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

log = logging.getLogger("licensegate.api")


def _too_large(size: int | None, limit: int) -> Refusal:
    mib = limit / (1024 * 1024)
    limit_text = f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"
    what = f"This file ({size} bytes)" if size is not None else "This file"
    return errorcodes.FILE_TOO_LARGE_TO_SEND(what=what, limit=limit_text)


@registry.operation(
    "file",
    group="Files",
    summary="Download File",
    requires="session",
    statuses=frozenset({200, 400, 401, 403, 404, 429, 500, 503}),
    pinned=False,  # it may fetch the file from its URL: no pooled connection is held meanwhile
    params=[Param("fileid", required=True, max_length=32, doc="the file's id")],
    returns={
        "contents": "the file's bytes as lowercase hexadecimal text, two characters per byte "
        "(KeyAuth's encoding)",
        "name": "the file's name",
        "size": "the file's size in bytes (integer)",
    },
)
async def download(call: ClientCall) -> dict[str, Any]:
    """One of the application's files, in the response itself: `contents` is the bytes as
    lowercase hexadecimal text (as KeyAuth sends them), so the response is about twice the
    file's size; files larger than the server's `client_file_bytes` setting are refused. A file
    added by URL is served from the copy taken when it was added (fetched again, through the
    outbound-request rules, only when that copy has gone missing). Each download sent is counted
    for the seller (the file's `downloads`, and the time of the latest).

    Refusals: an unknown file is 404 `file_not_found`; a file marked for logged-in sessions only
    (`authed`), asked for by a session that is not logged in, is 403 `session_not_validated`
    (with the application's `sessionunauthed` message); a file over the size limit is 403
    `file_too_large`; a file whose source cannot be fetched is 403 with the fetch's error code
    (`url_fetch_failed`, `timeout`, `connection_failed`, `host_not_found`, `target_not_allowed`,
    ...) or `file_unavailable`, and a message that names no host or URL."""
    settings = call.services.settings
    limit = settings.client_file_bytes
    row = await files.get(call.db, call.app.id, call.args.text("fileid"))
    if row["authed"]:
        await call.require_logged_in()
    size = int(row["size"] or 0)
    if size > limit:
        raise _too_large(size, limit)
    try:
        row, chunks = await files.read_content(
            settings, call.services.files, call.db, call.app.id, row["file_id"], max_bytes=limit
        )
        # The answer carries the bytes as hex and is signed whole, so it is built in memory (up
        # to twice `client_file_bytes`); the content itself comes a chunk at a time.
        contents = "".join([chunk.hex() async for chunk in chunks])
    except Invalid as refusal:
        if errorcodes.FILE_TOO_LARGE.refuses(refusal):
            raise _too_large(None, limit) from refusal
        # The fetch's own code, with a message that never names the URL or its host.
        raise recast(refusal, Forbidden, errorcodes.FILE_UNAVAILABLE.message) from refusal
    except filestore.ContentMissing:
        log.error("file %s of application %d has no stored content", row["file_id"], call.app.id)
        raise errorcodes.FILE_UNAVAILABLE() from None
    try:
        await files.note_download(call.db, row["id"], call.now())
    except Exception:  # counting is for the seller's eyes: the program gets its file regardless
        log.exception("download of file %s of application %d not counted", row["file_id"], call.app.id)
    return {
        "message": "File download successful",
        "contents": contents,
        "name": row["name"],
        "size": len(contents) // 2,
    }
