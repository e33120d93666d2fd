"""The Logs and Tamper logs pages (the logs area): what programs send with the client API's `log`,
and what they report with `tamper`. Both are one kind of page: newest first with keyset paging
(by time, then id), searched by text, filtered by user or key, address and a date range, the
filtered view counted and exported, emptied through the seller operation (`dellogs`,
`deltamperlogs`) after a confirmation, and the client logs of one address deleted through
`dellogsbyip`; with how long the application keeps them (the setting `logretention`, linked
where the account may change it) and what each client session may store."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import logs, permissions, tamper
from licensegate.domain.errors import Refusal
from licensegate.domain.paging import Page, PageRequest, known_total
from licensegate.domain.permissions import Area
from licensegate.web import export as export_view
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import NOTHING, Column, Filter, ListSpec, View
from licensegate.web.navigation import AppPage, Section, open_app, register
from licensegate.web.visit import Handler, Visit, page

AREA: Area = "logs"  # the seller API's Log operations
SORT = "created_at"  # by time, then id (store.logs.browse: the (app_id, ..., created_at) indexes)
# Refusals of a filter's value that name no parameter: the field they are about.
FIELDS = {"invalid_ip": "ip", "invalid_time_range": "to"}


@dataclass(frozen=True, slots=True)
class LogPage:
    """One of the two logs, as its page shows it."""

    slug: str
    title: str
    table: logs.LogTable
    what: str  # its entries, in a sentence: "log lines"
    clear: str  # the seller operation that empties it
    spec: ListSpec
    export_fields: tuple[str, ...]

    def path(self, app: AppPage, action: str = "") -> str:
        return app.path(self.slug) + (f"/{action}" if action else "")


def _spec(columns: tuple[Column, ...], searched: str, empty: str) -> ListSpec:
    return ListSpec(
        columns=(Column(SORT, "Time", sortable=True), Column("credential", "User or key"), *columns),
        filters=(
            Filter("search", "Search", "search", placeholder=searched, max_length=128),
            Filter("user", "User or key", placeholder="A whole username or license key", max_length=128),
            Filter("ip", "Address", placeholder="e.g. 203.0.113.9", max_length=64),
            Filter("from", "From", "date"),
            Filter("to", "Until", "date"),
        ),
        default_sort=SORT,
        empty_text=empty,
    )


CLIENT = LogPage(
    "logs",
    "Logs",
    logs.CLIENT_LOGS,
    "log lines",
    "dellogs",
    _spec(
        (Column("message", "Message"), Column("pcuser", "PC user"), Column("ip", "Address")),
        "Text in the message or PC user name",
        "No log lines yet. Programs send them with the client API's log call.",
    ),
    ("id", "created_at", "credential", "pcuser", "message", "ip"),
)
TAMPER = LogPage(
    "tamper-logs",
    "Tamper logs",
    tamper.TAMPER_LOGS,
    "tamper reports",
    "deltamperlogs",
    _spec(
        (
            Column("user", "Signed-in user"),
            Column("reason", "Reason"),
            Column("details", "Details"),
            Column("hwid", "HWID"),
            Column("ip", "Address"),
        ),
        "Text in the reason, details or HWID",
        "No tamper reports. Programs send one with the client API's tamper call when they detect tampering.",
    ),
    ("id", "created_at", "credential", "hwid", "reason", "details", "ip"),
)
for _log in (CLIENT, TAMPER):
    register(Section(_log.title, _log.slug, AREA))


def _where(view: View) -> logs.LogFilter:
    """The view's filters; a date range covers its last day whole."""
    values, until = view.values, view.date("to", end=True)
    return logs.log_filter(
        credential=values.get("user"),
        ip=values.get("ip"),
        since=view.date("from"),
        until=None if until is None else until - 1,
        search=values.get("search"),
    )


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


async def _browse(
    visit: Visit, log: LogPage, app: AppPage, where: logs.LogFilter, request: PageRequest
) -> Page:
    return await logs.browse(visit.services.db, log.table, app.id, where, request)


