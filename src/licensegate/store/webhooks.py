"""SQL for webhooks: outbound calls the client API's Webhook operation makes for an application.
The base URL may hold secrets; it leaves this module only for the outbound request."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor
from licensegate.store.paging import PageRequest, keyset

_COLUMNS = "id, webid, base_url, user_agent, authed, enabled, created_at"


class WebhookRow(TypedDict):
    """A row of `_COLUMNS` (`base_url` sealed, or in clear if stored before URLs were sealed)."""

    id: int
    webid: str
    base_url: str
    user_agent: str
    authed: int
    enabled: int  # 0: its URL must be entered again before a client may call it
    created_at: int


async def insert(
    db: Executor, *, app_id: int, webid: str, base_url: str, user_agent: str, authed: bool, now: int
) -> int:
    """Raises UniqueViolation when `webid` is taken in this application."""
    row_id: int = await db.fetch_value(
        "INSERT INTO webhooks (app_id, webid, base_url, user_agent, authed, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        app_id,
        webid,
        base_url,
        user_agent,
        1 if authed else 0,
        now,
    )
    return row_id


async def find(db: Executor, app_id: int, webid: str) -> WebhookRow | None:
    """One webhook (with its base URL), for the client API's Webhook operation."""
    row = await db.fetch_one(f"SELECT {_COLUMNS} FROM webhooks WHERE app_id = ? AND webid = ?", app_id, webid)
    return cast("WebhookRow | None", row)


async def list_for_app(db: Executor, app_id: int) -> list[WebhookRow]:
    rows = await db.fetch_all(f"SELECT {_COLUMNS} FROM webhooks WHERE app_id = ? ORDER BY id", app_id)
    return cast("list[WebhookRow]", rows)


async def update(
    db: Executor,
    app_id: int,
    webid: str,
    *,
    base_url: str | None,
    user_agent: str | None,
    authed: bool | None,
) -> int:
    """Change what is given (None: keep it); the number of rows changed (0: no such webhook). A
    new base URL enables a webhook that was disabled for want of one."""
    return await db.execute(
        "UPDATE webhooks SET base_url = COALESCE(?, base_url), user_agent = COALESCE(?, user_agent), "
        "authed = COALESCE(?, authed), enabled = CASE WHEN CAST(? AS TEXT) IS NULL THEN enabled ELSE 1 END "
        "WHERE app_id = ? AND webid = ?",
        base_url,
        user_agent,
        None if authed is None else (1 if authed else 0),
        base_url,
        app_id,
        webid,
    )


async def delete(db: Executor, app_id: int, webid: str) -> int:
    return await db.execute("DELETE FROM webhooks WHERE app_id = ? AND webid = ?", app_id, webid)


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM webhooks WHERE app_id = ?", app_id)


# --- the delivery log -----------------------------------------------------------------------

_DELIVERY_COLUMNS = "id, webid, source, method, status, duration_ms, error_code, error, excerpt, created_at"


class DeliveryRow(TypedDict):
    """A row of `_DELIVERY_COLUMNS`."""

    id: int
    webid: str
    source: str
    method: str
    status: int | None
    duration_ms: int
    error_code: str | None
    error: str | None
    excerpt: str | None
    created_at: int


async def add_delivery(
    db: Executor,
    app_id: int,
    *,
    webid: str,
    source: str,
    method: str,
    status: int | None,
    duration_ms: int,
    error_code: str | None,
    error: str | None,
    excerpt: str | None,
    now: int,
) -> None:
    await db.execute(
        "INSERT INTO webhook_deliveries (app_id, webid, source, method, status, duration_ms, error_code, "
        "error, excerpt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        app_id,
        webid,
        source,
        method,
        status,
        duration_ms,
        error_code,
        error,
        excerpt,
        now,
    )


async def prune_deliveries(db: Executor, app_id: int, keep: int) -> int:
    """Delete the application's entries older than its `keep` most recent: an index seek on
    (app_id, id) to the `keep`-th newest and a range delete below it (nothing while it holds
    fewer)."""
    return await db.execute(
        "DELETE FROM webhook_deliveries WHERE app_id = ? AND id < (SELECT id FROM webhook_deliveries "
        "WHERE app_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        app_id,
        app_id,
        keep - 1,
    )


async def browse_deliveries(
    db: Executor, app_id: int, *, webid: str | None, failed: bool, request: PageRequest
) -> list[DeliveryRow]:
    """One keyset page by id (`request.size + 1` rows, see `paging.finish`): of one webhook when
    `webid` is set, only the failed calls (no reply, or a status of 400 and above) with `failed`."""
    where, args = "app_id = ?", list[object]([app_id])
    if webid is not None:
        where += " AND webid = ?"
        args.append(webid)
    if failed:
        where += " AND (status IS NULL OR status >= 400)"
    after, after_args, order = keyset("id", request)
    rows = await db.fetch_all(
        f"SELECT {_DELIVERY_COLUMNS} FROM webhook_deliveries WHERE {where}{after} {order} LIMIT ?",
        *args,
        *after_args,
        request.size + 1,
    )
    return cast("list[DeliveryRow]", rows)


async def count_deliveries(db: Executor, app_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM webhook_deliveries WHERE app_id = ?", app_id)
    return total
