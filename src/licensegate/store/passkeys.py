"""SQL for WebAuthn credentials (security keys and passkeys) of dashboard accounts."""

from __future__ import annotations

from licensegate.store.database import Executor, Row

_COLUMNS = "id, account_id, credential_id, public_key, sign_count, transports, name, created_at, last_used_at"


async def insert(
    db: Executor,
    *,
    account_id: int,
    credential_id: str,
    public_key: str,
    sign_count: int,
    transports: str,
    name: str,
    now: int,
) -> int | None:
    """None when this credential is registered already."""
    passkey_id: int | None = await db.fetch_value(
        "INSERT INTO passkeys (account_id, credential_id, public_key, sign_count, transports, name, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (credential_id) DO NOTHING RETURNING id",
        account_id,
        credential_id,
        public_key,
        sign_count,
        transports,
        name,
        now,
    )
    return passkey_id


async def list_for_account(db: Executor, account_id: int) -> list[Row]:
    return await db.fetch_all(f"SELECT {_COLUMNS} FROM passkeys WHERE account_id = ? ORDER BY id", account_id)


async def find(db: Executor, account_id: int, credential_id: str) -> Row | None:
    return await db.fetch_one(
        f"SELECT {_COLUMNS} FROM passkeys WHERE account_id = ? AND credential_id = ?",
        account_id,
        credential_id,
    )


async def used(db: Executor, passkey_id: int, old_count: int, new_count: int, now: int) -> bool:
    """Record a use; False when another use moved the counter meanwhile (a cloned key races)."""
    changed = await db.execute(
        "UPDATE passkeys SET sign_count = ?, last_used_at = ? WHERE id = ? AND sign_count = ?",
        new_count,
        now,
        passkey_id,
        old_count,
    )
    return changed == 1


async def rename(db: Executor, account_id: int, passkey_id: int, name: str) -> int:
    return await db.execute(
        "UPDATE passkeys SET name = ? WHERE account_id = ? AND id = ?", name, account_id, passkey_id
    )


async def delete(db: Executor, account_id: int, passkey_id: int) -> int:
    return await db.execute("DELETE FROM passkeys WHERE account_id = ? AND id = ?", account_id, passkey_id)


async def count(db: Executor, account_id: int) -> int:
    total: int = await db.fetch_value("SELECT COUNT(*) FROM passkeys WHERE account_id = ?", account_id)
    return total
