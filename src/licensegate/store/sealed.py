"""SQL for secrets sealed at rest (`secretbox`): where each sealed column is, and re-sealing its
values under a new deployment key."""

from __future__ import annotations

from licensegate.store.database import Executor, Row

# Every sealed column: (table, key column, sealed column, purpose). Code that seals a new column
# adds it here, and `licensegate rotate-key` re-seals it.
SEALED_COLUMNS: list[tuple[str, str, str, str]] = [
    ("apps", "id", "secret", "apps.secret"),
    ("apps", "id", "signing_key", "apps.signing_key"),
    ("signing_keys", "name", "signing_key", "signing_keys.signing_key"),
    ("sessions", "id", "enckey", "sessions.enckey"),
    ("tokens", "id", "token_sealed", "tokens.token"),
    ("accounts", "id", "totp_secret", "accounts.totp_secret"),
    ("accounts", "id", "totp_pending_secret", "accounts.totp_secret"),
]


async def sealed_values(
    db: Executor, table: str, key: str, column: str, after: object, limit: int
) -> list[Row]:
    """A batch of (k, v) pairs of one sealed column, in key order after `after` (None: from the start)."""
    spec = (table, key, column)
    if spec not in {(t, k, c) for t, k, c, _p in SEALED_COLUMNS}:
        raise ValueError(f"not a sealed column: {spec}")
    where = f"{column} IS NOT NULL" + ("" if after is None else f" AND {key} > ?")
    params = () if after is None else (after,)
    return await db.fetch_all(
        f"SELECT {key} AS k, {column} AS v FROM {table} WHERE {where} ORDER BY {key} LIMIT ?", *params, limit
    )


async def reseal(db: Executor, table: str, key: str, column: str, row_key: object, old: str, new: str) -> int:
    """Replace one sealed value, unless it changed meanwhile (then the newer value stays)."""
    return await db.execute(
        f"UPDATE {table} SET {column} = ? WHERE {key} = ? AND {column} = ?", new, row_key, old
    )
