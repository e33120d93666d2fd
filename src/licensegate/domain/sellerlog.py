"""The seller log: when an application turns it on, every seller API call of that application
(successful or refused, once the caller is known) is kept with its time, client IP, operation,
parameters and answer status. Secrets never enter it; `redact` decides what is one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

import orjson

from licensegate.domain import errorcodes
from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.store import sellerlog as store
from licensegate.store.database import Executor
from licensegate.store.sellerlog import LoggedCall as LoggedCall  # the rows it lists

REDACTED = "[redacted]"
MAX_LOGGED_VALUE = 256  # longer values are cut, so one call cannot bloat the log
# Parameters whose names contain one of these carry credentials (passwords, keys, tokens, URLs
# that embed tokens): their values are never kept.
SECRET_NAME_PARTS = ("pass", "secret", "key", "url", "webhook", "token", "otp")
DROPPED = frozenset({"sellerkey", "type"})  # the credential itself, and the operation (kept apart)
# License keys and session ids are bearer secrets of end users: logs keep only their start,
# enough to tell them apart. `mask` is one: a mask without `*` is a custom key.
BEARER_NAMES = frozenset({"key", "keys", "mask", "sessid", "sessionid"})
LICENSE_KEY_SHOWN = 4
# A value shaped like a generated license key (four or more groups of letters and digits joined
# by dashes) under any name: a License Login user's username is its key, so `user` may carry one.
KEY_SHAPED = re.compile(r"[0-9A-Za-z]{4,}(?:-[0-9A-Za-z]{4,}){3,}")


def _is_secret_name(name: str) -> bool:
    lowered = name.lower()
    return any(part in lowered for part in SECRET_NAME_PARTS)


def shown_start(value: str) -> str:
    """The start of a bearer secret (a license key, a session id): enough to recognise it."""
    return value[:LICENSE_KEY_SHOWN] + "…" if value else value


def redact(
    params: Mapping[str, Any],
    secret_names: Collection[str] = (),
    *,
    max_value: int = MAX_LOGGED_VALUE,
) -> dict[str, Any]:
    """The parameters of a call as logs may keep them.

    Dropped: the seller key and `type`. Replaced by `[redacted]`: parameters declared secret
    (`secret_names`, aliases included), any parameter whose name suggests a credential, and any
    value that is a URL (URLs often embed tokens). License keys and session ids (`BEARER_NAMES`,
    and any value shaped like a generated key) keep their first four characters, enough to tell
    them apart. Absent (None) values are left out and long text is cut.
    """
    out: dict[str, Any] = {}
    for name, value in params.items():
        if value is None or name.lower() in DROPPED:
            continue
        if isinstance(value, str):
            if name in secret_names or "://" in value:
                out[name] = REDACTED
                continue
            if name.lower() in BEARER_NAMES or KEY_SHAPED.search(value):
                out[name] = shown_start(value)
                continue
            if _is_secret_name(name):
                out[name] = REDACTED
                continue
            out[name] = value if len(value) <= max_value else value[:max_value] + "…"
        elif name in secret_names or _is_secret_name(name):
            out[name] = REDACTED
        else:
            out[name] = value
    return out


async def record(
    db: Executor,
    *,
    app_id: int,
    ip: str | None,
    operation: str,
    params: Mapping[str, Any],
    status: int,
    now: int,
    key_id: int | None = None,
    key_name: str | None = None,
) -> None:
    """Append one call (made with the seller key `key_id` called `key_name`, or None: signed in
    to an account); `params` must already be redacted."""
    await store.insert(
        db,
        app_id=app_id,
        ip=ip,
        operation=operation,
        params=orjson.dumps(dict(params), default=str).decode(),
        status=status,
        now=now,
        key_id=key_id,
        key_name=key_name,
    )


async def page(db: Executor, app_id: int, *, limit: int, offset: int) -> tuple[list[LoggedCall], int]:
    """Newest first (`params` as stored, JSON), with the number of entries in all."""
    return await store.page(db, app_id, limit, offset), await store.count(db, app_id)


NO_KEY = "none"  # the key filter's value for calls made signed in to an account


async def browse(
    db: Executor,
    app_id: int,
    *,
    operation: str | None = None,
    status: int | None = None,
    key: str | None = None,
    request: PageRequest,
) -> Page:
    """A keyset page of the application's seller log by id (newest first by default), optionally
    of one operation, one answer status and/or one key (a key's id, or `NO_KEY`)."""
    if key is not None and key != NO_KEY and not (key.isascii() and key.isdigit()):
        raise errorcodes.INVALID_VIEW("The key filter is a key's id.")
    rows = await store.browse(
        db,
        app_id,
        operation=operation,
        status=status,
        key_id=int(key) if key is not None and key != NO_KEY else None,
        without_key=key == NO_KEY,
        request=request,
    )
    shown = [
        {
            "id": row["id"],
            "ip": row["ip"],
            "operation": row["operation"],
            "params": orjson.loads(row["params"]),
            "status": row["status"],
            "created_at": row["created_at"],
            "key_id": row["key_id"],
            "key_name": row["key_name"],
        }
        for row in rows
    ]
    return finish(shown, request)


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)
