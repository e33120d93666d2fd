"""SQL for secrets sealed at rest (`secretbox`): where each sealed column is, and re-sealing its
values under a new deployment key."""

from __future__ import annotations

from licensegate.store.database import Executor, Row

# Columns sealed only since users' two-factor secrets and webhook URLs were: values stored in
# clear before get sealed by `domain.sealed.seal_clear` (`licensegate migrate` and `serve`);
# reads accept both until then.
SEALED_LATER: list[tuple[str, str, str, str]] = [
    ("users", "id", "otp_secret", "users.otp_secret"),
    ("users", "id", "otp_pending_secret", "users.otp_secret"),
    ("webhooks", "id", "base_url", "webhooks.base_url"),
    ("apps", "id", "log_webhook_url", "apps.log_webhook_url"),
]
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
    *SEALED_LATER,
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


async def session_ids_in_clear(db: Executor, limit: int) -> list[str]:
    """Client sessions still keyed by the id their client holds (stored before ids were
    digests, 64 hex characters)."""
    rows = await db.fetch_all("SELECT id FROM sessions WHERE LENGTH(id) <> 64 LIMIT ?", limit)
    return [row["id"] for row in rows]


async def rekey_session(db: Executor, old: str, new: str) -> int:
    return await db.execute("UPDATE sessions SET id = ? WHERE id = ?", new, old)


async def reseal(db: Executor, table: str, key: str, column: str, row_key: object, old: str, new: str) -> int:
    """Replace one sealed value, unless it changed meanwhile (then the newer value stays)."""
    return await db.execute(
        f"UPDATE {table} SET {column} = ? WHERE {key} = ? AND {column} = ?", new, row_key, old
    )
