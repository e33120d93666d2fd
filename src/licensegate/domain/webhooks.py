"""Webhooks: a base URL the server calls on a client's behalf (the client API's Webhook), so the
URL and any secret in it stay on the server. The base URL is never shown again in full: seller
responses carry only `short_baselink` (scheme, host and path) and the audit log only its host.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from licensegate import ids, outbound
from licensegate.config import Settings
from licensegate.domain.errors import Conflict, Invalid, NotFound
from licensegate.store import webhooks as store
from licensegate.store.database import Executor, Row, UniqueViolation

MAX_URL = 2048
MAX_USER_AGENT = 128
MAX_WEBID = 32
DEFAULT_USER_AGENT = "licensegate"
GENERATED_WEBID_LENGTH = 10
ID_ATTEMPTS = 10
_WEBID = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_WEBID}}}")


def new_webid() -> str:
    return "".join(secrets.choice(ids.ALNUM) for _ in range(GENERATED_WEBID_LENGTH))


def shape(row: Row) -> dict[str, Any]:
    return {
        "webid": row["webid"],
        "short_baselink": outbound.short_url(row["base_url"]),
        "useragent": row["user_agent"],
        "authed": 1 if row["authed"] else 0,
    }


def audit_view(row: Row) -> dict[str, Any]:
    """What the audit log keeps: the host only, never the URL (it may carry secrets)."""
    return {
        "webid": row["webid"],
        "host": _host(row["base_url"]),
        "useragent": row["user_agent"],
        "authed": 1 if row["authed"] else 0,
    }


def _host(url: str) -> str | None:
    try:
        return outbound.parse_url(url).host
    except outbound.OutboundError:
        return None


def check_user_agent(value: str) -> str:
    # It becomes a request header: no line breaks or other control characters.
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise Invalid("The user agent must not contain control characters.", "invalid_user_agent")
    return value


async def check_base_url(settings: Settings, url: str) -> None:
    """Refuse a URL the outbound module would refuse: not http(s), an internal target (unless
    the operator allows it), or a host name that does not resolve."""
    if len(url) > MAX_URL:
        raise Invalid(f"The base URL must be at most {MAX_URL} characters.", "parameter_too_long")
    try:
        await outbound.check(settings, url)
    except outbound.OutboundError as exc:
        raise Invalid(f"This base URL cannot be used: {exc.message}", exc.error) from exc


async def add(
    settings: Settings,
    db: Executor,
    app_id: int,
    *,
    base_url: str,
    user_agent: str | None,
    authed: bool,
    webid: str | None,
    now: int,
) -> Row:
    """Add a webhook under `webid` (given: it must be new; omitted: 10 random letters and digits)."""
    if webid is not None and not _WEBID.fullmatch(webid):
        raise Invalid(f"A webhook id is 1 to {MAX_WEBID} letters, digits, '_' or '-'.", "invalid_webid")
    agent = check_user_agent(user_agent) if user_agent else DEFAULT_USER_AGENT
    await check_base_url(settings, base_url)
    for _ in range(1 if webid is not None else ID_ATTEMPTS):
        chosen = webid or new_webid()
        try:
            await store.insert(
                db, app_id=app_id, webid=chosen, base_url=base_url, user_agent=agent, authed=authed, now=now
            )
        except UniqueViolation:
            continue
        row = await store.find(db, app_id, chosen)
        assert row is not None
        return row
    if webid is not None:
        raise Conflict(f"A webhook with id '{webid}' already exists.", "webhook_exists")
    raise RuntimeError("no free webhook id after several attempts")


async def get(db: Executor, app_id: int, webid: str) -> Row:
    row = await store.find(db, app_id, webid)
    if row is None:
        raise NotFound(f"No webhook with id '{webid}' exists.", "webhook_not_found")
    return row


async def list_all(db: Executor, app_id: int) -> list[dict[str, Any]]:
    return [shape(row) for row in await store.list_for_app(db, app_id)]


async def delete(db: Executor, app_id: int, webid: str) -> Row:
    before = await get(db, app_id, webid)
    if not await store.delete(db, app_id, webid):
        raise NotFound(f"No webhook with id '{webid}' exists.", "webhook_not_found")
    return before


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)
