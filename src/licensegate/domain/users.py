"""End users of an application: accounts, HWIDs, bans and their subscriptions."""

from __future__ import annotations

from licensegate.store import blacklist as blacklist_store
from licensegate.store import users as store
from licensegate.store.database import Executor


async def ban(db: Executor, app_id: int, user_id: int, reason: str, now: int) -> None:
    """Ban the user and blacklist their HWIDs and last IP, so a new account from the same
    machine is refused too (KeyAuth's rule). Run inside a transaction."""
    await store.set_ban(db, user_id, reason)
    row = await store.find_by_id(db, app_id, user_id)
    for hwid in await store.hwids(db, user_id):
        await blacklist_store.add(db, app_id, "hwid", hwid, reason, now)
    if row is not None and row["last_ip"]:
        await blacklist_store.add(db, app_id, "ip", row["last_ip"], reason, now)


async def unban(db: Executor, app_id: int, user_id: int) -> None:
    """Lift the ban and the blacklist entries it made. Run inside a transaction."""
    await store.set_ban(db, user_id, None)
    row = await store.find_by_id(db, app_id, user_id)
    await blacklist_store.remove(db, app_id, "hwid", await store.hwids(db, user_id))
    if row is not None and row["last_ip"]:
        await blacklist_store.remove(db, app_id, "ip", [row["last_ip"]])


async def delete(db: Executor, user_id: int) -> None:
    await store.delete(db, user_id)
