"""Licenses: importing keys made elsewhere (another service's export, or licensegate's own) from a
CSV or JSON file. The first post answers a dry-run report (what would be created; duplicates in
the file and against the application's keys; invalid rows with their line and reason); the
report's confirm button posts the same file again, which is checked again and imported key by key
through the seller operation `add` (a fixed key is a mask without `*`), so a reseller's levels
and balance, and the audit log, are those of the seller API.

CSV: a header line naming the columns; `key` is required, `level`, `duration_days` (or `days`)
and `note` optional (their defaults are chosen on the form); other columns, such as the status
or dates of an export, are ignored. JSON: a list of such objects, or of keys as strings."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import errorcodes, keygen, licenses, team
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Reseller
from licensegate.web.confirm import confirmed
from licensegate.web.navigation import AppPage, open_app
from licensegate.web.pages.licenses import SLUG, levels_of, reseller_of
from licensegate.web.seller import Steps
from licensegate.web.visit import Visit, page

MAX_BYTES = 128 * 1024
# The confirming post carries the file's text in a field, its line ends sent as CRLF by browsers
# (up to twice the bytes); either post fits in the body allowance with room for the small fields.
MAX_FIELD = 2 * MAX_BYTES
MAX_BODY = MAX_FIELD + 16 * 1024
MAX_ROWS = 1000
SHOWN = 50  # rows of each part of the report shown on the page
DAYS_COLUMNS = ("duration_days", "days", "expiry", "duration")


@dataclass(frozen=True, slots=True)
class Entry:
    line: int  # the file's line (CSV) or the entry's number (JSON)
    key: str
    level: str
    days: str
    note: str


@dataclass
class Report:
    """What importing the file would do."""

    where: str  # "line" (CSV) or "entry" (JSON)
    valid: list[Entry] = field(default_factory=list)
    invalid: list[tuple[int, str, str]] = field(default_factory=list)  # line, key (as given), reason
    repeated: list[tuple[int, str, int]] = field(default_factory=list)  # line, key, first line
    existing: list[tuple[int, str]] = field(default_factory=list)
    costs: dict[str, int] = field(default_factory=dict)  # a reseller's balance bucket -> units


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError("not text")
    return str(value).strip()


def _parse(content: str, defaults: dict[str, str]) -> tuple[str, list[tuple[int, dict[str, str] | str]]]:
    """The file's rows as (line, fields) or (line, why it cannot be read); refuses a file that
    is neither CSV with a `key` column nor a JSON list."""
    stripped = content.lstrip("\ufeff").lstrip()
    rows: list[tuple[int, dict[str, str] | str]] = []
    if stripped.startswith(("[", "{")):
        try:
            data = orjson.loads(stripped)
        except orjson.JSONDecodeError as exc:
            raise errorcodes.INVALID_FORM(f"The file is not valid JSON ({exc.msg}).") from exc
        if not isinstance(data, list):
            raise errorcodes.INVALID_FORM("A JSON file holds a list of keys or of objects with a 'key'.")
        for number, item in enumerate(data, start=1):
            raw = {"key": item} if isinstance(item, str) else item
            if not isinstance(raw, dict):
                rows.append((number, "An entry is a key or an object with a 'key'."))
                continue
            try:
                rows.append((number, _fields({str(k).lower(): _text(v) for k, v in raw.items()}, defaults)))
            except ValueError:
                rows.append((number, "A value is not text or a number."))
        return "entry", rows
    reader = csv.DictReader(io.StringIO(stripped))
    header = [name.strip().lower() for name in reader.fieldnames or []]
    if "key" not in header:
        raise errorcodes.INVALID_FORM("A CSV file starts with a header line naming a 'key' column.")
    reader.fieldnames = header
    for record in reader:
        if None in record:
            rows.append((reader.line_num, "The line has more values than the header has columns."))
            continue
        rows.append((reader.line_num, _fields({k: (v or "").strip() for k, v in record.items()}, defaults)))
    return "line", rows


def _fields(raw: dict[str, str], defaults: dict[str, str]) -> dict[str, str]:
    days = next((raw[name] for name in DAYS_COLUMNS if raw.get(name)), "") or defaults["days"]
    return {
        "key": raw.get("key", ""),
        "level": raw.get("level") or defaults["level"],
        "days": days,
        "note": raw.get("note", ""),
    }


def _check(fields: dict[str, str], levels: set[str], reseller: Reseller | None) -> tuple[str, str] | None:
    """Why this row cannot become a key, by the rules of the seller API's `add` (None: it can)."""
    key = fields["key"]
    if not key:
        return "key", "The key is empty."
    if keygen.PLACEHOLDER in key:
        return "key", "A key cannot contain '*' (it would be a mask for random keys)."
    try:
        keygen.check_mask(key)
    except Refusal as refusal:
        return "key", refusal.message.replace("mask", "key")
    if fields["level"] not in levels:
        return "level", f"No subscription has level '{fields['level'][:12]}'."
    if reseller is not None and not reseller.allows_level(fields["level"]):
        return "level", f"You may not sell level '{fields['level']}'."
    try:
        days = float(fields["days"])
        seconds = licenses.duration_seconds(days, "duration_days")
        if reseller is not None:
            team.bucket_for(seconds)
    except ValueError:
        return "duration_days", f"The duration '{fields['days'][:24]}' is not a number of days."
    except Refusal as refusal:
        return "duration_days", refusal.message
    if len(fields["note"]) > 256:
        return "note", "The note is longer than 256 characters."
    return None


