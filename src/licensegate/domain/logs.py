"""Logs a client program sends (KeyAuth's `log()`): stored with the session's credential, the
client's address and the time, and, when the owner set a forwarding URL, posted to it as a
Discord-compatible message after the response, retried a few times, never slowing the call.

The owner lists them newest first, filtered by credential (username or license key), by IP, by
an inclusive time range and (in the dashboard) by text they hold (the tamper log is filtered the
same way), and clears them."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, cast

import orjson

from licensegate import outbound
from licensegate.background import AttemptFailed, Background
from licensegate.config import Settings
from licensegate.domain import errorcodes
from licensegate.domain.blacklists import parse_ip
from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.store import apps as app_store
from licensegate.store import logs as store
from licensegate.store import sessions as session_store
from licensegate.store import tamper as tamper_store
from licensegate.store.database import Executor, Row
from licensegate.store.logs import LogFilter as LogFilter  # re-exported for handlers
from licensegate.store.logs import LogRow as LogRow  # the rows it lists
from licensegate.store.logs import LogTable as LogTable  # which log a listing reads

CLIENT_LOGS = store.CLIENT_LOGS

SECONDS_PER_DAY = 86400
MAX_MESSAGE = 1000
MAX_PCUSER = 64
TITLE_LIMIT = 256  # Discord refuses an embed title longer than this
TITLE_PREFIX = "Log: "
NOT_GIVEN = "N/A"  # a Discord field's value must not be empty
FORWARD_DELAYS = (0.0, 2.0, 10.0)  # read at call time, so tests can shorten them
FORWARD_REPLY_BYTES = 64 * 1024  # the reply is not used; a little is read so the call completes


async def record(
    db: Executor,
    app_id: int,
    *,
    session_id: str,
    quota: int,
    credential: str | None,
    pcuser: str | None,
    message: str,
    ip: str,
    now: int,
) -> int:
    """Store a log line, counted against the session's quota of `quota` lines (403
    `log_quota_exceeded` past it: a program that logs in a loop cannot fill the database)."""
    if not await session_store.count_stored(db, session_id, session_store.LOG_LINES, quota):
        raise errorcodes.LOG_QUOTA_EXCEEDED(what="log lines", quota=quota)
    return await store.insert(
        db, app_id, credential=credential, pcuser=pcuser, message=message, ip=ip, now=now
    )


# --- retention ----------------------------------------------------------------------------------

PURGE_BATCH = 250  # rows per DELETE: each write stays short (on SQLite, the event loop waits for it)
PURGE_BATCHES = 400  # per table and application per sweep; the next sweep goes on


async def purge_expired(db: Executor, now: int) -> int:
    """Delete the client logs and tamper reports each application keeps no longer (its
    `log_retention_days`), in batches. Returns how many rows went."""
    deleted = 0
    for app in await app_store.retention(db):
        before = now - app["log_retention_days"] * SECONDS_PER_DAY
        for table in (store.CLIENT_LOGS, tamper_store.TAMPER_LOGS):
            for _batch in range(PURGE_BATCHES):
                gone = await store.delete_older(db, table, app["id"], before, PURGE_BATCH)
                deleted += gone
                if gone < PURGE_BATCH:
                    break
                await asyncio.sleep(0)  # the requests waiting meanwhile go first
    return deleted


def discord_message(
    *, message: str, credential: str | None, pcuser: str | None, ip: str, now: int
) -> dict[str, Any]:
    """The forwarded JSON: one embed whose title is the log line (cut to Discord's limit) and
    whose fields say who sent it. Values are sent as they are; JSON escaping is enough."""
    return {
        "content": None,
        "embeds": [
            {
                "title": (TITLE_PREFIX + message)[:TITLE_LIMIT],
                "fields": [
                    {"name": "Credential", "value": credential or NOT_GIVEN},
                    {"name": "PC user", "value": pcuser or NOT_GIVEN, "inline": True},
                    {"name": "IP", "value": ip, "inline": True},
                ],
                "timestamp": datetime.fromtimestamp(now, UTC).isoformat(),
            }
        ],
    }


async def post(settings: Settings, url: str, payload: dict[str, Any]) -> None:
    """One attempt at posting `payload`; a 2xx reply is success. Failures raise AttemptFailed
    with the error code or status only: the URL holds the webhook's token, and not even its host
    is logged."""
    try:
        reply = await outbound.request(
            settings,
            "POST",
            url,
            headers={"content-type": "application/json"},
            body=orjson.dumps(payload),
            max_bytes=FORWARD_REPLY_BYTES,
        )
    except outbound.OutboundError as exc:
        raise AttemptFailed(f"the request failed ({exc.error})") from None
    if not reply.ok:
        raise AttemptFailed(f"the forwarding URL answered with HTTP status {reply.status}")


def forward_later(
    background: Background, settings: Settings, app_id: int, url: str, payload: dict[str, Any]
) -> None:
    """Post `payload` to the application's forwarding URL after the response, with retries."""

    async def attempt() -> None:
        await post(settings, url, payload)

    background.run_later(attempt, what=f"log forwarding for application {app_id}", delays=FORWARD_DELAYS)


# --- the owner's view -------------------------------------------------------------------------


def log_filter(
    *,
    credential: str | None = None,
    ip: str | None = None,
    since: int | None = None,
    until: int | None = None,
    search: str | None = None,
) -> LogFilter:
    """The filter of a listing; the IP is compared in canonical form."""
    if since is not None and until is not None and since > until:
        raise errorcodes.INVALID_TIME_RANGE(param="to")
    return LogFilter(
        credential=credential,
        ip=parse_ip(ip) if ip is not None else None,
        since=since,
        until=until,
        search=search,
    )


async def listing(
    db: Executor,
    table: LogTable,
    app_id: int,
    where: LogFilter,
    *,
    limit: int,
    offset: int,
) -> tuple[list[Row], int]:
    """One page of a log table, newest first, and how many rows the filter matches in all
    (client logs here; tamper reports in `domain.tamper`)."""
    rows = await store.page(db, table, app_id, where, limit=limit, offset=offset)
    return rows, await store.count(db, table, app_id, where)


COUNT_CAP = 10_000  # a page counts this far; beyond, it says "more than"
# A search is counted by reading the text of each row until this many match: 10,000 matches of
# a common word took 135 ms of 150 on PostgreSQL at 1,000,000 lines.
SEARCH_COUNT_CAP = 1_000


async def browse(db: Executor, table: LogTable, app_id: int, where: LogFilter, request: PageRequest) -> Page:
    """A keyset page of a log table (client logs or tamper reports), newest first by default."""
    return finish(await store.browse(db, table, app_id, where, request), request)


def count_cap(where: LogFilter | None) -> int:
    """How far a listing with this filter counts before it says "more than"."""
    return SEARCH_COUNT_CAP if where is not None and where.search is not None else COUNT_CAP


async def count(db: Executor, table: LogTable, app_id: int, where: LogFilter | None = None) -> int:
    """How many rows of a log table match `where` (all of them without), counted up to
    `count_cap(where)` + 1."""
    return await store.count(db, table, app_id, where or LogFilter(), count_cap(where))


async def list_page(
    db: Executor, app_id: int, where: LogFilter, *, limit: int, offset: int
) -> tuple[list[LogRow], int]:
    rows, total = await listing(db, store.CLIENT_LOGS, app_id, where, limit=limit, offset=offset)
    return cast("list[LogRow]", rows), total


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, store.CLIENT_LOGS, app_id)


async def delete_by_ip(db: Executor, app_id: int, ip: str) -> tuple[str, int]:
    """Delete the logs sent from this address; returns the canonical address and the count."""
    canonical = parse_ip(ip)
    return canonical, await store.delete_by_ip(db, app_id, canonical)
