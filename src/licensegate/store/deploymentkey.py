"""SQL of the deployment key's record: the id of the key the database's secrets are sealed under."""

from __future__ import annotations

from licensegate.store.database import Executor

CURRENT = "current"


async def recorded(db: Executor) -> str | None:
    value = await db.fetch_value("SELECT key_id FROM deployment_key WHERE name = ?", CURRENT)
    return None if value is None else str(value)


async def record(db: Executor, key_id: str, now: int, *, replace: bool) -> None:
    """Record `key_id`: as the key every secret is sealed under now (`replace`, after a
    re-sealing), or only where none is recorded yet (another process's record then stands)."""
    on_conflict = (
        "DO UPDATE SET key_id = excluded.key_id, recorded_at = excluded.recorded_at"
        if replace
        else "DO NOTHING"
    )
    await db.execute(
        "INSERT INTO deployment_key (name, key_id, recorded_at) VALUES (?, ?, ?) "
        f"ON CONFLICT (name) {on_conflict}",
        CURRENT,
        key_id,
        now,
    )


async def sample_sealed(db: Executor) -> list[str]:
    """A few sealed values that tell which key the database's secrets are under: the deployment's
    own signing key and the newest applications' signing keys."""
    rows = await db.fetch_all(
        "SELECT signing_key AS v FROM signing_keys UNION ALL "
        "SELECT v FROM (SELECT signing_key AS v FROM apps WHERE signing_key IS NOT NULL "
        "ORDER BY id DESC LIMIT 3) newest"
    )
    return [str(row["v"]) for row in rows]
