"""SQL for owner accounts (sellers, resellers, managers): lookups, passwords, dashboard sign-in."""

from __future__ import annotations

from licensegate.store.database import Executor, Row

# An account as the dashboard needs it: with its team row (resellers and managers belong to one
# application) and whether it has a second factor, in one round trip.
ACCOUNT_COLUMNS = (
    "a.id, a.username, a.email, a.role, a.ownerid, a.parent_id, a.disabled, a.password_hash, "
    "a.created_at, a.last_login_at, CASE WHEN a.totp_secret IS NULL THEN 0 ELSE 1 END AS has_totp, "
    "(SELECT COUNT(*) FROM passkeys p WHERE p.account_id = a.id) AS passkeys, "
    "t.app_id AS team_app_id, t.permissions AS team_permissions, t.key_levels AS team_key_levels"
)
TEAM_JOIN = "LEFT JOIN team_members t ON t.account_id = a.id"
_SIGNIN = f"SELECT {ACCOUNT_COLUMNS} FROM accounts a {TEAM_JOIN}"


async def find_by_username(db: Executor, username: str) -> Row | None:
    return await db.fetch_one(
        "SELECT id, username, role, ownerid, parent_id, disabled FROM accounts WHERE username = ?",
        username,
    )


async def find_for_signin(db: Executor, username: str) -> Row | None:
    return await db.fetch_one(f"{_SIGNIN} WHERE a.username = ?", username)


async def get_for_signin(db: Executor, account_id: int) -> Row | None:
    return await db.fetch_one(f"{_SIGNIN} WHERE a.id = ?", account_id)


async def insert(
    db: Executor,
    *,
    username: str,
    role: str,
    ownerid: str | None,
    parent_id: int | None,
    now: int,
    password_hash: str | None = None,
    email: str | None = None,
) -> int:
    account_id: int = await db.fetch_value(
        "INSERT INTO accounts (username, role, ownerid, parent_id, password_hash, email, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
        username,
        role,
        ownerid,
        parent_id,
        password_hash,
        email,
        now,
    )
    return account_id


async def set_password(db: Executor, account_id: int, password_hash: str) -> int:
    return await db.execute("UPDATE accounts SET password_hash = ? WHERE id = ?", password_hash, account_id)


async def claim(db: Executor, account_id: int, password_hash: str) -> int:
    """Give a password to an owner account that has none yet (made by `create-app`); 0 when it
    has one meanwhile."""
    return await db.execute(
        "UPDATE accounts SET password_hash = ? WHERE id = ? AND password_hash IS NULL",
        password_hash,
        account_id,
    )


async def any_can_sign_in(db: Executor) -> bool:
    found = await db.fetch_value("SELECT 1 FROM accounts WHERE password_hash IS NOT NULL LIMIT 1")
    return found is not None


async def signed_in(db: Executor, account_id: int, now: int) -> None:
    await db.execute("UPDATE accounts SET last_login_at = ? WHERE id = ?", now, account_id)
