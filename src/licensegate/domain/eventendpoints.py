"""The event webhook endpoints of an application, as its owner manages them: where events go
(an http(s) URL the guarded outbound client accepts, sealed at rest: a Discord or Slack URL
carries its token), which events (all, or named ones), in which format, whether payloads carry
full license keys; the delivery log and redelivery."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate import outbound
from licensegate.config import Settings
from licensegate.domain import errorcodes, eventdelivery, events
from licensegate.secretbox import SecretBox
from licensegate.store import events as store
from licensegate.store.database import Executor
from licensegate.store.events import AttemptRow as AttemptRow
from licensegate.store.events import EndpointRow as EndpointRow
from licensegate.store.events import EventRow as EventRow

FORMATS = ("json", "discord", "slack")
MAX_URL = 2048
MAX_EVENTS_TEXT = 2000
MAX_ENDPOINTS = 20
LOG_SHOWN = 200
ALL_WORDS = frozenset({"all", "*"})


def parse_events(text: str) -> str:
    """ "all" (every event that is not opt-in), or comma-separated names, or both ("all,
    user.logged_in"): the stored form ("*" and/or ",name,name,")."""
    names: list[str] = []
    every = False
    for part in text.split(","):
        name = part.strip()
        if not name:
            continue
        if name.lower() in ALL_WORDS:
            every = True
            continue
        if not events.known(name):
            raise errorcodes.UNKNOWN_EVENT(name=name, param="events")
        if name not in names:
            names.append(name)
    if not every and not names:
        raise errorcodes.UNKNOWN_EVENT("Name at least one event, or all.", param="events")
    listed = "," + ",".join(names) + "," if names else ""
    return (store.ALL if every else "") + listed


def shown_events(stored: str) -> list[str]:
    """The stored form as names, "all" first when set."""
    names = [name for name in stored.lstrip(store.ALL).split(",") if name]
    return (["all"] if stored.startswith(store.ALL) else []) + names


async def check_url(settings: Settings, url: str) -> str:
    """Refuse what the outbound client would refuse (not http(s), an internal address unless the
    operator allows it, a host that does not resolve); returns the URL as shown (no query, no
    credentials)."""
    if len(url) > MAX_URL:
        raise errorcodes.PARAMETER_TOO_LONG(name="url", max_length=MAX_URL, param="url")
    try:
        await outbound.check(settings, url)
    except outbound.OutboundError as exc:
        raise errorcodes.by_code(exc.error)(f"This URL cannot be used: {exc.message}", param="url") from exc
    return outbound.short_url(url)


@dataclass(frozen=True)
class EndpointSpec:
    url: str | None
    events: str | None
    format: str | None
    enabled: bool | None
    include_keys: bool | None


async def add(
    settings: Settings, db: Executor, box: SecretBox, app_id: int, spec: EndpointSpec, now: int
) -> EndpointRow:
    if spec.url is None:
        raise errorcodes.MISSING_PARAMETER(name="url", param="url")
    shown = await check_url(settings, spec.url)
    if await store.count_endpoints(db, app_id) >= MAX_ENDPOINTS:
        raise errorcodes.TOO_MANY_EVENT_ENDPOINTS(limit=MAX_ENDPOINTS)
    values = store.EndpointValues(
        url=box.seal(spec.url, eventdelivery.URL_PURPOSE),
        url_shown=shown,
        events=parse_events(spec.events or "all"),
        format=spec.format or "json",
        enabled=True if spec.enabled is None else spec.enabled,
        include_keys=bool(spec.include_keys),
    )
    endpoint_id = await store.insert_endpoint(db, app_id, values, now)
    return await get(db, app_id, endpoint_id)


async def get(db: Executor, app_id: int, endpoint_id: int) -> EndpointRow:
    row = await store.find_endpoint(db, app_id, endpoint_id)
    if row is None:
        raise errorcodes.EVENT_ENDPOINT_NOT_FOUND(endpoint=endpoint_id)
    return row


async def edit(
    settings: Settings,
    db: Executor,
    box: SecretBox,
    app_id: int,
    endpoint_id: int,
    spec: EndpointSpec,
    now: int,
) -> tuple[EndpointRow, EndpointRow]:
    """Change what is given; enabling an endpoint again clears its failure count. Returns the
    endpoint before and after."""
    before = await get(db, app_id, endpoint_id)
    if spec.url is not None:
        shown = await check_url(settings, spec.url)
        url = box.seal(spec.url, eventdelivery.URL_PURPOSE)
    else:
        shown, url = before["url_shown"], before["url"]
    values = store.EndpointValues(
        url=url,
        url_shown=shown,
        events=before["events"] if spec.events is None else parse_events(spec.events),
        format=spec.format or before["format"],
        enabled=bool(before["enabled"]) if spec.enabled is None else spec.enabled,
        include_keys=bool(before["include_keys"]) if spec.include_keys is None else spec.include_keys,
    )
    await store.update_endpoint(db, app_id, endpoint_id, values, now)
    return before, await get(db, app_id, endpoint_id)


async def delete(db: Executor, app_id: int, endpoint_id: int) -> EndpointRow:
    row = await get(db, app_id, endpoint_id)
    await store.delete_endpoint(db, app_id, endpoint_id)
    return row


async def list_all(db: Executor, app_id: int) -> list[EndpointRow]:
    return await store.list_endpoints(db, app_id)


def view(row: EndpointRow) -> dict[str, Any]:
    """An endpoint as the seller API and the audit log show it: never the whole URL."""
    return {
        "id": str(row["id"]),
        "url": row["url_shown"],
        "events": shown_events(row["events"]),
        "format": row["format"],
        "enabled": row["enabled"],
        "include_keys": row["include_keys"],
        "failures": row["failures"],
        "alerted": 0 if row["alerted_at"] is None else 1,
        "disabled_reason": row["disabled_reason"],
    }


async def test(courier: eventdelivery.Courier, app_id: int, endpoint_id: int) -> eventdelivery.Sent:
    """Send an `endpoint.test` event to this endpoint now (signed as every delivery is; it is not
    queued, retried or logged) and say how it went."""
    endpoint = await get(courier.db, app_id, endpoint_id)
    return await eventdelivery.send_test(courier, endpoint)


async def redeliver_event(db: Executor, app_id: int, event_id: str, now: int) -> int:
    """Queue one event again to its enabled endpoints, with the same id; returns how many deliveries."""
    queued = await store.redeliver_event(db, app_id, event_id, now)
    if not queued:
        raise errorcodes.EVENT_NOT_FOUND(event=event_id)
    return queued


async def redeliver_failed(db: Executor, app_id: int, since: int, now: int) -> int:
    """Queue again every failed delivery of the events made since `since`; returns how many."""
    return await store.redeliver_failed(db, app_id, since, now)


async def delivery_log(db: Executor, app_id: int, limit: int = LOG_SHOWN) -> list[AttemptRow]:
    return await store.attempts_page(db, app_id, limit=limit)


async def recent_events(db: Executor, app_id: int, limit: int = LOG_SHOWN) -> list[EventRow]:
    return await store.events_page(db, app_id, limit=limit)
