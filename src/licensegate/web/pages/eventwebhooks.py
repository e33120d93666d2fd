"""Event webhooks: where the application's events are sent (docs/events.md). Endpoints listed
with their URL as scheme://host/path, the events they want, the format, whether they are enabled
(and why not: a 410 answer), their consecutive failures and whether the owner was e-mailed about
them; added, edited (a new URL replaces the old one; enabling again clears the failures), tested,
disabled and deleted; the delivery log (every attempt); the latest events, each redelivered with
its id; and every failed delivery since a time, redelivered. Every change runs the seller
operation of the same effect (`addeventwebhook`, `editeventwebhook`, `testeventwebhook`,
`deleteeventwebhook`, `redeliverevent`, `redeliverfailedevents`)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import eventendpoints, events
from licensegate.domain.errors import Refusal
from licensegate.operations.seller.events import AREA
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.visit import Visit, page

SLUG = "event-webhooks"
register(Section("Event webhooks", SLUG, AREA))
FORMATS = (("json", "JSON (signed envelope)"), ("discord", "Discord message"), ("slack", "Slack message"))
FIELDS = {
    "url": "url",
    "invalid_url": "url",
    "unsupported_scheme": "url",
    "target_not_allowed": "url",
    "host_not_found": "url",
    "timeout": "url",
    "events": "events",
    "unknown_event": "events",
    "format": "format",
}
HOURS_BACK = 24  # the redeliver-failed form's default window


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


def _endpoint(app: AppPage, row: eventendpoints.EndpointRow) -> dict[str, Any]:
    shown = eventendpoints.view(row)
    shown["events_text"] = ", ".join(shown["events"])
    shown["href"] = app.path(f"{SLUG}/{row['id']}")
    return shown


async def listing(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    db = visit.services.db
    form = visit.form
    return visit.render(
        "eventwebhooks/list.html",
        status=status,
        title=f"Event webhooks · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        endpoints=[_endpoint(app, row) for row in await eventendpoints.list_all(db, app.id)],
        attempts=await eventendpoints.delivery_log(db, app.id, 50),
        recent=await eventendpoints.recent_events(db, app.id, 50),
        catalogue=[(name, kind.doc, kind.opt_in) for name, kind in events.CATALOGUE.items()],
        formats=FORMATS,
        alert_after=visit.services.settings.event_alert_failures,
        path=app.path(SLUG),
        errors=errors,
        form={
            "url": form.get("url"),
            "events": form.get("events") or "all",
            "format": form.get("format") or "json",
        },
    )


def _spec_params(visit: Visit) -> dict[str, str]:
    form = visit.form
    params = {
        "events": form.get("events").strip() or "all",
        "format": form.get("format").strip() or "json",
        "includekeys": "1" if form.get("includekeys") == "1" else "0",
    }
    if form.get("url").strip():
        params["url"] = form.get("url").strip()
    return params


async def create(visit: Visit) -> Response:
    app = await _open(visit)
    try:
        body = await seller.run(visit, app, "addeventwebhook", _spec_params(visit))
    except Refusal as refusal:
        return await listing(visit, seller.refused(app, refusal, FIELDS))
    visit.flash(f"The event webhook {body['id']} is added: events are sent to {body['endpoint']['url']}.")
    return visit.redirect(app.path(SLUG))


def _id(visit: Visit) -> str:
    return str(int(visit.request.path_params["endpoint_id"]))


async def edit(visit: Visit) -> Response:
    app = await _open(visit)
    params = {
        "id": _id(visit),
        **_spec_params(visit),
        "enabled": "1" if visit.form.get("enabled") == "1" else "0",
    }
    try:
        await seller.run(visit, app, "editeventwebhook", params)
    except Refusal as refusal:
        return await listing(visit, seller.refused(app, refusal, FIELDS))
    visit.flash(f"The event webhook {params['id']} is saved.")
    return visit.redirect(app.path(SLUG))


async def test(visit: Visit) -> Response:
    app = await _open(visit)
    body = await seller.run(visit, app, "testeventwebhook", {"id": _id(visit)})
    visit.flash(f"Test event to webhook {_id(visit)}: {body['message']}")
    return visit.redirect(app.path(SLUG))


async def delete(visit: Visit) -> Response:
    app = await _open(visit)
    endpoint_id = _id(visit)
    ask = Question(
        title=f"Delete the event webhook {endpoint_id}?",
        message="No event is sent to it any more; its pending deliveries and its delivery log go with it.",
        button=f"Delete event webhook {endpoint_id}",
        back=app.path(SLUG),
    )
    return await seller.act(
        visit,
        app,
        "deleteeventwebhook",
        {"id": endpoint_id},
        done=f"The event webhook {endpoint_id} is deleted.",
        back=app.path(SLUG),
        ask=ask,
    )


async def redeliver(visit: Visit) -> Response:
    app = await _open(visit)
    event_id = visit.form.get("event").strip()[:64]
    return await seller.act(
        visit,
        app,
        "redeliverevent",
        {"event": event_id},
        done=lambda body: f"The event {event_id} is queued again ({body['queued']} deliveries), with its id.",
        back=app.path(SLUG),
    )


async def redeliver_failed(visit: Visit) -> Response:
    app = await _open(visit)
    raw = visit.form.get("hours").strip()
    hours = int(raw) if raw.isdigit() and 0 < int(raw) <= 24 * 30 else HOURS_BACK
    since = visit.now() - hours * 3600
    return await seller.act(
        visit,
        app,
        "redeliverfailedevents",
        {"since": str(since)},
        done=lambda body: f"{body['queued']} failed deliveries of the last {hours} hours are queued again.",
        back=app.path(SLUG),
    )


PATH = "/apps/{app_id:int}/" + SLUG
ENDPOINT = PATH + "/{endpoint_id:int}"
ROUTES = [
    Route(PATH, page(listing), methods=["GET"]),
    Route(PATH, page(create), methods=["POST"]),
    Route(PATH + "/redeliver", page(redeliver), methods=["POST"]),
    Route(PATH + "/redeliver-failed", page(redeliver_failed), methods=["POST"]),
    Route(ENDPOINT + "/edit", page(edit), methods=["POST"]),
    Route(ENDPOINT + "/test", page(test), methods=["POST"]),
    Route(ENDPOINT + "/delete", page(delete), methods=["POST"]),
]
