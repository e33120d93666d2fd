"""SQL for usage credits: a balance of a user or of a key, its refill rule, spending it."""

from __future__ import annotations

from typing import Literal, TypedDict, cast

from licensegate.store.database import Executor

Owner = Literal["user", "key"]
_COLUMN: dict[Owner, str] = {"user": "user_id", "key": "key_id"}
_COLUMNS = "id, balance, spent, refill_amount, refill_period, refill_minute, refilled_at"


class CreditRow(TypedDict):
    id: int
    balance: int
    spent: int
    refill_amount: int | None
    refill_period: str | None
    refill_minute: int
    refilled_at: int


async def get(db: Executor, owner: Owner, owner_id: int) -> CreditRow | None:
    row = await db.fetch_one(f"SELECT {_COLUMNS} FROM credit_balances WHERE {_COLUMN[owner]} = ?", owner_id)
    return cast(CreditRow, dict(row)) if row is not None else None


async def get_by_id(db: Executor, credit_id: int) -> CreditRow | None:
    row = await db.fetch_one(f"SELECT {_COLUMNS} FROM credit_balances WHERE id = ?", credit_id)
    return cast(CreditRow, dict(row)) if row is not None else None


async def for_session(db: Executor, app_id: int, user_id: int, credential: str | None) -> CreditRow | None:
    """The balance a session spends: the key it logged in with when that key has one, else the
    user's (one statement: the key's row sorts first)."""
    row = await db.fetch_one(
        f"SELECT {_COLUMNS} FROM credit_balances WHERE user_id = ? OR key_id = "
        "(SELECT id FROM license_keys WHERE app_id = ? AND key = ?) "
        "ORDER BY CASE WHEN key_id IS NULL THEN 1 ELSE 0 END LIMIT 1",
        user_id,
        app_id,
        credential,
    )
    return cast(CreditRow, dict(row)) if row is not None else None


async def set_balance(db: Executor, app_id: int, owner: Owner, owner_id: int, balance: int, now: int) -> None:
    """Create the owner's balance or set it (its refill rule and what was spent stay)."""
    column = _COLUMN[owner]
    await db.execute(
        f"INSERT INTO credit_balances (app_id, {column}, balance, refilled_at, created_at) "
        f"VALUES (?, ?, ?, ?, ?) ON CONFLICT ({column}) DO UPDATE SET balance = excluded.balance",
        app_id,
        owner_id,
        balance,
        now,
        now,
    )


async def add(db: Executor, credit_id: int, amount: int, maximum: int) -> int | None:
    """Add `amount` (negative: take) when the result stays within 0..maximum (a conditional
    UPDATE); the balance after, or None when it would not."""
    after: int | None = await db.fetch_value(
        "UPDATE credit_balances SET balance = balance + ? WHERE id = ? AND balance + ? >= 0 "
        "AND balance + ? <= ? RETURNING balance",
        amount,
        credit_id,
        amount,
        amount,
        maximum,
    )
    return after


async def set_refill(
    db: Executor, credit_id: int, amount: int | None, period: str | None, minute: int, now: int
) -> None:
    """Set (or clear, with None) the refill rule; the next refill is the first boundary after now."""
    await db.execute(
        "UPDATE credit_balances SET refill_amount = ?, refill_period = ?, refill_minute = ?, "
        "refilled_at = ? WHERE id = ?",
        amount,
        period,
        minute,
        now,
        credit_id,
    )


async def refill(db: Executor, credit_id: int, amount: int, boundary: int) -> int | None:
    """Top the balance up to `amount` for the refill due at `boundary`, once: only while the last
    boundary applied is older (so concurrent readers apply it once). The balance after, or None
    when another reader applied it first."""
    after: int | None = await db.fetch_value(
        "UPDATE credit_balances SET balance = CASE WHEN balance < ? THEN ? ELSE balance END, "
        "refilled_at = ? WHERE id = ? AND refilled_at < ? RETURNING balance",
        amount,
        amount,
        boundary,
        credit_id,
        boundary,
    )
    return after


async def spend(db: Executor, credit_id: int, cost: int) -> int | None:
    """Take `cost` if the balance holds that much (concurrent spenders queue on the row and each
    sees the balance the previous one left); the balance after, or None when it held less."""
    left: int | None = await db.fetch_value(
        "UPDATE credit_balances SET balance = balance - ?, spent = spent + ? WHERE id = ? AND balance >= ? "
        "RETURNING balance",
        cost,
        cost,
        credit_id,
        cost,
    )
    return left


async def delete(db: Executor, owner: Owner, owner_id: int) -> bool:
    removed = await db.execute(f"DELETE FROM credit_balances WHERE {_COLUMN[owner]} = ?", owner_id)
    return removed > 0


async def app_has_any(db: Executor, app_id: int) -> bool:
    """Whether the application has any credit balance (one seek of the (app_id, id) index)."""
    found = await db.fetch_value("SELECT 1 FROM credit_balances WHERE app_id = ? LIMIT 1", app_id)
    return found is not None
