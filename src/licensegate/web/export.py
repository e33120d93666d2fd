"""Exporting a list's filtered view: CSV or JSON, streamed as the rows are read (the page reads
them in keyset batches), so an export of any size takes constant memory."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import orjson
from starlette.responses import Response, StreamingResponse

from licensegate.domain.paging import Page, PageRequest, Position
from licensegate.web.visit import Visit

FORMATS = ("csv", "json")
FLUSH_BYTES = 64 * 1024
BATCH = 500


async def oldest_first(
    read: Callable[[PageRequest], Awaitable[Page]], fields: Sequence[str], by: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The rows of a log (`read` answers one keyset page), oldest first, in batches, each row cut
    to `fields`. A log is paged by id alone, or with `by` by that column (its sort) then id."""
    sort = by or "created"
    request = PageRequest(sort, False, BATCH)
    while True:
        found = await read(request)
        for row in found.rows:
            yield {name: row[name] for name in fields}
        if not found.has_next:
            return
        last = found.rows[-1]
        request = PageRequest(sort, False, BATCH, Position(last[by] if by else None, last["id"]))


def csv_safe(value: Any) -> Any:
    """Cells a spreadsheet would run as a formula start with a quote instead (CSV injection)."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def chosen_format(visit: Visit) -> str | None:
    fmt = visit.request.query_params.get("format", "csv")
    return fmt if fmt in FORMATS else None


def refused(visit: Visit) -> Response:
    return visit.render("error.html", status=400, title="Not accepted", message="Export as csv or json.")


def stream(
    visit: Visit,
    name: str,
    fmt: str,
    rows: AsyncIterator[dict[str, Any]],
    fields: Sequence[str],
    flatten: Callable[[dict[str, Any]], dict[str, Any]] = dict,
) -> Response:
    """The rows as a download called `name`.`fmt`; `flatten` turns a row into CSV cells."""

    async def as_csv() -> AsyncIterator[bytes]:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        async for row in rows:
            writer.writerow({k: csv_safe(v) for k, v in flatten(row).items()})
            if out.tell() > FLUSH_BYTES:
                yield out.getvalue().encode()
                out.seek(0)
                out.truncate()
        yield out.getvalue().encode()

    async def as_json() -> AsyncIterator[bytes]:
        yield b"["
        first = True
        async for row in rows:
            yield (b"" if first else b",\n") + orjson.dumps(row)
            first = False
        yield b"]\n"

    response = StreamingResponse(
        as_csv() if fmt == "csv" else as_json(),
        media_type="text/csv; charset=utf-8" if fmt == "csv" else "application/json",
        headers={"content-disposition": f'attachment; filename="{name}.{fmt}"'},
    )
    return visit.finish(response)
