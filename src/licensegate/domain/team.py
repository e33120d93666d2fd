"""Team accounts of an application: resellers and managers.

Each is an account of its own (usernames are unique across the whole service) bound to exactly
one application by its team row. A manager holds a set of permission areas (never `team` or
`sellerkeys`). A reseller holds allowed key levels (none listed: any level) and a prepaid
balance per key duration; whatever time it gives out (keys it generates, users it creates or
extends) is paid for from the bucket matching the duration, in the same transaction as the
change, with a conditional UPDATE, so concurrent calls can never spend more than the balance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from licensegate.domain import errorcodes, events
from licensegate.domain import permissions as perms
from licensegate.domain.apps import check_name
from licensegate.domain.errors import ErrorCode
from licensegate.domain.permissions import (
    MANAGER,
    MANAGER_AREAS,
    OWNER_ONLY,
    RESELLER,
    RESELLER_AREAS,
    Reseller,
    SellerIdentity,
    parse_levels,
)
from licensegate.domain.sellerkeys import issue_key
from licensegate.passwords import Passwords
from licensegate.store import invitations as invitation_store
from licensegate.store import licenses as license_store
from licensegate.store import team as store
from licensegate.store import users as user_store
from licensegate.store.database import Database, Executor, Row

ROLES = (RESELLER, MANAGER)
BUCKETS = store.BUCKETS
SECONDS_PER_DAY = 86400
# The durations a reseller's balance pays for, by their length in seconds.
BUCKET_OF_SECONDS = {
    1 * SECONDS_PER_DAY: "day",
    7 * SECONDS_PER_DAY: "week",
    30 * SECONDS_PER_DAY: "month",
    90 * SECONDS_PER_DAY: "three_month",
    180 * SECONDS_PER_DAY: "six_month",
    365 * SECONDS_PER_DAY: "year",
}
LIFETIME_SECONDS = 3650 * SECONDS_PER_DAY  # this long or longer counts as "lifetime"
MAX_BALANCE = 1_000_000_000  # per bucket; also bounds one change, so sums fit a 32-bit column
MAX_LEVEL_LENGTH = 12
MAX_LEVELS = 100
ANY_LEVEL = frozenset({"n/a", "any", "*"})


# --- what a reseller may give out, and paying for it -------------------------------------------


def bucket_for(seconds: int) -> str:
    """The balance bucket that pays for this duration; refused when resellers do not sell it."""
    if seconds >= LIFETIME_SECONDS:
        return "lifetime"
    bucket = BUCKET_OF_SECONDS.get(seconds)
    if bucket is None:
        raise errorcodes.DURATION_NOT_SOLD(lifetime_days=LIFETIME_SECONDS // SECONDS_PER_DAY)
    return bucket


def check_level(reseller: Reseller, level: str) -> None:
    if not reseller.allows_level(level):
        raise errorcodes.LEVEL_NOT_ALLOWED(
            reseller=reseller.username, level=level, allowed=", ".join(reseller.key_levels)
        )


async def hold(tx: Executor, reseller: Reseller) -> None:
    """Start of every transaction in which a reseller spends: lock its team row first. Locks are
    then always taken team row first (deleteAccount does the same), so they cannot deadlock."""
    if not await store.hold(tx, reseller.account_id):
        raise errorcodes.UNKNOWN_SELLER_KEY(f"The reseller account '{reseller.username}' has been deleted.")


async def spend(tx: Executor, reseller: Reseller, bucket: str, units: int, *, reason: str, now: int) -> None:
    """Take `units` from the reseller's bucket, or refuse (403) when it holds fewer. Run inside
    the transaction that makes what is paid for (after `hold`), so a refusal undoes it; the
    change goes to the reseller's balance history in that same transaction."""
    if units <= 0:
        return
    left = await store.spend(tx, reseller.account_id, bucket, units)
    if left is None:
        held = await store.balance_of(tx, reseller.account_id, bucket) or 0
        raise errorcodes.INSUFFICIENT_BALANCE(
            units=units, bucket=bucket, reseller=reseller.username, left=held
        )
    actor = f"{reseller.username} ({reseller.via})" if reseller.via else reseller.username
    await store.record_changes(
        tx, reseller.account_id, [(bucket, -units, left)], at=now, actor=actor, reason=reason
    )


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# --- reading the team ---------------------------------------------------------------------------


