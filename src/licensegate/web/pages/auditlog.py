"""The audit log (owner only: never managers or resellers): who changed what, the target, the
state before and after, from which address and when; filtered by actor, action and target (whole
values; each cell links to its filter), keyset paged, exported as filtered; and the hash chain
verified on the page ("intact since ..." or the entry where it breaks). Read through the domain
(`domain.audit`); nothing here changes the log, which no operation can edit."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import audit
from licensegate.domain.paging import Page, PageRequest
from licensegate.web import export as export_view
from licensegate.web.listing import NOTHING, Column, Filter, ListSpec, View
from licensegate.web.navigation import OWNER_ONLY, AppPage, Section, open_app, register
from licensegate.web.visit import Visit, page

SLUG = "audit-log"
register(Section("Audit log", SLUG, OWNER_ONLY))
EXPORT_FIELDS = ("id", "created_at", "actor", "action", "target", "before", "after", "ip")

SPEC = ListSpec(
    columns=(
        Column("created", "Time"),
        Column("actor", "Who"),
        Column("action", "What"),
        Column("target", "Target"),
        Column("change", "Before → after"),
        Column("ip", "Address"),
    ),
    filters=(
        Filter("actor", "Who", placeholder="As listed, e.g. alice (dashboard)", max_length=128),
        Filter(
            "action", "What", placeholder="An operation, e.g. adduser", max_length=audit.MAX_ACTION_FILTER
        ),
        Filter("target", "Target", placeholder="As listed, e.g. user:ann", max_length=256),
    ),
    default_sort="created",
    empty_text="No changes recorded yet.",
)


async def _open(visit: Visit, *, marked: bool = False) -> tuple[AppPage, View]:
    """The application and the view asked for (`marked`: a bad filter value kept with its
    message, for the list to show next to its field)."""
    app = await open_app(visit, int(visit.request.path_params["app_id"]), OWNER_ONLY)
    return app, SPEC.read(visit.request.query_params, marked=marked)


async def _browse(visit: Visit, app: AppPage, view: View, request: PageRequest) -> Page:
    values = view.values
    return await audit.browse(
        visit.services.db,
        app.id,
        actor=values.get("actor"),
        action=values.get("action"),
        target=values.get("target"),
        request=request,
    )


def _json(value: Any) -> str:
    return "—" if value is None else audit.to_json(value) or "—"


async def listing(visit: Visit, *, verified: audit.Verification | None = None) -> Response:
    app, view = await _open(visit, marked=True)
    found = NOTHING if view.errors else await _browse(visit, app, view, view.request)
    for row in found.rows:
        row["before_text"], row["after_text"] = _json(row["before"]), _json(row["after"])
    listed = view.listing(app.path(SLUG), found, None)
    return visit.render(
        "logs/audit.html",
        status=400 if view.errors else 200,
        title=f"Audit log · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        listing=listed,
        path=app.path(SLUG),
        verified=verified,
        filter_url=lambda name, value: listed.url({**view.values, name: value}),
    )


async def verify(visit: Visit) -> Response:
    """The list page with the chain walked from its first entry (the page asks for it as soon as
    it is shown; without script, its link)."""
    app, _view = await _open(visit)
    return await listing(visit, verified=await audit.verify(visit.services.db, app.id))


async def export(visit: Visit) -> Response:
    """The filtered view as CSV or JSON, oldest first, streamed in keyset batches."""
    app, view = await _open(visit)
    fmt = export_view.chosen_format(visit)
    if fmt is None:
        return export_view.refused(visit)
    rows = export_view.oldest_first(lambda request: _browse(visit, app, view, request), EXPORT_FIELDS)

    def flatten(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "before": audit.to_json(row["before"]), "after": audit.to_json(row["after"])}

    return export_view.stream(visit, f"audit-log-{app.id}", fmt, rows, EXPORT_FIELDS, flatten)


PATH = "/apps/{app_id:int}/" + SLUG
ROUTES = [
    Route(PATH, page(listing), methods=["GET"]),
    Route(PATH + "/verify", page(verify), methods=["GET"]),
    Route(PATH + "/export", page(export), methods=["GET"]),
]