async def _report(visit: Visit, app: AppPage, content: str, defaults: dict[str, str]) -> Report:
    where, rows = _parse(content, defaults)
    if len(rows) > MAX_ROWS:
        raise errorcodes.INVALID_FORM(
            f"A file imports at most {MAX_ROWS:,} keys; this one has {len(rows):,}."
        )
    if not rows:
        raise errorcodes.INVALID_FORM("The file holds no keys.")
    reseller = reseller_of(visit)
    levels = set(await levels_of(visit, app))
    report = Report(where)
    first: dict[str, int] = {}
    candidates: list[Entry] = []
    for line, fields in rows:
        if isinstance(fields, str):
            report.invalid.append((line, "", fields))
            continue
        problem = _check(fields, levels, reseller)
        if problem is not None:
            report.invalid.append((line, fields["key"][:64], problem[1]))
            continue
        if fields["key"] in first:
            report.repeated.append((line, fields["key"], first[fields["key"]]))
            continue
        first[fields["key"]] = line
        candidates.append(Entry(line, fields["key"], fields["level"], fields["days"], fields["note"]))
    taken: set[str] = set()
    for start in range(0, len(candidates), 500):
        chunk = [entry.key for entry in candidates[start : start + 500]]
        taken |= await licenses.existing(visit.services.db, app.id, chunk)
    for entry in candidates:
        if entry.key in taken:
            report.existing.append((entry.line, entry.key))
        else:
            report.valid.append(entry)
            if reseller is not None:
                bucket = team.bucket_for(licenses.duration_seconds(float(entry.days), "duration_days"))
                report.costs[bucket] = report.costs.get(bucket, 0) + 1
    return report


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), "licenses")


async def _form(visit: Visit, app: AppPage, *, error: str = "", status: int = 200) -> Response:
    levels = await levels_of(visit, app)
    reseller = reseller_of(visit)
    if reseller is not None:
        levels = [level for level in levels if reseller.allows_level(level)]
    return visit.render(
        "licenses/import.html",
        status=status,
        title=f"Import keys · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        error=error,
        level_options=[(level, level) for level in levels],
        level=visit.form.get("level", levels[0] if levels else ""),
        days=visit.form.get("days", "30"),
        max_bytes=MAX_BYTES,
        max_rows=MAX_ROWS,
        list_url=app.path(SLUG),
    )


async def import_form(visit: Visit) -> Response:
    return await _form(visit, await _open(visit))


async def _content(visit: Visit) -> str:
    """The file's text: the upload on the first post, the report's copy on the confirming one."""
    form = visit.form
    try:
        upload = form.files.get("file")
        if "content" in form:
            raw = form.get("content").replace("\r\n", "\n").encode()
        elif upload is None or not upload.filename:
            raise errorcodes.INVALID_FORM("Choose a CSV or JSON file to import.")
        else:
            raw = await upload.read(MAX_BYTES + 1)
    finally:
        for sent in form.files.values():
            await sent.close()
    if len(raw) > MAX_BYTES:
        raise errorcodes.INVALID_FORM(f"The file is larger than {MAX_BYTES // 1024} KiB; import it in parts.")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise errorcodes.INVALID_FORM("The file is not UTF-8 text.") from exc


async def import_keys(visit: Visit) -> Response:
    app = await _open(visit)  # who may import, before the body is read
    try:
        form = await visit.read_upload(MAX_BODY, MAX_FIELD)
    except Refusal as refusal:  # the parser has closed what it spooled
        if refusal.error == "request_too_large":
            message = f"The file is larger than {MAX_BYTES // 1024} KiB; import it in parts."
            return await _form(visit, app, error=message, status=413)
        return await _form(visit, app, error=refusal.message, status=400)
    defaults = {"level": form.text("level", 12) or "1", "days": form.text("days", 24) or "30"}
    try:
        content = await _content(visit)
        report = await _report(visit, app, content, defaults)
    except Refusal as refusal:
        return await _form(visit, app, error=refusal.message, status=400)
    if not confirmed(visit) or not report.valid:
        return visit.render(
            "licenses/import_report.html",
            title=f"Import check · {app.app['name']}",
            app=app.app,
            nav=app.nav,
            report=report,
            shown=SHOWN,
            content=content,
            defaults=defaults,
            action=app.path(f"{SLUG}/import"),
            list_url=app.path(SLUG),
            balance=None
            if report.costs == {}
            else (await team.reseller_info(visit.services.db, app.id, visit.account.username))["balance"],
        )
    steps = await Steps.of(visit, app)
    created = 0
    for entry in report.valid:
        params = {
            "mask": entry.key,
            "expiry": entry.days,
            "level": entry.level,
            "owner": visit.account.username,
        }
        if entry.note:
            params["note"] = entry.note
        try:
            await steps.run("add", params)
        except Refusal as refusal:
            where = f"{report.where} {entry.line}"
            done = f"{created:,} key{'' if created == 1 else 's'}"
            visit.flash(f"Imported {done}, then stopped at {where}: {refusal.message}", "error")
            return visit.redirect(app.path(SLUG))
        created += 1
    visit.flash(f"Imported {created:,} key{'' if created == 1 else 's'}.")
    return visit.redirect(app.path(SLUG))


ROUTES = [
    Route("/apps/{app_id:int}/licenses/import", page(import_form), methods=["GET"]),
    Route("/apps/{app_id:int}/licenses/import", page(import_keys, upload=True), methods=["POST"]),
]
