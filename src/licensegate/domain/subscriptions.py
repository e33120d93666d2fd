"""Subscription definitions: a name and a level. A license key of level N grants every
subscription of level N. Pausing a subscription stops its users' access and freezes their
remaining time; unpausing gives that time back."""

from __future__ import annotations

from typing import Any

from licensegate.domain import errorcodes, events
from licensegate.store import sessions as session_store
from licensegate.store import subscriptions as store
from licensegate.store.database import Database, Executor, Row


async def get(db: Executor, app_id: int, name: str) -> Row:
    row = await store.find(db, app_id, name)
    if row is None:
        raise errorcodes.SUBSCRIPTION_NOT_FOUND(name=name)
    return row


async def create(db: Database, app_id: int, *, name: str, level: str, now: int) -> None:
    async with db.transaction() as tx:
        if await store.find(tx, app_id, name) is not None:
            raise errorcodes.SUBSCRIPTION_EXISTS(name=name)
        await store.insert(tx, app_id=app_id, name=name, level=level, now=now)


async def delete(db: Database, app_id: int, name: str) -> None:
    """Delete the definition; the users' grants of it go with it, and the sessions of the users
    who held one end (their next login decides on what they still hold)."""
    async with db.transaction() as tx:
        row = await get(tx, app_id, name)
        await session_store.end_for_subscription(tx, row["id"])
        await store.delete(tx, row["id"])


async def edit(
    db: Database, app_id: int, name: str, *, level: str | None, new_name: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Rename and/or re-level; returns the definition before and after."""
    async with db.transaction() as tx:
        row = await get(tx, app_id, name)
        if new_name is not None and new_name != name and await store.find(tx, app_id, new_name) is not None:
            raise errorcodes.SUBSCRIPTION_EXISTS(name=new_name)
        after = {"name": new_name or name, "level": level or row["level"]}
        await store.update(tx, row["id"], **after)
    return {"name": name, "level": row["level"]}, after


async def list_all(db: Executor, app_id: int) -> list[dict[str, Any]]:
    return [
        {
            "id": str(row["id"]),
            "name": row["name"],
            "level": row["level"],
            "paused": 1 if row["paused_at"] is not None else 0,
            "created_at": row["created_at"],
        }
        for row in await store.list_for_app(db, app_id)
    ]


async def pause(db: Database, app_id: int, name: str, now: int) -> None:
    """Freeze the subscription and end the sessions of the users holding a grant of it."""
    async with db.transaction() as tx:
        row = await get(tx, app_id, name)
        if row["paused_at"] is not None:
            raise errorcodes.ALREADY_PAUSED(f"The subscription '{name}' is already paused.")
        await store.pause(tx, row["id"], now)
        ended = await session_store.end_for_subscription(tx, row["id"], why=session_store.ENDED_BY_PAUSE)
        await events.record(tx, app_id, "subscription.paused", now, {"subscription": name})
        await events.sessions_ended_by(tx, app_id, now, ended, "subscription_paused", subscription=name)


async def unpause(db: Database, app_id: int, name: str, now: int) -> None:
    async with db.transaction() as tx:
        row = await get(tx, app_id, name)
        if row["paused_at"] is None:
            raise errorcodes.NOT_PAUSED(f"The subscription '{name}' is not paused.")
        await store.unpause(tx, row["id"], row["paused_at"], now)


async def count_active(db: Executor, app_id: int, name: str, now: int) -> int:
    row = await get(db, app_id, name)
    return await store.count_active_grants(db, row["id"], now)


USERS_CAP = 10_000  # a list counts no further (a deletion counts exactly)


async def list_with_users(db: Executor, app_id: int) -> list[dict[str, Any]]:
    """Every subscription (as `list_all`) with `users`, how many users hold it, counted up to
    `USERS_CAP` (`users_more`: there are more than that many grants, and `users` is a lower
    bound), so a list of subscriptions costs the same with a million users."""
    rows = await list_all(db, app_id)
    for row in rows:
        row["users"], row["users_more"] = await store.users_holding(db, int(row["id"]), USERS_CAP)
    return rows


async def users_holding(db: Executor, app_id: int, name: str) -> int:
    """Exactly how many users hold the subscription (what deleting it takes from)."""
    row = await get(db, app_id, name)
    users, _ = await store.users_holding(db, row["id"])
    return users
