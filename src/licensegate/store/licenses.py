"""SQL for license keys and the grants redeeming them creates.

A key's `status` is 'unused' or 'used'; a ban is a separate column (`banned_reason`, NULL when
not banned), so a ban never loses whether the key was redeemed.
"""

from __future__ import annotations

from collections.abc import Sequence

from licensegate.store.database import Executor, Row

COLUMNS = (
    "id, key, level, duration, note, status, banned_reason, generated_by, created_at, "
    "used_at, used_by_user_id, used_by"
)

# Which keys a filter selects; the names match the `status` values the API accepts.
FILTERS: dict[str, str] = {
    "all": "",
    "unused": " AND status = 'unused' AND banned_reason IS NULL",
    "used": " AND status = 'used' AND banned_reason IS NULL",
    "banned": " AND banned_reason IS NOT NULL",
    "redeemed": " AND status = 'used'",
}


def _marks(count: int) -> str:
    """`?, ?, ...` for an IN list; only the count is formatted in, never a value."""
    return ", ".join("?" * count)


def _creator(reseller_id: int | None) -> tuple[str, tuple[int, ...]]:
    """The fixed clause limiting a statement to the keys one reseller generated (none: all)."""
    if reseller_id is None:
        return "", ()
    return " AND generated_by_account_id = ?", (reseller_id,)


async def insert(
    db: Executor,
    *,
    app_id: int,
    key: str,
    level: str,
    duration: int,
    note: str | None,
    generated_by: str,
    account_id: int | None,
    now: int,
) -> int | None:
    """Insert the key; None when the application already has a key with that text.

    ON CONFLICT DO NOTHING makes a concurrent insert of the same text wait for the other
    transaction and then do nothing, instead of failing the whole transaction.
    """
    key_id: int | None = await db.fetch_value(
        "INSERT INTO license_keys (app_id, key, level, duration, note, status, generated_by, "
        "generated_by_account_id, created_at) VALUES (?, ?, ?, ?, ?, 'unused', ?, ?, ?) "
        "ON CONFLICT (app_id, key) DO NOTHING RETURNING id",
        app_id,
        key,
        level,
        duration,
        note,
        generated_by,
        account_id,
        now,
    )
    return key_id


async def find(db: Executor, app_id: int, key: str, *, reseller_id: int | None = None) -> Row | None:
    mine, mine_args = _creator(reseller_id)
    return await db.fetch_one(
        f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ? AND key = ?{mine}", app_id, key, *mine_args
    )


async def find_many(
    db: Executor, app_id: int, keys: Sequence[str], *, reseller_id: int | None = None
) -> list[Row]:
    if not keys:
        return []
    mine, mine_args = _creator(reseller_id)
    return await db.fetch_all(
        f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ? AND key IN ({_marks(len(keys))}){mine} "
        "ORDER BY id",
        app_id,
        *keys,
        *mine_args,
    )


async def delete_grants_of(db: Executor, key_ids: Sequence[int]) -> int:
    """Delete the user subscriptions these keys created."""
    if not key_ids:
        return 0
    return await db.execute(
        f"DELETE FROM user_subscriptions WHERE key_id IN ({_marks(len(key_ids))})", *key_ids
    )


async def delete_ids(db: Executor, key_ids: Sequence[int]) -> int:
    if not key_ids:
        return 0
    return await db.execute(f"DELETE FROM license_keys WHERE id IN ({_marks(len(key_ids))})", *key_ids)


async def delete_matching(db: Executor, app_id: int, which: str, *, reseller_id: int | None = None) -> int:
    """Delete the keys a filter selects. Grants made from them stay (their key_id becomes NULL)."""
    mine, mine_args = _creator(reseller_id)
    return await db.execute(
        f"DELETE FROM license_keys WHERE app_id = ?{FILTERS[which]}{mine}", app_id, *mine_args
    )


async def delete_level(
    db: Executor, app_id: int, level: str, which: str, *, reseller_id: int | None = None
) -> int:
    mine, mine_args = _creator(reseller_id)
    return await db.execute(
        f"DELETE FROM license_keys WHERE app_id = ? AND level = ?{FILTERS[which]}{mine}",
        app_id,
        level,
        *mine_args,
    )


