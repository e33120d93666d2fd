"""SQL for the keys that protect client answers: each application's sealed secret, sealed Ed25519
seed and public key (columns of `apps`), and the deployment's own signing key (`signing_keys`)."""

from __future__ import annotations

from licensegate.store.database import Executor, Row

DEPLOYMENT = "deployment"


async def get(db: Executor, app_id: int) -> Row | None:
    return await db.fetch_one("SELECT secret, signing_key, public_key FROM apps WHERE id = ?", app_id)


async def provision(db: Executor, app_id: int, *, secret: str, signing_key: str, public_key: str) -> bool:
    """Give an application made before keys existed its keys; False when another process did first."""
    changed = await db.execute(
        "UPDATE apps SET secret = ?, signing_key = ?, public_key = ? WHERE id = ? AND signing_key IS NULL",
        secret,
        signing_key,
        public_key,
        app_id,
    )
    return changed == 1


async def unprovisioned(db: Executor, limit: int) -> list[Row]:
    return await db.fetch_all(
        "SELECT id, secret FROM apps WHERE signing_key IS NULL ORDER BY id LIMIT ?", limit
    )


async def set_signing_key(db: Executor, app_id: int, *, signing_key: str, public_key: str, now: int) -> int:
    return await db.execute(
        "UPDATE apps SET signing_key = ?, public_key = ?, updated_at = ? WHERE id = ?",
        signing_key,
        public_key,
        now,
        app_id,
    )


async def set_secret(db: Executor, app_id: int, secret: str, now: int) -> int:
    return await db.execute("UPDATE apps SET secret = ?, updated_at = ? WHERE id = ?", secret, now, app_id)


async def deployment_key(db: Executor) -> Row | None:
    return await db.fetch_one("SELECT signing_key, public_key FROM signing_keys WHERE name = ?", DEPLOYMENT)


async def insert_deployment_key(db: Executor, *, signing_key: str, public_key: str, now: int) -> None:
    """Store the deployment's key unless another process stored one first (theirs then wins)."""
    await db.execute(
        "INSERT INTO signing_keys (name, signing_key, public_key, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (name) DO NOTHING",
        DEPLOYMENT,
        signing_key,
        public_key,
        now,
    )


async def retire_public_key(db: Executor, app_id: int, *, kid: str, public_key: str, now: int) -> None:
    """Keep a replaced signing key's public half: license files it signed verify until they end."""
    await db.execute(
        "INSERT INTO app_key_history (app_id, kid, public_key, retired_at) VALUES (?, ?, ?, ?)",
        app_id,
        kid,
        public_key,
        now,
    )


async def retired_public_keys(db: Executor, app_id: int) -> list[Row]:
    return await db.fetch_all(
        "SELECT kid, public_key, retired_at FROM app_key_history WHERE app_id = ? ORDER BY id DESC", app_id
    )
