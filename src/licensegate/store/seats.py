"""SQL for seats: the rules (per subscription, key or user) and the live sessions they count."""

from __future__ import annotations

from typing import Literal, TypedDict, cast

from licensegate.store.database import Executor

Owner = Literal["sub", "key", "user"]
_RULE = "owner, owner_id, max_machines, max_sessions, count_by, overage, overage_percent"


class RuleRow(TypedDict):
    owner: str
    owner_id: int
    max_machines: int | None
    max_sessions: int | None
    count_by: str
    overage: str
    overage_percent: int


class LiveSession(TypedDict):
    id: str
    hwid: str | None
    created_at: int


async def put(
    db: Executor,
    app_id: int,
    owner: Owner,
    owner_id: int,
    *,
    max_machines: int | None,
    max_sessions: int | None,
    count_by: str,
    overage: str,
    overage_percent: int,
    now: int,
) -> None:
    """Set the owner's rule (replacing one it had), and turn seat counting on for the application."""
    await db.execute(
        f"INSERT INTO seat_rules (app_id, {_RULE}, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (owner, owner_id) DO UPDATE SET max_machines = excluded.max_machines, "
        "max_sessions = excluded.max_sessions, count_by = excluded.count_by, overage = excluded.overage, "
        "overage_percent = excluded.overage_percent",
        app_id,
        owner,
        owner_id,
        max_machines,
        max_sessions,
        count_by,
        overage,
        overage_percent,
        now,
    )
    await db.execute("UPDATE apps SET seats = 1 WHERE id = ? AND seats = 0", app_id)


async def get(db: Executor, owner: Owner, owner_id: int) -> RuleRow | None:
    row = await db.fetch_one(
        f"SELECT {_RULE} FROM seat_rules WHERE owner = ? AND owner_id = ?", owner, owner_id
    )
    return cast("RuleRow | None", row)


async def delete(db: Executor, owner: Owner, owner_id: int) -> bool:
    return await db.execute("DELETE FROM seat_rules WHERE owner = ? AND owner_id = ?", owner, owner_id) > 0


async def for_login(db: Executor, app_id: int, user_id: int, credential: str, now: int) -> list[RuleRow]:
    """Every rule that may apply to a login: the user's, the key's it logged in with, and those
    of the subscriptions the user holds unexpired (one statement of index lookups)."""
    rows = await db.fetch_all(
        f"SELECT {_RULE} FROM seat_rules WHERE owner = 'user' AND owner_id = ? "
        f"UNION ALL SELECT {_RULE} FROM seat_rules WHERE owner = 'key' AND owner_id = "
        "(SELECT id FROM license_keys WHERE app_id = ? AND key = ?) "
        f"UNION ALL SELECT {_RULE} FROM seat_rules WHERE owner = 'sub' AND owner_id IN "
        "(SELECT subscription_id FROM user_subscriptions WHERE user_id = ? AND expires_at > ?)",
        user_id,
        app_id,
        credential,
        user_id,
        now,
    )
    return cast("list[RuleRow]", rows)


async def live_sessions(
    db: Executor, user_id: int, credential: str | None, now: int, but: str
) -> list[LiveSession]:
    """The user's logged-in, unexpired sessions other than `but` (with `credential`, only those
    logged in with it), oldest first: by the second they opened, then the nanosecond (sessions
    opened before that was recorded first), then their id."""
    by_key = "" if credential is None else " AND credential = ?"
    args: list[object] = [user_id, now, but] + ([] if credential is None else [credential])
    rows = await db.fetch_all(
        "SELECT id, hwid, created_at FROM sessions WHERE user_id = ? AND validated = 1 AND expires_at > ? "
        f"AND id <> ?{by_key} ORDER BY created_at, COALESCE(opened_ns, 0), id",
        *args,
    )
    return cast("list[LiveSession]", rows)
