"""SQL for file content kept in the database: `file_blobs` (one row per content, by its SHA-256)
and `file_chunks` (its bytes, in order). PostgreSQL deployments without a shared folder use it."""

from __future__ import annotations

from licensegate.store.database import Executor, Row


async def insert(db: Executor, key: str, size: int, chunks: int, now: int) -> bool:
    """Add the blob's row; False when it exists (a concurrent insert of the same key waits for
    the first transaction and then finds it)."""
    added = await db.fetch_value(
        "INSERT INTO file_blobs (storage_key, size, chunks, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (storage_key) DO NOTHING RETURNING 1",
        key,
        size,
        chunks,
        now,
    )
    return added is not None


async def insert_chunk(db: Executor, key: str, seq: int, data: bytes) -> None:
    await db.execute("INSERT INTO file_chunks (storage_key, seq, data) VALUES (?, ?, ?)", key, seq, data)


async def find(db: Executor, key: str) -> Row | None:
    return await db.fetch_one("SELECT size, chunks FROM file_blobs WHERE storage_key = ?", key)


async def chunk(db: Executor, key: str, seq: int) -> bytes | None:
    data = await db.fetch_value("SELECT data FROM file_chunks WHERE storage_key = ? AND seq = ?", key, seq)
    return None if data is None else bytes(data)


async def hold(db: Executor, key: str) -> bool:
    """Whether the blob is present, once no one is removing it (waits for a removal's lock)."""
    found = await db.fetch_value("SELECT 1 FROM file_blobs WHERE storage_key = ? FOR SHARE", key)
    return found is not None


async def lock(db: Executor, key: str) -> bool:
    """Lock the blob for removal (in a transaction); False when it is not there."""
    found = await db.fetch_value("SELECT 1 FROM file_blobs WHERE storage_key = ? FOR UPDATE", key)
    return found is not None


async def delete(db: Executor, key: str) -> None:
    await db.execute("DELETE FROM file_chunks WHERE storage_key = ?", key)
    await db.execute("DELETE FROM file_blobs WHERE storage_key = ?", key)


async def keys(db: Executor) -> list[str]:
    return [row["storage_key"] for row in await db.fetch_all("SELECT storage_key FROM file_blobs ORDER BY 1")]
