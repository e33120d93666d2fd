"""SQL for webhooks: outbound calls the client API's Webhook operation makes for an application.
The base URL may hold secrets; it leaves this module only for the outbound request."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor

_COLUMNS = "id, webid, base_url, user_agent, authed, created_at"


class WebhookRow(TypedDict):
    """A row of `_COLUMNS` (`base_url` sealed, or in clear if stored before URLs were sealed)."""

    id: int
    webid: str
    base_url: str
    user_agent: str
    authed: int
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


async def delete(db: Executor, app_id: int, webid: str) -> int:
    return await db.execute("DELETE FROM webhooks WHERE app_id = ? AND webid = ?", app_id, webid)


async def delete_all(db: Executor, app_id: int) -> int:
    return await db.execute("DELETE FROM webhooks WHERE app_id = ?", app_id)
