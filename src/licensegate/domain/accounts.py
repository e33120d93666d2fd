"""Dashboard accounts: owners (sellers), resellers and managers, as the dashboard sees them, and
the rules for their passwords. Resellers and managers are made by their owner (domain/team);
owners by `licensegate create-account`, the first-run setup link, or sign-up when it is on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain import permissions as perms
from licensegate.domain.apps import check_name
from licensegate.domain.permissions import MANAGER, OWNER, RESELLER, parse_levels, team_areas
from licensegate.domain.users import check_email
from licensegate.passwords import Passwords
from licensegate.store import accounts as store
from licensegate.store import emailchanges as email_store
from licensegate.store import websessions as session_store
from licensegate.store.database import Database, Executor, Row, UniqueViolation

MIN_PASSWORD = 8  # NIST SP 800-63B: at least 8, allow at least 64, no composition rules
MAX_PASSWORD = 256
SELLER = "seller"  # how owners are stored (KeyAuth's word); the dashboard says "owner"
# Runs inside the transaction that makes or claims an account (e.g. spends a setup link): a
# refusal it raises undoes the whole change.
Guard = Callable[[Executor], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Account:
    id: int
    username: str
    role: str  # owner | reseller | manager
    email: str | None
    ownerid: str | None  # owners only
    app_id: int | None  # resellers and managers: the one application they belong to
    permissions: int  # the areas it may use: every area for owners
    key_levels: tuple[str, ...]  # resellers: the levels they may give (empty: any)
    has_totp: bool
    passkeys: int
    last_login_at: int | None = None

    @property
    def second_factor(self) -> bool:
        return bool(self.has_totp or self.passkeys > 0)

    @property
    def is_owner(self) -> bool:
        return self.role == OWNER

    def allows(self, area: perms.Area | Literal[""]) -> bool:
        return perms.allows(self.permissions, area)


def from_row(row: Row) -> Account | None:
    """The account as the dashboard sees it; None when it cannot use the dashboard (disabled, or a
    reseller/manager no longer on any team)."""
    if row["disabled"]:
        return None
    stored_role: str = row["role"]
    levels: tuple[str, ...]
    if stored_role == SELLER:
        role, app_id, permissions, levels = OWNER, None, perms.ALL, ()
    elif stored_role in (RESELLER, MANAGER) and row["team_app_id"] is not None:
        role, app_id = stored_role, row["team_app_id"]
        permissions = team_areas(stored_role, row["team_permissions"])
        levels = parse_levels(row["team_key_levels"] or "") if stored_role == RESELLER else ()
    else:
        return None
    return Account(
        id=row["id"],
        username=row["username"],
        role=role,
        email=row["email"],
        ownerid=row["ownerid"],
        app_id=app_id,
        permissions=permissions,
        key_levels=levels,
        has_totp=bool(row["has_totp"]),
        passkeys=int(row["passkeys"]),
        last_login_at=row["last_login_at"],
    )


def check_password(password: str, username: str = "") -> str:
    if len(password) < MIN_PASSWORD or len(password) > MAX_PASSWORD:
        raise errorcodes.INVALID_PASSWORD(f"A password is {MIN_PASSWORD} to {MAX_PASSWORD} characters long.")
    if username and password.strip().lower() == username.strip().lower():
        raise errorcodes.INVALID_PASSWORD("The password must not be the username.")
    return password


async def get(db: Executor, account_id: int) -> Account | None:
    row = await store.get_for_signin(db, account_id)
    return None if row is None else from_row(row)


async def create_owner(
    db: Database,
    passwords: Passwords,
    *,
    username: str,
    password: str,
    email: str | None,
    now: int,
    guard: Guard | None = None,
    claim: bool = False,
) -> Account:
    """A new owner account that can sign in to the dashboard at once. With `claim` (the first-run
    setup), an owner `create-app` made without a password gets this one instead."""
    username = check_name(username, "username")
    if claim:
        existing = await store.find_for_signin(db, username)
        if existing is not None and existing["role"] == SELLER and existing["password_hash"] is None:
            return await claim_owner(db, passwords, username=username, password=password, guard=guard)
    check_password(password, username)
    if email:
        check_email(email)
    password_hash = await passwords.hash(password)  # slow: before the transaction
    try:
        async with db.transaction() as tx:
            if guard is not None:
                await guard(tx)
            if await store.find_by_username(tx, username) is not None:
                raise errorcodes.ACCOUNT_EXISTS(username=username)
            account_id = await store.insert(
                tx,
                username=username,
                role=SELLER,
                ownerid=ids.ownerid(),
                parent_id=None,
                now=now,
                password_hash=password_hash,
                email=email or None,
            )
    except UniqueViolation as exc:
        raise errorcodes.ACCOUNT_EXISTS(username=username) from exc
    account = await get(db, account_id)
    assert account is not None
    return account


async def claim_owner(
    db: Database, passwords: Passwords, *, username: str, password: str, guard: Guard | None = None
) -> Account:
    """Give a password to an existing owner account that has none (one `create-app` made)."""
    row = await store.find_for_signin(db, username)
    if row is None or row["role"] != SELLER or row["password_hash"] is not None:
        raise errorcodes.ACCOUNT_EXISTS(username=username)
    check_password(password, username)
    password_hash = await passwords.hash(password)
    async with db.transaction() as tx:
        if guard is not None:
            await guard(tx)
        if not await store.claim(tx, row["id"], password_hash):
            raise errorcodes.ACCOUNT_EXISTS(username=username)
    account = await get(db, row["id"])
    assert account is not None
    return account


async def confirm_password(db: Executor, passwords: Passwords, account_id: int, password: str) -> None:
    """Refuse unless `password` is the account's (asked again before sensitive changes)."""
    row = await store.get_for_signin(db, account_id)
    stored = row["password_hash"] if row is not None else None
    if not await passwords.verify(stored or passwords.dummy_hash, password) or stored is None:
        raise errorcodes.WRONG_PASSWORD()


async def change_password(
    db: Database,
    passwords: Passwords,
    account: Account,
    *,
    current: str,
    new: str,
    keep_session: int | None,
) -> int:
    """Set a new password and end every other dashboard session of the account; returns how many
    sessions ended."""
    check_password(new, account.username)
    await confirm_password(db, passwords, account.id, current)
    new_hash = await passwords.hash(new)
    async with db.transaction() as tx:
        await store.set_password(tx, account.id, new_hash)
        # A link to change the address asked for before the new password no longer counts.
        await email_store.cancel(tx, account.id)
        return await session_store.delete_for_account(tx, account.id, keep=keep_session)


async def set_password(db: Database, passwords: Passwords, username: str, password: str) -> Account:
    """The operator's reset (command line): a new password, every session ended."""
    row = await store.find_for_signin(db, username)
    if row is None:
        raise errorcodes.ACCOUNT_NOT_FOUND(f"No account is named '{username}'.")
    check_password(password, username)
    new_hash = await passwords.hash(password)
    async with db.transaction() as tx:
        await store.set_password(tx, row["id"], new_hash)
        await session_store.delete_for_account(tx, row["id"])
    account = await get(db, row["id"])
    if account is None:
        raise errorcodes.ACCOUNT_DISABLED(f"The account '{username}' is disabled or on no team.")
    return account


async def any_can_sign_in(db: Executor) -> bool:
    return await store.any_can_sign_in(db)
