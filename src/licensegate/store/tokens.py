"""SQL for the token system: one token per license key and per user (`tokens`), found by the
SHA-256 of the token; the token itself is kept sealed so the seller can ship it."""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest, keyset

COLUMNS = "t.id, t.token_sealed, t.kind, t.assigned, t.banned_reason, t.file_hash, t.used_at, t.created_at"


class TokenRow(TypedDict):
    """A row of `COLUMNS`."""

    id: int
    token_sealed: str
    kind: str  # 'license' or 'user'
    assigned: str
    banned_reason: str | None
    file_hash: str | None
    used_at: int | None
    created_at: int


# What a token's state filter means in SQL (fixed fragments only).
STATES = {
    "banned": "t.banned_reason IS NOT NULL",
    "active": "t.banned_reason IS NULL",
    "used": "t.used_at IS NOT NULL",
    "unused": "t.used_at IS NULL",
}
# The ban init applies (`for_init`'s any_ban): the token's own, else its key's, else its user's.
# The dashboard lists and filters by it, so a banned key's token never reads "Active".
ANY_BAN = (
    "COALESCE(t.banned_reason, (SELECT k.banned_reason FROM license_keys k WHERE k.id = t.license_key_id), "
    "(SELECT u.banned_reason FROM users u WHERE u.id = t.user_id))"
)
BROWSE_STATES = {**STATES, "banned": f"{ANY_BAN} IS NOT NULL", "active": f"{ANY_BAN} IS NULL"}


async def insert(
    db: Executor,
    *,
    app_id: int,
    token_hash: str,
    token_sealed: str,
    kind: str,
    assigned: str,
    user_id: int | None,
    license_key_id: int | None,
    now: int,
) -> None:
    await db.execute(
        "INSERT INTO tokens (app_id, token_hash, token_sealed, kind, assigned, user_id, license_key_id, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        app_id,
        token_hash,
        token_sealed,
        kind,
        assigned,
        user_id,
        license_key_id,
        now,
    )


async def for_init(db: Executor, app_id: int, token_hash: str) -> Row | None:
    """The token with the ban reason of the key or user it belongs to (a banned key or user bans
    its token too)."""
    return await db.fetch_one(
        "SELECT t.id, t.banned_reason, t.file_hash, t.used_at, "
        "COALESCE(t.banned_reason, k.banned_reason, u.banned_reason) AS any_ban "
        "FROM tokens t LEFT JOIN license_keys k ON k.id = t.license_key_id "
        "LEFT JOIN users u ON u.id = t.user_id WHERE t.token_hash = ? AND t.app_id = ?",
        token_hash,
        app_id,
    )


async def bind(db: Executor, token_id: int, file_hash: str, now: int) -> int:
    """Bind the file hash at first use; 0 when another first use bound one meanwhile."""
    return await db.execute(
        "UPDATE tokens SET file_hash = ?, used_at = COALESCE(used_at, ?) WHERE id = ? AND file_hash IS NULL",
        file_hash,
        now,
        token_id,
    )


async def list_page(
    db: Executor,
    app_id: int,
    *,
    kind: str | None,
    state: str | None,
    search: str | None,
    limit: int,
    offset: int,
) -> list[TokenRow]:
    where, args = _filters(app_id, kind, state, search)
    rows = await db.fetch_all(
        f"SELECT {COLUMNS} FROM tokens t WHERE {where} ORDER BY t.id LIMIT ? OFFSET ?", *args, limit, offset
    )
    return cast("list[TokenRow]", rows)


async def count(db: Executor, app_id: int, *, kind: str | None, state: str | None, search: str | None) -> int:
    where, args = _filters(app_id, kind, state, search)
    total: int = await db.fetch_value(f"SELECT COUNT(*) FROM tokens t WHERE {where}", *args)
    return total


def _filters(
    app_id: int, kind: str | None, state: str | None, search: str | None, states: dict[str, str] = STATES
) -> tuple[str, list[object]]:
    clauses, args = ["t.app_id = ?"], [app_id]  # type: list[str], list[object]
    if kind is not None:
        clauses.append("t.kind = ?")
        args.append(kind)
    if state is not None:
        clauses.append(states[state])
    if search is not None:
        clauses.append("t.assigned = ?")
        args.append(search)
    return " AND ".join(clauses), args


async def set_ban(db: Executor, app_id: int, token_hash: str, reason: str | None) -> int:
    return await db.execute(
        "UPDATE tokens SET banned_reason = ? WHERE app_id = ? AND token_hash = ?", reason, app_id, token_hash
    )


async def reset_hash(db: Executor, app_id: int, token_hash: str) -> int:
    return await db.execute(
        "UPDATE tokens SET file_hash = NULL WHERE app_id = ? AND token_hash = ?", app_id, token_hash
    )


async def delete(db: Executor, app_id: int, token_hash: str) -> int:
    return await db.execute("DELETE FROM tokens WHERE app_id = ? AND token_hash = ?", app_id, token_hash)


class BrowsedToken(TokenRow):
    user_id: int | None
    license_key_id: int | None
    any_ban: str | None  # the ban init applies: the token's own, its key's or its user's


async def browse(
    db: Executor,
    app_id: int,
    *,
    kind: str | None,
    state: str | None,
    assigned: str | None,
    token_hash: str | None,
    request: PageRequest,
) -> list[BrowsedToken]:
    """One keyset page by id (`request.size + 1` rows, see `paging.finish`): the filters of
    `list_page`, or the one token of `token_hash`; with the user or key each belongs to."""
    where, args = _filters(app_id, kind, state, assigned, BROWSE_STATES)
    if token_hash is not None:
        where += " AND t.token_hash = ?"
        args.append(token_hash)
    after, after_args, order = keyset("id", request)  # `id` is the tokens' own: no join
    rows = await db.fetch_all(
        f"SELECT {COLUMNS}, t.user_id, t.license_key_id, {ANY_BAN} AS any_ban "
        f"FROM tokens t WHERE {where}{after} {order} LIMIT ?",
        *args,
        *after_args,
        request.size + 1,
    )
    return cast("list[BrowsedToken]", rows)
