"""Tamper reports a client program sends when it detects tampering (a debugger, a patched file,
...): recorded in the tamper log and, when the application's `tamper_action` is `ban` and the
session is logged in, answered by banning the user, blacklisting the HWID sent and ending the
user's sessions. The owner lists them (filtered as client logs are) and clears them."""

from __future__ import annotations

from typing import Any, cast

from licensegate.domain import errorcodes, events, logs, users
from licensegate.domain.apps import ClientApp
from licensegate.domain.logs import LogFilter
from licensegate.store import blacklists as blacklist_store
from licensegate.store import logs as log_store
from licensegate.store import sessions as session_store
from licensegate.store import tamper as store
from licensegate.store import users as user_store
from licensegate.store.database import Database, Executor
from licensegate.store.tamper import TamperRow as TamperRow  # the rows it lists

TAMPER_LOGS = store.TAMPER_LOGS

MAX_REASON = 256
MAX_HWID = 256
MAX_DETAILS = 2000
BAN = "ban"
TAMPER_DETECTION = "tamper detection"  # who its bans blacklist as
BAN_REASON_PREFIX = "Tamper detected: "


async def report(
    db: Database,
    app: ClientApp,
    *,
    session_id: str,
    quota: int,
    user_id: int | None,
    credential: str | None,
    hwid: str | None,
    ip: str,
    reason: str,
    details: str | None,
    now: int,
) -> bool:
    """Record the report; returns whether the user was banned for it. `user_id` is the logged-in
    session's user (None before a login: then it is only recorded). Each session may record
    `quota` reports (403 `log_quota_exceeded` past it)."""
    ban = app.tamper_action == BAN and user_id is not None
    ban_reason = (BAN_REASON_PREFIX + reason)[:MAX_REASON]
    async with db.transaction() as tx:
        if not await session_store.count_stored(tx, session_id, session_store.TAMPER_REPORTS, quota):
            raise errorcodes.LOG_QUOTA_EXCEEDED(what="tamper reports", quota=quota)
        await store.insert(
            tx,
            app.id,
            user_id=user_id,
            credential=credential,
            hwid=hwid,
            ip=ip,
            reason=reason,
            details=details,
            now=now,
        )
        # The user's name, not the session's credential (a License Login's key, masked with it).
        who = (
            None
            if user_id is None
            else users.event_user(await user_store.find_by_id(tx, app.id, user_id), user_id)
        )
        await events.record(
            tx,
            app.id,
            "tamper.reported",
            now,
            {
                "user": who,
                "reason": reason,
                "ip": ip,
                "banned": ban,
            },
        )
        if ban:
            assert user_id is not None
            # Also their HWIDs and last IP, and their sessions end.
            await users.ban(tx, app.id, user_id, ban_reason, now, blacklist_as=TAMPER_DETECTION)
            if hwid:
                await blacklist_store.add(
                    tx,
                    app.id,
                    users.HWID,
                    hwid,
                    ban_reason,
                    now,
                    added_by=TAMPER_DETECTION,
                    banned_user_id=user_id,
                )
    return ban


# --- the owner's view -------------------------------------------------------------------------


async def list_page(
    db: Executor, app_id: int, where: LogFilter, *, limit: int, offset: int
) -> tuple[list[TamperRow], int]:
    rows, total = await logs.listing(db, store.TAMPER_LOGS, app_id, where, limit=limit, offset=offset)
    return cast("list[TamperRow]", rows), total


async def users_of(db: Executor, app_id: int, rows: list[dict[str, Any]]) -> dict[int, store.ReportingUser]:
    """The users a page of reports came from, by id; a ban this service made for a report says
    so in its reason (`BAN_REASON_PREFIX`)."""
    ids = sorted({row["user_id"] for row in rows if row.get("user_id") is not None})
    return {user["id"]: user for user in await store.users_of(db, app_id, ids)}


async def delete_all(db: Executor, app_id: int) -> int:
    return await log_store.delete_all(db, store.TAMPER_LOGS, app_id)
