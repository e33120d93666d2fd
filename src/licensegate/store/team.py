"""SQL for team accounts (resellers and managers) and their team rows: the application each is
bound to, a manager's permission areas, and a reseller's allowed levels and balance buckets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict, cast

from licensegate.store.database import Executor, Row

# The balance buckets, in the order KeyAuth lists them (plus the year); each is a column
# `balance_<bucket>`. Only these fixed names are ever formatted into SQL.
BUCKETS = ("day", "week", "month", "three_month", "six_month", "year", "lifetime")
_COLUMN = {bucket: f"balance_{bucket}" for bucket in BUCKETS}
_BALANCE = ", ".join(f"t.{column}" for column in _COLUMN.values())

_MEMBER = (
    "SELECT a.id AS account_id, a.username, a.email, a.role, a.disabled, t.app_id, t.permissions, "
    f"t.key_levels, {_BALANCE} FROM team_members t JOIN accounts a ON a.id = t.account_id"
)


async def insert_account(
    db: Executor,
    *,
    username: str,
    email: str | None,
    password_hash: str,
    role: str,
    parent_id: int,
    now: int,
) -> int | None:
    """Create the account; None when the username is taken (usernames are unique across the
    whole service, owners included)."""
    account_id: int | None = await db.fetch_value(
        "INSERT INTO accounts (username, email, password_hash, role, parent_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (username) DO NOTHING RETURNING id",
        username,
        email,
        password_hash,
        role,
        parent_id,
        now,
    )
    return account_id


async def insert_member(
    db: Executor, *, account_id: int, app_id: int, permissions: int, key_levels: str
) -> None:
    await db.execute(
        "INSERT INTO team_members (account_id, app_id, permissions, key_levels) VALUES (?, ?, ?, ?)",
        account_id,
        app_id,
        permissions,
        key_levels,
    )


async def find_member(db: Executor, app_id: int, username: str) -> Row | None:
    """The team account of this name bound to this application, with its team row."""
    return await db.fetch_one(f"{_MEMBER} WHERE a.username = ? AND t.app_id = ?", username, app_id)


async def find_member_by_id(db: Executor, account_id: int) -> Row | None:
    return await db.fetch_one(f"{_MEMBER} WHERE t.account_id = ?", account_id)


async def find_caller(db: Executor, app_id: int, account_id: int | None) -> Row | None:
    """What a seller call needs to know about an account acting on an application (signed in, not
    through a seller key), in the shape of `sellerkeys.find_caller`: the application and its owner,
    and, when the account is not the owner (nor None), the account and its team row."""
    return await db.fetch_one(
        "SELECT a.id AS app_id, a.name AS app_name, a.ownerid, a.seller_log, a.account_id, "
        "o.disabled AS account_disabled, o.username AS owner, "
        "m.id AS member_account_id, m.username AS member_username, m.role AS member_role, "
        "m.disabled AS member_disabled, t.app_id AS member_app_id, t.permissions AS member_permissions, "
        "t.key_levels AS member_key_levels "
        "FROM apps a JOIN accounts o ON o.id = a.account_id "
        "LEFT JOIN accounts m ON m.id = ? AND m.id <> a.account_id "
        "LEFT JOIN team_members t ON t.account_id = m.id "
        "WHERE a.id = ?",
        account_id,
        app_id,
    )


async def list_members(db: Executor, app_id: int) -> list[Row]:
    """The application's team, oldest account first."""
    return await db.fetch_all(f"{_MEMBER} WHERE t.app_id = ? ORDER BY a.id", app_id)


async def delete_account(db: Executor, app_id: int, account_id: int) -> int:
    """Delete a team account of this application (run inside a transaction). Its seller keys go
    with it (foreign keys); the keys and users it created stay, their account link set to NULL.

    The team row goes first, so this takes its locks in the order a reseller's spending
    transaction does (team row, then the account), and the two can never deadlock."""
    if not await db.execute(
        "DELETE FROM team_members WHERE account_id = ? AND app_id = ?", account_id, app_id
    ):
        return 0
    return await db.execute("DELETE FROM accounts WHERE id = ?", account_id)


async def hold(db: Executor, account_id: int) -> int:
    """Lock the team row until the transaction ends (a no-op UPDATE takes the row lock on
    PostgreSQL; SQLite's BEGIN IMMEDIATE serialises writers already); 0 when it is gone.
    Every transaction that changes a team account or spends its balance starts here, so locks
    are always taken team row first."""
    return await db.execute(
        "UPDATE team_members SET balance_day = balance_day WHERE account_id = ?", account_id
    )


