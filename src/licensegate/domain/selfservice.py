"""What a logged-in user can do to their own account from the client: change their username,
and ban themselves (the client's tamper response)."""

from __future__ import annotations

from collections.abc import Callable

from licensegate.domain import users as user_rules
from licensegate.domain.clientapp import ClientApp
from licensegate.domain.errors import Conflict, Forbidden
from licensegate.domain.logins import check_new_username
from licensegate.store import apps as app_store
from licensegate.store import blacklists as blacklist_store
from licensegate.store import logins as login_store
from licensegate.store import sessions as session_store
from licensegate.store import users as user_store
from licensegate.store.database import Database

Message = Callable[..., str]
DEFAULT_BAN_REASON = "Banned by the client program"


async def change_username(db: Database, app: ClientApp, user_id: int, new_name: str, msg: Message) -> None:
    """Rename the user (and the copies of the name kept elsewhere), then end their sessions."""
    check_new_username(app, new_name, msg)
    async with db.transaction() as tx:
        await app_store.lock(tx, app.id)
        user = await user_store.find_by_id(tx, app.id, user_id)
        if user is None:
            raise Forbidden("This session's user no longer exists.", "user_not_found")
        taken = await login_store.user_by_name(tx, app.id, new_name)
        if taken and taken[0]["user_id"] != user_id:
            raise Conflict(msg("usernametaken"), "username_taken")
        await user_store.rename(tx, app.id, user_id, user["username"], new_name)
        await session_store.end_for_user(tx, user_id)


async def ban_self(
    db: Database, app: ClientApp, user_id: int, *, reason: str | None, hwid: str | None, ip: str, now: int
) -> None:
    """Ban the session's user, blacklist their HWIDs, the HWID sent and the caller's address, and
    end their sessions, so the ban holds at once."""
    reason = reason or DEFAULT_BAN_REASON
    async with db.transaction() as tx:
        await user_rules.ban(tx, app.id, user_id, reason, now)
        if hwid:
            await blacklist_store.add(tx, app.id, "hwid", hwid, reason, now)
        await blacklist_store.add(tx, app.id, "ip", ip, reason, now)
        await session_store.end_for_user(tx, user_id)
