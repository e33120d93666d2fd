"""One user's (or one key's) timeline on the dashboard: the client's log lines, its tamper
reports and the audit entries of changes made to it, newest first, paged by position (the time,
kind and id of the last entry shown), so an old page costs what the first does.

A reseller sees the audit entries of its own changes only (the owner's and other team members'
actions on the application are not its business)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from licensegate.domain import errorcodes
from licensegate.store import timeline as store
from licensegate.store.database import Executor
from licensegate.store.timeline import Sources as Sources

PAGE = 25
KINDS = (store.LOG, store.TAMPER, store.AUDIT)
KIND_TEXT = {store.LOG: "Client log", store.TAMPER: "Tamper report", store.AUDIT: "Change"}


@dataclass(frozen=True, slots=True)
class Timeline:
    entries: list[dict[str, Any]]
    next_position: str | None  # where the next (older) page starts; None on the last page
    first: bool  # this is the newest page


def _position(text: str) -> store.Cursor | None:
    if not text:
        return None
    parts = text.split(".")
    bad = errorcodes.INVALID_VIEW("This page link is damaged; start again from the newest entries.")
    if len(parts) != 3 or parts[1] not in KINDS or not parts[0].isdigit() or not parts[2].isdigit():
        raise bad
    if len(parts[0]) > 18 or len(parts[2]) > 18:
        raise bad
    return store.Cursor(int(parts[0]), parts[1], int(parts[2]))


def _detail(entry: dict[str, Any]) -> str:
    """An audit entry's parameters as one line; log and tamper details as they are."""
    raw = entry["detail"]
    if entry["kind"] != store.AUDIT or not raw:
        return raw or ""
    try:
        after = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return str(raw)
    if isinstance(after, dict):
        return ", ".join(f"{k}={v}" for k, v in after.items())
    return str(after)


async def page(db: Executor, sources: Sources, position: str, size: int = PAGE) -> Timeline:
    cursor = _position(position)
    rows = await store.page(db, sources, cursor, size + 1)
    more = len(rows) > size
    entries = []
    for row in rows[:size]:
        entry = dict(row)
        entry["what"] = KIND_TEXT[entry["kind"]]
        entry["detail"] = _detail(entry)
        entries.append(entry)
    last = entries[-1] if entries else None
    following = f"{last['created_at']}.{last['kind']}.{last['id']}" if more and last else None
    return Timeline(entries, following, cursor is None)