async def listing(visit: Visit, log: LogPage) -> Response:
    app = await _open(visit)
    db = visit.services.db
    view = log.spec.read(visit.request.query_params, marked=True)
    where = None
    if not view.errors:
        try:
            where = _where(view)
        except Refusal as refusal:
            if not view.mark(refusal, FIELDS):
                raise
    total: int | None = None
    cap: int | None = None  # where the count stopped, when it was counted
    if where is None:
        found = NOTHING
    else:
        found = await _browse(visit, log, app, where, view.request)
        total = known_total(found, view.request)
        if total is None:
            total, cap = await logs.count(db, log.table, app.id, where), logs.count_cap(where)
    stored = total if where is not None and not view.values else await logs.count(db, log.table, app.id)
    identity = (await seller.caller(visit, app)).identity
    if log is TAMPER:  # the user each report came from, and whether it is banned now
        reporters = await tamper.users_of(db, app.id, found.rows)
        for row in found.rows:
            row["user"] = reporters.get(row["user_id"]) if row["user_id"] is not None else None
    quotas = visit.services.settings
    listed = view.listing(log.path(app), found, total, cap=cap)
    return visit.render(
        "logs/entries.html",
        status=400 if view.errors else 200,
        title=f"{log.title} · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        log=log,
        listing=listed,
        filter_url=lambda name, value: listed.url({**view.values, name: value}),
        path=log.path(app),
        stored=stored,
        cap=logs.COUNT_CAP,
        retention=app.app["log_retention_days"],
        settings_url=app.path("settings") + "/general#f-logretention"
        if permissions.allows(identity.permissions, "settings")
        else None,
        users_url=app.path("users") if permissions.allows(identity.permissions, "users") else None,
        tamper_ban=tamper.BAN_REASON_PREFIX,
        quota=quotas.log_lines_per_session if log is CLIENT else quotas.tamper_reports_per_session,
        forwarding=bool(app.app["log_webhook_url"]),
        tamper_action=app.app["tamper_action"],
    )


async def clear(visit: Visit, log: LogPage) -> Response:
    app = await _open(visit)
    ask = Question(
        title=f"Delete every one of the {log.what}?",
        message=f"All the application's {log.what} are removed. This cannot be undone.",
        button=f"Delete the {log.what}",
    )
    return await seller.act(
        visit,
        app,
        log.clear,
        {},
        done=f"Every one of the {log.what} is deleted.",
        back=log.path(app),
        ask=ask,
    )


async def clear_address(visit: Visit, log: LogPage) -> Response:
    """Delete the client logs sent from one address (`dellogsbyip`), once confirmed."""
    app = await _open(visit)
    ip = visit.form.get("ip").strip()
    ask = Question(
        title=f"Delete every log line sent from {ip}?",
        message="The lines this address sent are removed. This cannot be undone.",
        button="Delete them",
    )
    return await seller.act(
        visit,
        app,
        "dellogsbyip",
        {"ip": ip},
        done=f"The log lines from {ip} are deleted.",
        back=log.path(app),
        ask=ask,
    )


async def export(visit: Visit, log: LogPage) -> Response:
    """The filtered view as CSV or JSON, oldest first, streamed in keyset batches."""
    app = await _open(visit)
    view = log.spec.read(visit.request.query_params)
    where = _where(view)
    fmt = export_view.chosen_format(visit)
    if fmt is None:
        return export_view.refused(visit)
    rows = export_view.oldest_first(
        lambda request: _browse(visit, log, app, where, request), log.export_fields, by=SORT
    )
    return export_view.stream(visit, f"{log.slug}-{app.id}", fmt, rows, log.export_fields)


def _routes(log: LogPage) -> list[Route]:
    def bound(handler: Callable[[Visit, LogPage], Awaitable[Response]]) -> Handler:
        async def run(visit: Visit) -> Response:
            return await handler(visit, log)

        return run

    path = "/apps/{app_id:int}/" + log.slug
    routes = [
        Route(path, page(bound(listing)), methods=["GET"]),
        Route(path + "/clear", page(bound(clear)), methods=["POST"]),
        Route(path + "/export", page(bound(export)), methods=["GET"]),
    ]
    if log is CLIENT:  # tamper reports have no per-address deletion in the seller API
        routes.append(Route(path + "/clear-address", page(bound(clear_address)), methods=["POST"]))
    return routes


ROUTES = [*_routes(CLIENT), *_routes(TAMPER)]
