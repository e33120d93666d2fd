"""The seller log: the application's seller API calls (and the dashboard's, which run the same
operations) with the operation, its parameters (secrets removed when the entry was written), the
answer's status, the key that called, the address and the time; filtered by operation, status
and key, keyset paged, exported as filtered. It says when the application does not keep the log,
with the setting (`sellerlogs` of `updatesettings`) at hand; emptying it runs `delsellerlogs`."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import permissions, sellerkeys, sellerlog
from licensegate.domain.paging import Page, PageRequest
from licensegate.domain.permissions import Area
from licensegate.operations.seller import registry
from licensegate.web import export as export_view
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import NOTHING, Column, Filter, ListSpec, View
from licensegate.web.navigation import AppPage, Section, open_app, register
from licensegate.web.visit import Visit, page

AREA: Area = "logs"
SLUG = "seller-log"
register(Section("Seller log", SLUG, AREA))
EXPORT_FIELDS = ("id", "created_at", "operation", "params", "status", "key_name", "ip")
STATUS_NAMES = {
    200: "OK",
    400: "Bad request",
    401: "No valid key",
    403: "Refused",
    404: "Not found",
    409: "Conflict",
    429: "Rate limited",
    500: "Fault",
    503: "Unavailable",
}
# The statuses the seller operations declare: the only ones a logged call can have.
STATUSES = (
    ("", "Any status"),
    *(
        (str(status), f"{status} {STATUS_NAMES.get(status, '')}".strip())
        for status in sorted({status for op in registry for status in op.statuses})
    ),
)
OPERATIONS = (("", "Any operation"), *sorted((op.type, op.type) for op in registry))

SPEC = ListSpec(
    columns=(
        Column("created", "Time"),
        Column("operation", "Operation"),
        Column("params", "Parameters"),
        Column("status", "Status"),
        Column("key", "Key"),
        Column("ip", "Address"),
    ),
    filters=(
        Filter("operation", "Operation", "select", OPERATIONS),
        Filter("status", "Status", "select", STATUSES),
        Filter("key", "Key", "select"),
    ),
    default_sort="created",
    empty_text="No seller API calls recorded.",
)


async def _open(visit: Visit, *, marked: bool = False) -> tuple[AppPage, View, bool]:
    """The application, the view asked for (the key filter's choices are the application's keys;
    `marked`: a bad filter value kept with its message, for the list to show next to its field)
    and whether the signed-in account may change the application's settings."""
    app = await open_app(visit, int(visit.request.path_params["app_id"]), AREA)
    identity = (await seller.caller(visit, app)).identity
    keys = await sellerkeys.list_keys(visit.services.db, identity)
    choices = (
        ("", "Any key"),
        (sellerlog.NO_KEY, "None (signed in to the dashboard)"),
        *((key["id"], f"{key['name'] or '(no name)'} ({key['prefix']}…)") for key in keys),
    )
    view = SPEC.read(visit.request.query_params, {"key": choices}, marked=marked)
    return app, view, permissions.allows(identity.permissions, "settings")


async def _browse(visit: Visit, app: AppPage, view: View, request: PageRequest) -> Page:
    values = view.values
    return await sellerlog.browse(
        visit.services.db,
        app.id,
        operation=values.get("operation"),
        status=int(values["status"]) if "status" in values else None,
        key=values.get("key"),
        request=request,
    )


def _params_text(params: Any) -> str:
    return orjson.dumps(params).decode() if params else "—"


async def listing(visit: Visit) -> Response:
    app, view, may_set = await _open(visit, marked=True)
    found = NOTHING if view.errors else await _browse(visit, app, view, view.request)
    for row in found.rows:
        row["params_text"] = _params_text(row["params"])
    return visit.render(
        "logs/seller.html",
        status=400 if view.errors else 200,
        title=f"Seller log · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=view.listing(app.path(SLUG), found, None),
        path=app.path(SLUG),
        logging=bool(app.app["seller_log"]),
        may_set=may_set,
    )


async def switch(visit: Visit) -> Response:
    """Turn the seller log on or off (the application setting `sellerlogs`)."""
    app = await open_app(visit, int(visit.request.path_params["app_id"]), AREA)
    on = visit.form.get("on") == "1"
    done = "The seller log is on: every seller API call is recorded." if on else "The seller log is off."
    return await seller.act(
        visit, app, "updatesettings", {"sellerlogs": "1" if on else "0"}, done=done, back=app.path(SLUG)
    )


async def clear(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), AREA)
    ask = Question(
        title="Delete every entry of the seller log?",
        message="The record of past seller API calls is removed. This cannot be undone.",
        button="Delete the seller log",
    )
    return await seller.act(
        visit, app, "delsellerlogs", {}, done="The seller log is emptied.", back=app.path(SLUG), ask=ask
    )


async def export(visit: Visit) -> Response:
    """The filtered view as CSV or JSON, oldest first, streamed in keyset batches."""
    app, view, _may_set = await _open(visit)
    fmt = export_view.chosen_format(visit)
    if fmt is None:
        return export_view.refused(visit)
    rows = export_view.oldest_first(lambda request: _browse(visit, app, view, request), EXPORT_FIELDS)

    def flatten(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "params": orjson.dumps(row["params"]).decode()}

    return export_view.stream(visit, f"seller-log-{app.id}", fmt, rows, EXPORT_FIELDS, flatten)


PATH = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(PATH, page(listing), methods=["GET"]),
    Route(PATH + "/switch", page(switch), methods=["POST"]),
    Route(PATH + "/clear", page(clear), methods=["POST"]),
    Route(PATH + "/export", page(export), methods=["GET"]),
]
