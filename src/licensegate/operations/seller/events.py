"""Seller API — Event webhooks: where the application's events are sent (signed, retried, logged;
docs/events.md), the delivery log, and redelivery."""

from __future__ import annotations

from typing import Any

from licensegate.domain import eventdelivery, eventendpoints, events
from licensegate.domain.eventendpoints import EndpointSpec
from licensegate.domain.permissions import Area
from licensegate.eventworker import courier_of
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Event webhooks"
AREA: Area = "webhooks"
ID = Param("id", "int", required=True, max_length=18, minimum=1, doc="the endpoint's id")
ENDPOINT_FIELDS = (
    "{id, url (scheme://host/path: never the query string or credentials), events (names; `all` "
    "first when every event that is not opt-in is wanted), format, enabled (0/1), include_keys "
    "(0/1), failures (consecutive failed deliveries), alerted (0/1: the owner was e-mailed about "
    "them), disabled_reason (null, or why delivery stopped)}"
)
EVENTS_DOC = (
    "`all` (every event that is not opt-in), or comma-separated event names (docs/events.md), or "
    "both (`all,user.logged_in`)"
)


def _spec_params(required: bool) -> list[Param]:
    return [
        Param(
            "url",
            required=required,
            max_length=eventendpoints.MAX_URL,
            secret=True,  # a Discord or Slack URL carries its token
            doc="the http(s) URL events are POSTed to; internal addresses are refused",
        ),
        Param("events", max_length=eventendpoints.MAX_EVENTS_TEXT, doc=EVENTS_DOC + " (default `all`)"),
        Param(
            "format",
            choices=eventendpoints.FORMATS,
            max_length=10,
            doc="`json` (default), or a ready-made `discord` or `slack` message",
        ),
        Param("enabled", "bool", max_length=5, doc="0: keep it but send nothing (default 1)"),
        Param("includekeys", "bool", max_length=5, doc="1: payloads carry full license keys (default 0)"),
    ]


def _spec(call: SellerCall) -> EndpointSpec:
    return EndpointSpec(
        url=call.args.opt_text("url"),
        events=call.args.opt_text("events"),
        format=call.args.opt_text("format"),
        enabled=call.args.opt_flag("enabled"),
        include_keys=call.args.opt_flag("includekeys"),
    )


