"""SQL for entitlements (named features) and their attachments to subscriptions, keys and users."""

from __future__ import annotations

from typing import Literal, TypedDict, cast

from licensegate.store.database import Executor
from licensegate.store.subscriptions import ACTIVE_GRANT

Owner = Literal["sub", "key", "user"]
# Each kind of attachment: its table and the column naming the owner row.
ATTACHMENTS: dict[Owner, tuple[str, str]] = {
    "sub": ("subscription_entitlements", "subscription_id"),
    "key": ("key_entitlements", "key_id"),
    "user": ("user_entitlements", "user_id"),
}
_COLUMNS = "e.id, e.code, e.name, e.metadata, e.created_at, e.updated_at"


class EntitlementRow(TypedDict):
    id: int
    code: str
    name: str
    metadata: str | None  # JSON text
    created_at: int
    updated_at: int


async def insert(
    db: Executor, app_id: int, *, code: str, name: str, metadata: str | None, now: int
) -> int | None:
    """The new entitlement's id, or None when the application has one of that code already."""
    new_id: int | None = await db.fetch_value(
        "INSERT INTO entitlements (app_id, code, name, metadata, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (app_id, code) DO NOTHING RETURNING id",
        app_id,
        code,
        name,
        metadata,
        now,
        now,
    )
    return new_id


async def find(db: Executor, app_id: int, code: str) -> EntitlementRow | None:
    row = await db.fetch_one(
        f"SELECT {_COLUMNS} FROM entitlements e WHERE e.app_id = ? AND e.code = ?", app_id, code
    )
    return cast("EntitlementRow | None", row)


async def list_for_app(db: Executor, app_id: int) -> list[EntitlementRow]:
    rows = await db.fetch_all(
        f"SELECT {_COLUMNS} FROM entitlements e WHERE e.app_id = ? ORDER BY e.code", app_id
    )
    return cast("list[EntitlementRow]", rows)


async def update(
    db: Executor, entitlement_id: int, *, code: str, name: str, metadata: str | None, now: int
) -> int:
    return await db.execute(
        "UPDATE entitlements SET code = ?, name = ?, metadata = ?, updated_at = ? WHERE id = ?",
        code,
        name,
        metadata,
        now,
        entitlement_id,
    )


async def delete(db: Executor, entitlement_id: int) -> int:
    """The attachments go with it (ON DELETE CASCADE)."""
    return await db.execute("DELETE FROM entitlements WHERE id = ?", entitlement_id)


async def attach(db: Executor, owner: Owner, owner_id: int, entitlement_id: int, now: int) -> bool:
    """False when it was attached already."""
    table, column = ATTACHMENTS[owner]
    done = await db.execute(
        f"INSERT INTO {table} ({column}, entitlement_id, created_at) VALUES (?, ?, ?) "
        f"ON CONFLICT ({column}, entitlement_id) DO NOTHING",
        owner_id,
        entitlement_id,
        now,
    )
    return done == 1


async def detach(db: Executor, owner: Owner, owner_id: int, entitlement_id: int) -> bool:
    table, column = ATTACHMENTS[owner]
    done = await db.execute(
        f"DELETE FROM {table} WHERE {column} = ? AND entitlement_id = ?",
        owner_id,
        entitlement_id,
    )
    return done == 1


async def attached_to(db: Executor, owner: Owner, owner_id: int) -> list[EntitlementRow]:
    """The entitlements attached directly to one subscription, key or user."""
    table, column = ATTACHMENTS[owner]
    rows = await db.fetch_all(
        f"SELECT {_COLUMNS} FROM {table} a JOIN entitlements e ON e.id = a.entitlement_id "
        f"WHERE a.{column} = ? ORDER BY e.code",
        owner_id,
    )
    return cast("list[EntitlementRow]", rows)


async def of_user(db: Executor, user_id: int, now: int) -> list[EntitlementRow]:
    """A user's entitlements: those of the subscriptions they hold live (unexpired, neither the
    grant nor its subscription paused), their own extras and those of the keys they redeemed.
    Every branch is an index lookup (grants by user, attachments by owner, keys by user)."""
    rows = await db.fetch_all(
        f"SELECT {_COLUMNS} FROM entitlements e WHERE e.id IN ("
        "SELECT se.entitlement_id FROM user_subscriptions us "
        "JOIN subscriptions s ON s.id = us.subscription_id "
        "JOIN subscription_entitlements se ON se.subscription_id = s.id "
        f"WHERE us.user_id = ? AND {ACTIVE_GRANT} "
        "UNION SELECT entitlement_id FROM user_entitlements WHERE user_id = ? "
        "UNION SELECT ke.entitlement_id FROM license_keys k "
        "JOIN key_entitlements ke ON ke.key_id = k.id WHERE k.used_by_user_id = ?"
        ") ORDER BY e.code",
        user_id,
        now,
        user_id,
        user_id,
    )
    return cast("list[EntitlementRow]", rows)


async def counts(db: Executor, entitlement_id: int) -> dict[Owner, int]:
    """How many subscriptions, keys and users it is attached to."""
    found: dict[Owner, int] = {}
    for owner, (table, column) in ATTACHMENTS.items():
        found[owner] = await db.fetch_value(
            f"SELECT COUNT({column}) FROM {table} WHERE entitlement_id = ?",
            entitlement_id,
        )
    return found


async def app_has_any(db: Executor, app_id: int) -> bool:
    """Whether the application has any entitlement (one seek of the (app_id, code) index)."""
    found = await db.fetch_value("SELECT 1 FROM entitlements WHERE app_id = ? LIMIT 1", app_id)
    return found is not None
