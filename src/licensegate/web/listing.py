"""Lists: what a list page declares (columns, filters, sorts) and what its template reads.

A page declares a `ListSpec` once; `read` turns the query string into validated filter values, a
sort and a keyset position; the page asks the domain for that page of rows and renders
`spec.listing(...)` with the macros in components.html (`table`, `filter_bar`, `pager`,
`bulk_form`). Everything that shapes the view (filters, sort, page size, position) lives in the URL,
so a view can be bookmarked and shared, and works without script; htmx only swaps the table.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlencode

import orjson

from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal
from licensegate.domain.paging import MAX_SIZE, Page, PageRequest, Position

SIZES = (25, 50, 100, MAX_SIZE)
NOTHING = Page([], has_previous=False, has_next=False)  # what a view with a refused filter lists


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    sortable: bool = False
    numeric: bool = False


@dataclass(frozen=True, slots=True)
class Filter:
    name: str
    label: str
    kind: Literal["search", "text", "select", "date"] = "text"
    options: tuple[tuple[str, str], ...] = ()  # (value, label) for selects; the first is "any"
    placeholder: str = ""
    max_length: int = 64
    more: bool = False  # shown under "More filters" (open when one of them is set)


@dataclass(frozen=True, slots=True)
class ListSpec:
    columns: tuple[Column, ...]
    filters: tuple[Filter, ...]
    default_sort: str
    default_descending: bool = True
    default_size: int = 50
    empty_text: str = "Nothing matches."
    text_ids: bool = False  # the rows' ids are text (client sessions), not numbers

    def read(
        self,
        params: Mapping[str, str],
        options: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
        *,
        marked: bool = False,
    ) -> View:
        """The view the query string asks for; a value out of bounds is refused (400), never guessed.
        With `marked`, a filter's bad value is kept instead, with its message in `View.errors`, for
        the page to show next to its field (and answer 400 without reading the list)."""
        values: dict[str, str] = {}
        errors: dict[str, str] = {}
        for spec in self.filters:
            raw = params.get(spec.name, "").strip()
            if not raw:
                continue
            try:
                _check(spec, raw, (options or {}).get(spec.name, spec.options))
            except Refusal as refusal:
                if not marked:
                    raise
                # Kept for the field to show again, without what a page should not echo back.
                shown = "".join(char for char in raw if ord(char) >= 32 and ord(char) != 127)
                errors[spec.name], raw = refusal.message, shown[: spec.max_length]
            values[spec.name] = raw
        sort, descending = self.default_sort, self.default_descending
        raw_sort = params.get("sort", "")
        if raw_sort:
            descending = raw_sort.startswith("-")
            sort = raw_sort.lstrip("-")
            if sort not in {column.key for column in self.columns if column.sortable}:
                raise errorcodes.INVALID_VIEW(f"The list cannot be sorted by '{sort[:32]}'.")
        size = self.default_size
        if params.get("size"):
            if params["size"] not in {str(s) for s in SIZES}:
                raise errorcodes.INVALID_VIEW(f"Rows per page is one of {', '.join(map(str, SIZES))}.")
            size = int(params["size"])
        position = None
        for direction in ("after", "before"):
            if params.get(direction):
                position = _decode(params[direction], before=direction == "before", text_ids=self.text_ids)
        return View(self, values, sort, descending, size, position, dict(options or {}), errors)


def _check(spec: Filter, raw: str, choices: tuple[tuple[str, str], ...]) -> None:
    if len(raw) > spec.max_length:
        raise errorcodes.INVALID_VIEW(f"The filter '{spec.label}' is too long.", param=spec.name)
    if any(ord(char) < 32 or ord(char) == 127 for char in raw):
        # PostgreSQL refuses a NUL in text outright; no value worth finding holds a control character.
        raise errorcodes.INVALID_VIEW(
            f"The filter '{spec.label}' holds a control character.", param=spec.name
        )
    if spec.kind == "select" and raw not in {value for value, _label in choices}:
        raise errorcodes.INVALID_VIEW(
            f"'{raw[:32]}' is not a choice of the filter '{spec.label}'.", param=spec.name
        )
    if spec.kind == "date":
        day_start(raw, spec.label, param=spec.name)


@dataclass
class View:
    spec: ListSpec
    values: dict[str, str]  # the filters that are set
    sort: str
    descending: bool
    size: int
    position: Position | None
    options: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # filter name -> what is wrong with its value

    def mark(self, refusal: Refusal, fields: Mapping[str, str]) -> bool:
        """Note a refusal of a filter's value next to its field: the filter the refusal names
        (`param`), else the one `fields` gives for its error code. False when it names none."""
        param = refusal.extra.get("param")
        name = fields.get(param, param) if isinstance(param, str) else fields.get(refusal.error)
        if name not in {f.name for f in self.spec.filters}:
            return False
        self.errors[name] = refusal.message
        return True

    @property
    def request(self) -> PageRequest:
        return PageRequest(self.sort, self.descending, self.size, self.position)

    def date(self, name: str, *, end: bool = False) -> int | None:
        """A date filter as Unix seconds: its day's start (with `end`: the next day's start)."""
        raw = self.values.get(name)
        if not raw:
            return None
        return day_start(raw, name) + (86400 if end else 0)

    def listing(self, path: str, page: Page, total: int | None, *, cap: int | None = None) -> Listing:
        return Listing(view=self, path=path, page=page, total=total, cap=cap)


@dataclass
class Listing:
    """What the list macros read."""

    view: View
    path: str
    page: Page
    total: int | None
    cap: int | None = None

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.view.spec.columns

    @property
    def filters(self) -> list[Filter]:
        return [replace(f, options=self.view.options.get(f.name, f.options)) for f in self.view.spec.filters]

    @property
    def more_open(self) -> bool:
        return any(f.more and f.name in self.view.values for f in self.view.spec.filters)

    @property
    def rows(self) -> list[dict[str, Any]]:
        return self.page.rows

    @property
    def params(self) -> dict[str, str]:
        return self.view.values

    @property
    def sort(self) -> str:
        return self.view.sort

    @property
    def descending(self) -> bool:
        return self.view.descending

    @property
    def default_sort(self) -> str:
        return self.view.spec.default_sort

    @property
    def default_descending(self) -> bool:
        return self.view.spec.default_descending

    @property
    def sort_param(self) -> str:
        return ("-" if self.descending else "") + self.sort

    @property
    def size(self) -> int:
        return self.view.size

    @property
    def sizes(self) -> tuple[int, ...]:
        return SIZES

    @property
    def errors(self) -> dict[str, str]:
        return self.view.errors

    @property
    def empty_text(self) -> str:
        if self.errors:
            return "Correct the filter marked above to see the list."
        return self.view.spec.empty_text if not self.filtered else "Nothing matches these filters."

    @property
    def filtered(self) -> bool:
        return bool(self.view.values)

    @property
    def more_than_cap(self) -> bool:
        return self.cap is not None and self.total is not None and self.total > self.cap

    @property
    def at_start(self) -> bool:
        return not self.page.has_previous

    @property
    def next_cursor(self) -> str | None:
        if not self.page.has_next or not self.rows:
            return None
        return _encode(self.rows[-1], self.sort)

    @property
    def prev_cursor(self) -> str | None:
        if not self.page.has_previous or not self.rows:
            return None
        return _encode(self.rows[0], self.sort)

    def _base(self, *, sort: str | None = None, size: bool = True) -> dict[str, str]:
        query = dict(self.view.values)
        chosen = sort if sort is not None else self.sort_param
        if chosen != ("-" if self.default_descending else "") + self.default_sort:
            query["sort"] = chosen
        if size and self.size != self.view.spec.default_size:
            query["size"] = str(self.size)
        return query

    def url(self, query: dict[str, str]) -> str:
        return f"{self.path}?{urlencode(query)}" if query else self.path

    def sort_url(self, key: str) -> str:
        """Sorting by a column starts again at the first page; clicking the sorted column flips it.
        A new column sorts ascending (A to Z), the list's default column in its default direction."""
        if key == self.sort:
            chosen = ("" if self.descending else "-") + key
        elif key == self.default_sort:
            chosen = ("-" if self.default_descending else "") + key
        else:
            chosen = key
        return self.url(self._base(sort=chosen))

    def page_url(self, cursor: str | None, direction: str = "after") -> str:
        query = self._base()
        if cursor is not None:
            query[direction] = cursor
        return self.url(query)

    def hidden_params(self, without: str) -> dict[str, str]:
        """The view's parameters as hidden fields of a form that changes one of them."""
        return {k: v for k, v in self._base(size=without != "size").items() if k != without}

    def export_url(self, fmt: str) -> str:
        query = dict(self.view.values)
        query["format"] = fmt
        return f"{self.path}/export?{urlencode(query)}"


SORT_VALUE = {"created": "id"}  # sorts whose position is the row's id alone


def _encode(row: dict[str, Any], sort: str) -> str:
    column = SORT_VALUE.get(sort, sort)
    raw = orjson.dumps([row.get(column), row["id"]])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(text: str, *, before: bool, text_ids: bool = False) -> Position:
    bad = errorcodes.INVALID_VIEW("This page link is damaged; start again from the first page.")
    if len(text) > 512:
        raise bad
    try:
        value, row_id = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, TypeError, binascii.Error) as exc:
        raise bad from exc
    if (
        not isinstance(row_id, str if text_ids else int)
        or isinstance(row_id, bool)
        or not isinstance(value, (str, int, type(None)))
    ):
        raise bad
    return Position(value, row_id, before)


def day_start(text: str, label: str, *, param: str | None = None) -> int:
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError as exc:
        raise errorcodes.INVALID_VIEW(f"The date '{label}' must look like 2026-01-31.", param=param) from exc
    return int(day.timestamp())
