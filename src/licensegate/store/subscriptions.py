"""SQL for subscription definitions and their pausing."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor, Row
from licensegate.store.freezes import APP_PAUSE, give_back

# A user's subscription counts only while unexpired and neither it nor its definition is paused.
ACTIVE_GRANT = "us.expires_at > ? AND us.paused_at IS NULL AND s.paused_at IS NULL"


async def insert(db: Executor, *, app_id: int, name: str, level: str, now: int) -> int:
    sub_id: int = await db.fetch_value(
        "INSERT INTO subscriptions (app_id, name, level, created_at) VALUES (?, ?, ?, ?) RETURNING id",
        app_id,
        name,
        level,
        now,
    )
    return sub_id


async def find(db: Executor, app_id: int, name: str) -> Row | None:
    return await db.fetch_one(
        "SELECT id, name, level, paused_at FROM subscriptions WHERE app_id = ? AND name = ?",
        app_id,
        name,
    )


async def list_for_app(db: Executor, app_id: int) -> list[Row]:
    return await db.fetch_all(
        "SELECT id, name, level, paused_at, created_at FROM subscriptions WHERE app_id = ? ORDER BY id",
        app_id,
    )


class LevelSubscription(TypedDict):
    """A subscription as `for_level` finds it."""

    id: int
    name: str
    level: str
    paused_at: int | None


async def for_level(db: Executor, app_id: int, level: str) -> list[LevelSubscription]:
    rows = await db.fetch_all(
        "SELECT id, name, level, paused_at FROM subscriptions WHERE app_id = ? AND level = ? ORDER BY id",
        app_id,
        level,
    )
    return cast("list[LevelSubscription]", rows)


async def delete(db: Executor, sub_id: int) -> int:
    return await db.execute("DELETE FROM subscriptions WHERE id = ?", sub_id)


async def update(db: Executor, sub_id: int, *, name: str, level: str) -> int:
    return await db.execute("UPDATE subscriptions SET name = ?, level = ? WHERE id = ?", name, level, sub_id)


async def pause(db: Executor, sub_id: int, now: int) -> int:
    return await db.execute(
        "UPDATE subscriptions SET paused_at = ? WHERE id = ? AND paused_at IS NULL", now, sub_id
    )


async def unpause(db: Executor, sub_id: int, paused_at: int, now: int) -> int:
    """Give back the frozen time (see `freezes.give_back`): grants that were running
    when their clock stopped move forward by the stretch this pause alone held them."""
    await db.execute(
        "UPDATE user_subscriptions SET expires_at = expires_at + "
        f"{give_back(db.dialect, '?', ('paused_at', APP_PAUSE))} "
        "WHERE subscription_id = ? "
        f"AND (expires_at > ? OR expires_at > paused_at OR expires_at > {APP_PAUSE})",
        now,
        now,
        now,
        paused_at,
        sub_id,
        paused_at,
    )
    return await db.execute(
        "UPDATE subscriptions SET paused_at = NULL WHERE id = ? AND paused_at = ?",
        sub_id,
        paused_at,
    )


async def count_active_grants(db: Executor, sub_id: int, now: int) -> int:
    count: int = await db.fetch_value(
        "SELECT COUNT(*) FROM user_subscriptions us JOIN subscriptions s ON s.id = us.subscription_id "
        f"WHERE us.subscription_id = ? AND {ACTIVE_GRANT}",
        sub_id,
        now,
    )
    return count


async def users_holding(db: Executor, sub_id: int, cap: int | None = None) -> tuple[int, bool]:
    """How many users hold the subscription (expired or not), through its index. With `cap`, no
    more than `cap` + 1 grants are read: the count is then exact when it says so (second value
    False), else a lower bound (a subscription of a million users costs what one of `cap` does)."""
    if cap is None:
        exact: int = await db.fetch_value(
            "SELECT COUNT(DISTINCT user_id) FROM user_subscriptions WHERE subscription_id = ?", sub_id
        )
        return exact, False
    row = await db.fetch_one(
        "SELECT COUNT(*) AS grants, COUNT(DISTINCT user_id) AS users FROM "
        "(SELECT user_id FROM user_subscriptions WHERE subscription_id = ? LIMIT ?) AS g",
        sub_id,
        cap + 1,
    )
    assert row is not None
    return row["users"], row["grants"] > cap