async def count(db: Executor, app_id: int, which: str, *, reseller_id: int | None = None) -> int:
    mine, mine_args = _creator(reseller_id)
    total: int = await db.fetch_value(
        f"SELECT COUNT(*) FROM license_keys WHERE app_id = ?{FILTERS[which]}{mine}", app_id, *mine_args
    )
    return total


async def list_keys(
    db: Executor, app_id: int, which: str, limit: int | None, offset: int, *, reseller_id: int | None = None
) -> list[Row]:
    """Oldest first; every matching key when `limit` is None."""
    mine, mine_args = _creator(reseller_id)
    sql = f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ?{FILTERS[which]}{mine} ORDER BY id"
    if limit is None:
        return await db.fetch_all(sql, app_id, *mine_args)
    return await db.fetch_all(sql + " LIMIT ? OFFSET ?", app_id, *mine_args, limit, offset)


async def list_redeemed(
    db: Executor, app_id: int, limit: int, offset: int, *, reseller_id: int | None = None
) -> list[Row]:
    """Redeemed keys, the most recent redemption first."""
    mine, mine_args = _creator(reseller_id)
    return await db.fetch_all(
        f"SELECT {COLUMNS} FROM license_keys WHERE app_id = ?{FILTERS['redeemed']}{mine} "
        "ORDER BY used_at DESC, id DESC LIMIT ? OFFSET ?",
        app_id,
        *mine_args,
        limit,
        offset,
    )


async def add_time_to_unused(
    db: Executor, app_id: int, seconds: int, *, reseller_id: int | None = None
) -> int:
    mine, mine_args = _creator(reseller_id)
    return await db.execute(
        f"UPDATE license_keys SET duration = duration + ? WHERE app_id = ? AND status = 'unused'{mine}",
        seconds,
        app_id,
        *mine_args,
    )


async def add_time_if_unused(db: Executor, key_id: int, seconds: int) -> int:
    """Lengthen one key while it is still unused (0 when it has been redeemed meanwhile)."""
    return await db.execute(
        "UPDATE license_keys SET duration = duration + ? WHERE id = ? AND status = 'unused'",
        seconds,
        key_id,
    )


async def extend_grants_of(db: Executor, key_id: int, seconds: int) -> int:
    return await db.execute(
        "UPDATE user_subscriptions SET expires_at = expires_at + ? WHERE key_id = ?", seconds, key_id
    )


async def set_note(db: Executor, app_id: int, key: str, note: str, *, reseller_id: int | None = None) -> int:
    mine, mine_args = _creator(reseller_id)
    return await db.execute(
        f"UPDATE license_keys SET note = ? WHERE app_id = ? AND key = ?{mine}", note, app_id, key, *mine_args
    )


async def set_level_if_unused(db: Executor, key_id: int, level: str) -> int:
    return await db.execute(
        "UPDATE license_keys SET level = ? WHERE id = ? AND status = 'unused'", level, key_id
    )


async def set_ban(db: Executor, key_id: int, reason: str | None) -> int:
    return await db.execute("UPDATE license_keys SET banned_reason = ? WHERE id = ?", reason, key_id)


async def mark_used(
    db: Executor, app_id: int, key_id: int, *, user_id: int, username: str, now: int
) -> Row | None:
    """Redeem the key if it is still unused and not banned; its level and duration as they
    were at that moment, or None when another redemption (or a ban) came first."""
    return await db.fetch_one(
        "UPDATE license_keys SET status = 'used', used_at = ?, used_by_user_id = ?, used_by = ? "
        "WHERE id = ? AND app_id = ? AND status = 'unused' AND banned_reason IS NULL "
        "RETURNING level, duration",
        now,
        user_id,
        username,
        key_id,
        app_id,
    )


async def insert_grant(
    db: Executor, *, user_id: int, subscription_id: int, expires_at: int, key_id: int, now: int
) -> None:
    await db.execute(
        "INSERT INTO user_subscriptions (user_id, subscription_id, expires_at, key_id, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        user_id,
        subscription_id,
        expires_at,
        key_id,
        now,
    )
