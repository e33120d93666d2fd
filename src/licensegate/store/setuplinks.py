"""SQL for one-time setup links (the first-run owner account); only digests are stored."""

from __future__ import annotations

from licensegate.store.database import Executor


async def insert(db: Executor, *, token_hash: str, purpose: str, now: int, expires_at: int) -> None:
    await db.execute(
        "INSERT INTO setup_links (token_hash, purpose, created_at, expires_at) VALUES (?, ?, ?, ?)",
        token_hash,
        purpose,
        now,
        expires_at,
    )


async def find_live(db: Executor, token_hash: str, now: int) -> str | None:
    """The purpose of an unused, unexpired link, or None."""
    purpose: str | None = await db.fetch_value(
        "SELECT purpose FROM setup_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
        token_hash,
        now,
    )
    return purpose


async def consume(db: Executor, token_hash: str, now: int) -> bool:
    """Mark the link used; False when it was used or expired already (exactly one caller wins)."""
    changed = await db.execute(
        "UPDATE setup_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
        now,
        token_hash,
        now,
    )
    return changed == 1
