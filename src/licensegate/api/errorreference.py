"""`docs/api/errors.md`: every error code, generated from the catalogue (`domain/errorcodes.py`)
and the statuses the API layer gives each kind of refusal."""

from __future__ import annotations

from collections.abc import Mapping

from licensegate.api.envelope import CLIENT_FAILURE_CODES
from licensegate.domain import errorcodes
from licensegate.domain.errors import ErrorCode, Kind
from licensegate.operations.declarations import STATUS_OF_KIND


def status_of(kind: Kind) -> int:
    return 500 if kind == "internal" else STATUS_OF_KIND[kind]


def client_code_of(kind: Kind) -> int:
    return CLIENT_FAILURE_CODES[kind]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(routing: Mapping[int, ErrorCode], other: ErrorCode) -> str:
    """The page. `routing` (by status) and `other` are what the HTTP layer answers for a request
    no operation handles."""
    lines = [
        "# Error codes",
        "",
        "Generated from `src/licensegate/domain/errorcodes.py` by `licensegate reference`; "
        "do not edit by hand.",
        "",
        'Every failure is JSON with `"success": false`, a `message` for people and a stable `error` code '
        "for programs (see [README.md](README.md#responses)). A refusal caused by one request parameter "
        "also names it in `param`. The status is the one given here unless the operation does not "
        "list it in its reference entry: then it answers 403 with the same `error`. Client API "
        "failures also carry the integer `code` given here. A message in the table is the default; "
        "where a refusal knows more (which parameter, which limit) its message says so, and "
        "`{field}` marks what is filled in.",
        "",
        "| `error` | status | client `code` | message | when |",
        "|---|---|---|---|---|",
    ]
    entries = sorted(errorcodes.catalogue(), key=lambda e: (e.code, status_of(e.kind)))
    for entry in entries:
        lines.append(
            f"| `{entry.code}` | {status_of(entry.kind)} | {client_code_of(entry.kind)} "
            f"| {_cell(entry.message)} | {_cell(entry.doc)} |"
        )
    lines += [
        "",
        "## Outside any operation",
        "",
        "Answered by the HTTP layer for a request no operation handles (no client `code`):",
        "",
        "| `error` | status | message | when |",
        "|---|---|---|---|",
    ]
    rows = [(str(status), entry) for status, entry in sorted(routing.items())] + [("its own", other)]
    for status, entry in rows:
        lines.append(f"| `{entry.code}` | {status} | {_cell(entry.message)} | {_cell(entry.doc)} |")
    return "\n".join(lines) + "\n"