@registry.operation(
    "addeventwebhook",
    group=GROUP,
    summary="Add Event Webhook",
    area=AREA,
    mutates=True,
    pinned=False,  # resolving the host must not hold a pooled connection
    params=_spec_params(required=True),
    returns={"id": "the endpoint's id", "endpoint": ENDPOINT_FIELDS},
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Add an endpoint. The URL must be http or https and must not lead to an internal address
    unless the operator allows it (400 `target_not_allowed`); a host name that does not resolve
    is refused too (400 `host_not_found`). An unknown event name: 400 `unknown_event`."""
    row = await eventendpoints.add(
        call.services.settings, call.db, call.services.secrets, call.app_id, _spec(call), call.now()
    )
    shown = eventendpoints.view(row)
    call.record(f"eventwebhook:{row['id']}", before=None, after=shown)
    await call.services.event_wants.changed(call.app_id)
    return {"message": "Successfully added event webhook!", "id": shown["id"], "endpoint": shown}


@registry.operation(
    "editeventwebhook",
    group=GROUP,
    summary="Edit Event Webhook",
    area=AREA,
    mutates=True,
    pinned=False,
    params=[ID, *_spec_params(required=False)],
    returns={"endpoint": ENDPOINT_FIELDS},
)
async def edit(call: SellerCall) -> dict[str, Any]:
    """Change what is given of an endpoint; what is not given stays. `enabled=1` on an endpoint
    that was disabled (by its owner or by a 410 answer) starts delivering again and clears its
    failure count."""
    before, after = await eventendpoints.edit(
        call.services.settings,
        call.db,
        call.services.secrets,
        call.app_id,
        call.args.integer("id"),
        _spec(call),
        call.now(),
    )
    shown_after = eventendpoints.view(after)
    if before["url"] != after["url"]:
        shown_after["url_changed"] = 1
    call.record(f"eventwebhook:{after['id']}", before=eventendpoints.view(before), after=shown_after)
    await call.services.event_wants.changed(call.app_id)
    return {"message": "Successfully edited event webhook!", "endpoint": eventendpoints.view(after)}


@registry.operation(
    "deleteeventwebhook",
    group=GROUP,
    summary="Delete Event Webhook",
    area=AREA,
    mutates=True,
    params=[ID],
    returns={"message": "`Successfully deleted event webhook!`"},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete an endpoint with its pending deliveries and its delivery log."""
    row = await eventendpoints.delete(call.db, call.app_id, call.args.integer("id"))
    call.record(f"eventwebhook:{row['id']}", before=eventendpoints.view(row), after=None)
    await call.services.event_wants.changed(call.app_id)
    return {"message": "Successfully deleted event webhook!"}


@registry.operation(
    "fetcheventwebhooks",
    group=GROUP,
    summary="Get Event Webhooks",
    area=AREA,
    returns={"endpoints": f"[{ENDPOINT_FIELDS}], oldest first", "catalogue": "{event name: description}"},
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """The application's endpoints, and the events there are (`catalogue`)."""
    rows = await eventendpoints.list_all(call.db, call.app_id)
    return {
        "message": "Successfully retrieved event webhooks",
        "endpoints": [eventendpoints.view(row) for row in rows],
        "catalogue": {
            name: kind.doc + (" (opt-in)" if kind.opt_in else "") for name, kind in events.CATALOGUE.items()
        },
    }


@registry.operation(
    "testeventwebhook",
    group=GROUP,
    summary="Test Event Webhook",
    area=AREA,
    mutates=True,  # the receiver acts on the call: the audit log says who made it
    pinned=False,  # the request must not hold a pooled connection
    params=[ID],
    returns={
        "status": "the receiver's HTTP status, or null when no reply came",
        "duration_ms": "how long the request took, in milliseconds",
        "error": "why it failed (null when a reply came)",
        "response": f"the start of the reply (at most {eventdelivery.EXCERPT_BYTES} bytes)",
    },
)
async def test(call: SellerCall) -> dict[str, Any]:
    """Send an `endpoint.test` event to the endpoint now, signed as every delivery is, and say how
    it went (a failure is still a success of this operation: `error` says why). It is not queued,
    retried or counted as a failure of the endpoint."""
    sent = await eventendpoints.test(courier_of(call.services), call.app_id, call.args.integer("id"))
    call.record(f"eventwebhook:{call.args.integer('id')}", after={"test": sent.status or sent.error})
    if sent.status is None:
        message = f"The test event failed after {sent.duration_ms} ms: {sent.error}"
    else:
        message = f"The receiver answered with HTTP status {sent.status} in {sent.duration_ms} ms."
    return {
        "message": message,
        "status": sent.status,
        "duration_ms": sent.duration_ms,
        "error": sent.error,
        "response": sent.excerpt or "",
    }


@registry.operation(
    "redeliverevent",
    group=GROUP,
    summary="Redeliver Event",
    area=AREA,
    mutates=True,
    params=[Param("event", required=True, max_length=64, doc="the event's id (`evt_...`)")],
    returns={"queued": "how many deliveries were queued (one per enabled endpoint it went to)"},
)
async def redeliver(call: SellerCall) -> dict[str, Any]:
    """Queue one event again, whatever became of it, to the enabled endpoints it was for; it keeps
    its id, so a receiver that has it already can tell. 404 `event_not_found` when no delivery of
    it is kept (older than the delivery log keeps, or for no enabled endpoint)."""
    queued = await eventendpoints.redeliver_event(call.db, call.app_id, call.args.text("event"), call.now())
    call.record(f"event:{call.args.text('event')}", after={"queued": queued})
    return {"message": f"Queued {queued} deliveries.", "queued": queued}


@registry.operation(
    "redeliverfailedevents",
    group=GROUP,
    summary="Redeliver Failed Events",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "since",
            "int",
            required=True,
            max_length=12,
            minimum=0,
            doc="Unix time: the failed deliveries of events made since then are queued again",
        )
    ],
    returns={"queued": "how many deliveries were queued"},
)
async def redeliver_failed(call: SellerCall) -> dict[str, Any]:
    """Queue again every failed delivery (to an endpoint still enabled) of the events made since
    `since`, each with its event's id."""
    queued = await eventendpoints.redeliver_failed(
        call.db, call.app_id, call.args.integer("since"), call.now()
    )
    call.record("events:failed", after={"since": call.args.integer("since"), "queued": queued})
    return {"message": f"Queued {queued} deliveries.", "queued": queued}


@registry.operation(
    "fetcheventdeliveries",
    group=GROUP,
    summary="Get Event Delivery Log",
    area=AREA,
    returns={
        "attempts": "[{time, event, type, endpoint, status, duration_ms, outcome (delivered | retry | failed "
        "| disabled), response (the first 2 KB of the answer), error}], newest first (at most "
        f"{eventendpoints.LOG_SHOWN})",
        "events": "[{event, type, time, pending, failed}], newest first",
    },
)
async def fetch_deliveries(call: SellerCall) -> dict[str, Any]:
    """The delivery log: every attempt, and the latest events with how many of their deliveries
    are still pending or failed."""
    attempts = await eventendpoints.delivery_log(call.db, call.app_id)
    recent = await eventendpoints.recent_events(call.db, call.app_id)
    return {
        "message": "Successfully retrieved the delivery log",
        "attempts": [
            {
                "time": row["created_at"],
                "event": row["event_id"],
                "type": row["name"],
                "endpoint": str(row["endpoint_id"]),
                "status": row["status"],
                "duration_ms": row["duration_ms"],
                "outcome": row["outcome"],
                "response": row["excerpt"],
                "error": row["error"],
            }
            for row in attempts
        ],
        "events": [
            {
                "event": row["event_id"],
                "type": row["name"],
                "time": row["created_at"],
                "pending": row["pending"],
                "failed": row["failed"],
            }
            for row in recent
        ],
    }
