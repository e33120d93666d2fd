"""SQL for signed license files: what issuing one reads, the per-user wait, and the record."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor


class FileApp(TypedDict):
    id: int
    ownerid: str
    name: str
    signing_key: str | None
    public_key: str | None
    paused_at: int | None
    license_file_ttl: int | None
    license_file_cooldown: int | None


class FileUser(TypedDict):
    id: int
    username: str
    banned_reason: str | None
    license_file_at: int | None


async def app(db: Executor, app_id: int) -> FileApp | None:
    row = await db.fetch_one(
        "SELECT id, ownerid, name, signing_key, public_key, paused_at, license_file_ttl, "
        "license_file_cooldown FROM apps WHERE id = ?",
        app_id,
    )
    return cast("FileApp | None", row)


async def user(db: Executor, app_id: int, user_id: int) -> FileUser | None:
    row = await db.fetch_one(
        "SELECT id, username, banned_reason, license_file_at FROM users WHERE app_id = ? AND id = ?",
        app_id,
        user_id,
    )
    return cast("FileUser | None", row)


async def first_hwid(db: Executor, user_id: int) -> str | None:
    hwid: str | None = await db.fetch_value(
        "SELECT hwid FROM user_hwids WHERE user_id = ? ORDER BY id LIMIT 1", user_id
    )
    return hwid


async def key_of_user(db: Executor, user_id: int, key: str | None) -> tuple[int, str] | None:
    """The key `key` if the user redeemed it, else the key the user redeemed last (or None)."""
    if key is not None:
        row = await db.fetch_one(
            "SELECT id, key FROM license_keys WHERE used_by_user_id = ? AND key = ?", user_id, key
        )
        if row is not None:
            return row["id"], row["key"]
    row = await db.fetch_one(
        "SELECT id, key FROM license_keys WHERE used_by_user_id = ? ORDER BY used_at DESC, id DESC LIMIT 1",
        user_id,
    )
    return None if row is None else (row["id"], row["key"])


async def claim(db: Executor, user_id: int, now: int, cooldown: int) -> bool:
    """Take the user's turn for a file: False while the last one is younger than `cooldown`."""
    done = await db.execute(
        "UPDATE users SET license_file_at = ? "
        "WHERE id = ? AND (license_file_at IS NULL OR license_file_at <= ?)",
        now,
        user_id,
        now - cooldown,
    )
    return done == 1


async def insert(
    db: Executor,
    *,
    app_id: int,
    serial: str,
    user_id: int,
    key_id: int | None,
    username: str,
    hwid: str | None,
    kid: str,
    encrypted: bool,
    issued_by: str,
    issued_at: int,
    expires_at: int,
) -> None:
    await db.execute(
        "INSERT INTO license_files (app_id, serial, user_id, key_id, username, hwid, kid, encrypted, "
        "issued_by, issued_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        app_id,
        serial,
        user_id,
        key_id,
        username,
        hwid,
        kid,
        int(encrypted),
        issued_by,
        issued_at,
        expires_at,
    )


async def set_policy(db: Executor, app_id: int, *, ttl: int | None, cooldown: int | None) -> int:
    return await db.execute(
        "UPDATE apps SET license_file_ttl = ?, license_file_cooldown = ? WHERE id = ?", ttl, cooldown, app_id
    )