def balance(row: Row) -> dict[str, int]:
    return {bucket: row[f"balance_{bucket}"] for bucket in BUCKETS}


def reseller_entry(row: Row) -> dict[str, Any]:
    return {
        "username": row["username"],
        "balance": balance(row),
        "key_levels": list(parse_levels(row["key_levels"])),
    }


def manager_entry(row: Row) -> dict[str, Any]:
    return {"username": row["username"], "permissions": perms.names(row["permissions"] & MANAGER_AREAS)}


async def list_team(db: Executor, app_id: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The application's resellers and managers, oldest first."""
    rows = await store.list_members(db, app_id)
    resellers = [reseller_entry(row) for row in rows if row["role"] == RESELLER]
    managers = [manager_entry(row) for row in rows if row["role"] == MANAGER]
    return resellers, managers


async def members(db: Executor, app_id: int) -> list[Row]:
    """The application's team accounts as stored (e-mail and disabled flag included), oldest first."""
    return await store.list_members(db, app_id)


_NOT_FOUND: dict[str | None, ErrorCode] = {
    None: errorcodes.ACCOUNT_NOT_FOUND,
    RESELLER: errorcodes.RESELLER_NOT_FOUND,
    MANAGER: errorcodes.MANAGER_NOT_FOUND,
}


async def get_member(db: Executor, app_id: int, username: str, role: str | None = None) -> Row:
    """A team account of this application (of this role, when given)."""
    row = await store.find_member(db, app_id, username)
    if row is None or (role is not None and row["role"] != role):
        raise _NOT_FOUND[role](username=username)
    return row


async def reseller_info(db: Executor, app_id: int, username: str) -> dict[str, Any]:
    row = await get_member(db, app_id, username, RESELLER)
    return {
        "username": row["username"],
        "email": row["email"],
        "balance": balance(row),
        "key_levels": list(parse_levels(row["key_levels"])),
        "disabled": row["disabled"],
    }


# --- input rules --------------------------------------------------------------------------------


def parse_role(text: str) -> str:
    role = text.strip().lower()
    if role not in ROLES:
        raise errorcodes.INVALID_ROLE()
    return role


def levels_text(text: str | None) -> str:
    """Key levels as given (separated by commas or `|`; `N/A` or `any`: any level) in their
    stored form: comma-separated, each once, '' for any level."""
    if text is None or text.strip().lower() in ANY_LEVEL:
        return ""
    levels: list[str] = []
    for part in text.replace("|", ",").split(","):
        level = part.strip()
        if not level or level in levels:
            continue
        if len(level) > MAX_LEVEL_LENGTH or any(ord(ch) < 32 or ord(ch) == 127 for ch in level):
            raise errorcodes.INVALID_LEVELS(
                f"Each key level is at most {MAX_LEVEL_LENGTH} characters, without control characters."
            )
        levels.append(level)
    if len(levels) > MAX_LEVELS:
        raise errorcodes.INVALID_LEVELS(maximum=MAX_LEVELS)
    return ",".join(levels)


def manager_permissions(text: str | None) -> int:
    """A manager's areas: `all` (or nothing given) means every area a manager can hold."""
    if text is None or text.strip().lower() == "all":
        return MANAGER_AREAS
    granted = perms.parse(text)
    if granted & OWNER_ONLY:
        raise errorcodes.INVALID_PERMISSIONS(
            "A manager cannot be given the 'team' or 'sellerkeys' areas; only the owner manages those."
        )
    return granted


def check_email(email: str) -> str:
    # Imported here: domain.users imports this module to charge resellers' balances.
    from licensegate.domain.users import check_email as check

    return check(email)


# --- changing the team ----------------------------------------------------------------------------


def key_areas(role: str) -> int:
    """The areas stored on a team member's seller key: everything its role can hold, so that
    what the member may do follows its team row (a manager's areas can change later)."""
    return MANAGER_AREAS if role == MANAGER else RESELLER_AREAS


@dataclass(frozen=True, slots=True)
class CreatedAccount:
    account_id: int
    username: str
    role: str
    sellerkey: str
    key_levels: tuple[str, ...]
    permissions: int


def _member_areas(row: Row) -> int:
    """The areas a team account holds now (its role narrows its team row)."""
    return perms.team_areas(row["role"], row["permissions"])


async def create_account(
    db: Database,
    passwords: Passwords,
    grantor: SellerIdentity,
    *,
    role: str,
    username: str,
    password: str,
    email: str | None,
    key_levels: str | None,
    permissions: str | None,
    now: int,
) -> CreatedAccount:
    """Create a reseller or manager of the grantor's application, with one seller key acting as
    it (returned once). A reseller starts with an empty balance. The grantor can only give what
    it holds: a manager's areas, or a reseller's `licenses` and `users`, must all be its own."""
    app_id, owner_account_id = grantor.app_id, grantor.account_id
    role = parse_role(role)
    username = check_name(username, "username")
    if email is not None:
        check_email(email)
    levels = levels_text(key_levels) if role == RESELLER else ""
    granted = manager_permissions(permissions) if role == MANAGER else RESELLER_AREAS
    perms.require_within(grantor, granted, f"create a {role} with these areas")
    # Hashing is slow on purpose: do it before the transaction opens.
    password_hash = await passwords.hash(password, queue=app_id)
    async with db.transaction() as tx:
        account_id = await store.insert_account(
            tx,
            username=username,
            email=email,
            password_hash=password_hash,
            role=role,
            parent_id=owner_account_id,
            now=now,
        )
        if account_id is None:
            raise errorcodes.ACCOUNT_EXISTS(username=username)
        await store.insert_member(
            tx, account_id=account_id, app_id=app_id, permissions=granted, key_levels=levels
        )
        sellerkey = await issue_key(
            tx, app_id=app_id, name=username, permissions=key_areas(role), now=now, account_id=account_id
        )
        await events.record(tx, app_id, "team.member_added", now, {"username": username, "role": role})
    return CreatedAccount(account_id, username, role, sellerkey, parse_levels(levels), granted)


async def made_by(db: Executor, app_id: int, account_id: int) -> tuple[int, int]:
    """(license keys it generated, users that belong to it): what a purging delete removes."""
    keys = await license_store.count(db, app_id, "all", reseller_id=account_id)
    return keys, await user_store.count(db, app_id, reseller_id=account_id)


@dataclass(frozen=True, slots=True)
class Deleted:
    account: Row  # the account as it was
    keys: int  # license keys it generated, deleted with it (purge)
    users: int  # users that belonged to it, deleted with it (purge)


async def delete_account(
    db: Database, app_id: int, username: str, *, now: int, purge: bool = False
) -> Deleted:
    """Delete a reseller or manager of this application with its seller keys. What it created
    stays (unlinked from it), unless `purge`: then the license keys it generated and the users
    that belong to it (a reseller's) go first."""
    row = await get_member(db, app_id, username)
    account_id = row["account_id"]
    keys = users = 0
    if purge:
        # Disabled first, so it makes nothing more while its keys and users are deleted (in
        # batches, not one transaction: see store.bulk).
        await store.update_account(db, account_id, disabled=True)
        report = await events.keys_deleted(db, app_id, "reseller", now, reseller=row["username"])
        keys = await license_store.delete_matching(db, app_id, "all", reseller_id=account_id, report=report)
        report = await events.users_deleted(db, app_id, "reseller", now)
        users = await user_store.delete_all(db, app_id, reseller_id=account_id, report=report)
    async with db.transaction() as tx:
        deleted = await store.delete_account(tx, app_id, account_id)
    if not deleted:
        raise errorcodes.ACCOUNT_NOT_FOUND(username=username)
    return Deleted(row, keys, users)


async def add_key(
    db: Database, grantor: SellerIdentity, username: str, name: str | None, now: int
) -> tuple[Row, str]:
    """Issue another seller key acting as this team account (returned once): only for a grantor
    that holds every area the account holds."""
    app_id = grantor.app_id
    async with db.transaction() as tx:
        row = await get_member(tx, app_id, username)
        perms.require_within(
            grantor, _member_areas(row), f"issue a seller key for the {row['role']} '{username}'"
        )
        # Holding the team row keeps a concurrent deleteAccount from removing it under the insert.
        if not await store.hold(tx, row["account_id"]):
            raise errorcodes.ACCOUNT_NOT_FOUND(username=username)
        key = await issue_key(
            tx,
            app_id=app_id,
            name=name or username,
            permissions=key_areas(row["role"]),
            now=now,
            account_id=row["account_id"],
        )
    return row, key


async def add_balance(
    db: Database,
    app_id: int,
    username: str,
    deltas: Mapping[str, int],
    *,
    actor: str,
    now: int,
    reason: str = "changed by the owner",
) -> dict[str, int]:
    """Add the amounts to the reseller's buckets (negative amounts take away), all at once or not
    at all, and record each bucket's change in its balance history. Refused (409) when a bucket
    would fall below zero or exceed MAX_BALANCE. Returns the new balance."""
    if not deltas:
        raise errorcodes.MISSING_PARAMETER(
            "Give at least one amount: day, week, month, threemonth, sixmonth, year or lifetime."
        )
    row = await get_member(db, app_id, username, RESELLER)
    for _attempt in range(3):
        async with db.transaction() as tx:
            changed = await store.add_balance(tx, row["account_id"], deltas, MAX_BALANCE)
            if changed is not None:
                after = balance(changed)
                moves = [(b, deltas[b], after[b]) for b in BUCKETS if deltas.get(b)]
                await store.record_changes(tx, row["account_id"], moves, at=now, actor=actor, reason=reason)
                return after
        current = await store.find_member_by_id(db, row["account_id"])
        if current is None:
            raise errorcodes.RESELLER_NOT_FOUND(username=username)
        now_held = balance(current)
        short = [b for b in BUCKETS if now_held[b] + deltas.get(b, 0) < 0]
        if short:
            raise errorcodes.BALANCE_WOULD_GO_NEGATIVE(
                "Insufficient balance: this would leave "
                + ", ".join(f"'{b}' at {now_held[b] + deltas.get(b, 0)}" for b in short)
                + "; nothing was changed."
            )
        if any(now_held[b] + deltas.get(b, 0) > MAX_BALANCE for b in BUCKETS):
            raise errorcodes.BALANCE_TOO_LARGE(maximum=MAX_BALANCE)
        # Otherwise another change landed between the two statements: try again.
    raise errorcodes.BALANCE_BUSY()


HISTORY_PAGE = 25


async def balance_history(
    db: Executor, account_id: int, *, before: int | None = None, size: int = HISTORY_PAGE
) -> tuple[list[store.BalanceChange], int | None]:
    """A page of the reseller's balance history, newest first, and the id to ask for the next
    (older) page with, or None when this is the oldest."""
    rows = await store.history(db, account_id, before=before, size=size)
    older = rows[size - 1]["id"] if len(rows) > size else None
    return rows[:size], older


async def edit_account(
    db: Database,
    passwords: Passwords,
    grantor: SellerIdentity,
    username: str,
    role: str,
    *,
    password: str | None = None,
    email: str | None = None,
    disabled: bool | None = None,
    key_levels: str | None = None,
    permissions: str | None = None,
) -> tuple[Row, Row]:
    """Change a reseller's (levels) or manager's (permissions) settings and the account's
    password, email or disabled flag. Returns the team row before and after. Only a grantor that
    holds every area the account holds, and every area it would get, may change it (a new
    password or e-mail would hand over a sign-in with those areas)."""
    app_id = grantor.app_id
    if email is not None:
        check_email(email)
    levels = levels_text(key_levels) if key_levels is not None and role == RESELLER else None
    granted = manager_permissions(permissions) if permissions is not None and role == MANAGER else None
    if password is None and email is None and disabled is None and levels is None and granted is None:
        raise errorcodes.MISSING_PARAMETER("Nothing to change: give at least one setting.")
    before = await get_member(db, app_id, username, role)
    perms.require_within(grantor, _member_areas(before) | (granted or 0), f"change the {role} '{username}'")
    password_hash = await passwords.hash(password, queue=app_id) if password is not None else None
    async with db.transaction() as tx:
        # The team row first, as every other team write does (see `hold`).
        if not await store.hold(tx, before["account_id"]):
            raise _NOT_FOUND[role](username=username)
        await store.update_account(
            tx, before["account_id"], email=email, password_hash=password_hash, disabled=disabled
        )
        if password_hash is not None:  # a password given: an invitation link is not needed
            await invitation_store.cancel(tx, before["account_id"])
        await store.update_member(tx, before["account_id"], key_levels=levels, permissions=granted)
        after = await store.find_member_by_id(tx, before["account_id"])
    assert after is not None
    return before, after