async def update_account(
    db: Executor,
    account_id: int,
    *,
    email: str | None = None,
    password_hash: str | None = None,
    disabled: bool | None = None,
) -> int:
    """Change the given fields (None: leave as is); the number of rows changed (0: no account)."""
    sets: list[str] = []
    args: list[object] = []
    if email is not None:
        sets.append("email = ?")
        args.append(email)
    if password_hash is not None:
        sets.append("password_hash = ?")
        args.append(password_hash)
    if disabled is not None:
        sets.append("disabled = ?")
        args.append(1 if disabled else 0)
    if not sets:
        sets.append("disabled = disabled")
    return await db.execute(f"UPDATE accounts SET {', '.join(sets)} WHERE id = ?", *args, account_id)


async def update_member(
    db: Executor, account_id: int, *, key_levels: str | None = None, permissions: int | None = None
) -> int:
    sets: list[str] = []
    args: list[object] = []
    if key_levels is not None:
        sets.append("key_levels = ?")
        args.append(key_levels)
    if permissions is not None:
        sets.append("permissions = ?")
        args.append(permissions)
    if not sets:
        return 0
    return await db.execute(
        f"UPDATE team_members SET {', '.join(sets)} WHERE account_id = ?", *args, account_id
    )


async def add_balance(db: Executor, account_id: int, deltas: Mapping[str, int], ceiling: int) -> Row | None:
    """Add to every bucket at once (negative amounts take away), only if each bucket stays
    between 0 and `ceiling`; the new balance, or None when the condition refused it (or the
    account is gone). One statement, so concurrent changes can never leave a bucket negative."""
    amounts = [deltas.get(bucket, 0) for bucket in BUCKETS]
    sets = ", ".join(f"{column} = {column} + ?" for column in _COLUMN.values())
    bounds = " AND ".join(f"{column} + ? BETWEEN 0 AND ?" for column in _COLUMN.values())
    bound_args: list[int] = []
    for amount in amounts:
        bound_args += [amount, ceiling]
    returning = ", ".join(_COLUMN.values())
    return await db.fetch_one(
        f"UPDATE team_members SET {sets} WHERE account_id = ? AND {bounds} RETURNING {returning}",
        *amounts,
        account_id,
        *bound_args,
    )


async def spend(db: Executor, account_id: int, bucket: str, units: int) -> int | None:
    """Take `units` from one bucket if it holds that many (a conditional UPDATE: concurrent
    spenders queue on the row and each sees the balance the previous one left); the bucket's
    balance after, or None when it held fewer."""
    column = _COLUMN[bucket]
    left: int | None = await db.fetch_value(
        f"UPDATE team_members SET {column} = {column} - ? WHERE account_id = ? AND {column} >= ? "
        f"RETURNING {column}",
        units,
        account_id,
        units,
    )
    return left


async def balance_of(db: Executor, account_id: int, bucket: str) -> int | None:
    value: int | None = await db.fetch_value(
        f"SELECT {_COLUMN[bucket]} FROM team_members WHERE account_id = ?", account_id
    )
    return value


# --- balance history ------------------------------------------------------------------------------

HISTORY_KEEP = 1000


class BalanceChange(TypedDict):
    id: int
    at: int
    bucket: str
    amount: int
    balance_after: int
    actor: str
    reason: str


async def record_changes(
    db: Executor,
    account_id: int,
    changes: Sequence[tuple[str, int, int]],
    *,
    at: int,
    actor: str,
    reason: str,
) -> None:
    """Add (bucket, amount, balance after) rows to the reseller's history, in the transaction of
    the change, and drop what falls beyond its newest HISTORY_KEEP rows."""
    if not changes:
        return
    await db.execute_many(
        "INSERT INTO balance_history (account_id, at, bucket, amount, balance_after, actor, reason) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(account_id, at, bucket, amount, after, actor, reason) for bucket, amount, after in changes],
    )
    await db.execute(
        "DELETE FROM balance_history WHERE account_id = ? AND id <= (SELECT id FROM balance_history "
        "WHERE account_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        account_id,
        account_id,
        HISTORY_KEEP,
    )


async def history(db: Executor, account_id: int, *, before: int | None, size: int) -> list[BalanceChange]:
    """Newest first, `size + 1` rows (the extra one says an older page exists), older than the
    id `before` when given."""
    rows = await db.fetch_all(
        "SELECT id, at, bucket, amount, balance_after, actor, reason FROM balance_history "
        "WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
        account_id,
        before if before is not None else 2**62,
        size + 1,
    )
    return cast(list[BalanceChange], rows)
