"""Seller keys: the credential of the seller API. Each belongs to one application and carries a
set of permission areas; only a digest of the key is stored.

A key either is the application owner's or acts as one team account of that application (a
reseller or a manager). What a team member's key may do is the key's areas narrowed by the
account's role: a manager keeps the areas its team row grants, never `team` or `sellerkeys`;
a reseller only ever has `licenses` and `users`, limited to the keys and users it created.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain import permissions as perms
from licensegate.store import sellerkeys as store
from licensegate.store.database import Executor, Row

KEY_FORMAT = re.compile(r"[0-9a-f]{32}")
TOUCH_INTERVAL = 60  # seconds between `last_used_at` writes for one key

OWNER, RESELLER, MANAGER = "owner", "reseller", "manager"
# Areas only the application owner may ever use: managing the team and the seller keys.
OWNER_ONLY = perms.AREAS["team"] | perms.AREAS["sellerkeys"]
MANAGER_AREAS = perms.ALL & ~OWNER_ONLY
RESELLER_AREAS = perms.AREAS["licenses"] | perms.AREAS["users"]


@dataclass(frozen=True, slots=True)
class Reseller:
    """A reseller caller: it sees only the keys and users it created, may only make keys of its
    allowed levels, and pays for the time it gives out of its balance."""

    account_id: int
    username: str
    key_levels: tuple[str, ...] = ()  # empty: any level

    def allows_level(self, level: str) -> bool:
        return not self.key_levels or level in self.key_levels


@dataclass(frozen=True, slots=True)
class SellerIdentity:
    key_id: int
    app_id: int
    app_name: str
    ownerid: str
    owner: str  # the application owner's username
    account_id: int  # the application owner's account
    permissions: int  # the areas this call may use (already narrowed for team members)
    seller_log: bool
    role: str = OWNER  # owner | reseller | manager
    member_account_id: int | None = None  # the team account the key acts as (None: the owner)
    member_username: str | None = None
    key_levels: tuple[str, ...] = ()  # resellers: the levels they may sell (empty: any)

    @property
    def acting_account_id(self) -> int:
        """The account doing what this call does: the team member, or else the owner."""
        return self.account_id if self.member_account_id is None else self.member_account_id

    @property
    def reseller(self) -> Reseller | None:
        """The reseller this call is limited to, or None for the owner and managers."""
        if self.role != RESELLER or self.member_account_id is None or self.member_username is None:
            return None
        return Reseller(self.member_account_id, self.member_username, self.key_levels)


def parse_levels(text: str) -> tuple[str, ...]:
    """Stored key levels (comma-separated; empty = any level) as a tuple."""
    return tuple(level for level in text.split(",") if level)


def team_areas(role: str, granted: int) -> int:
    """The areas a team account of this role may use, given what its team row grants."""
    if role == MANAGER:
        return granted & MANAGER_AREAS
    if role == RESELLER:
        return RESELLER_AREAS
    return 0


async def issue_key(
    db: Executor,
    *,
    app_id: int,
    name: str,
    permissions: int | None,
    now: int,
    account_id: int | None = None,
) -> str:
    """A new key for the application, acting as the owner or (`account_id`) as a team account
    of this application. Returned once; only its digest is stored."""
    key = ids.seller_key()
    await store.insert(
        db,
        app_id=app_id,
        key_hash=ids.digest(key),
        prefix=key[:6],
        name=name,
        permissions=perms.ALL if permissions is None else permissions,
        now=now,
        account_id=account_id,
    )
    return key


def _identity(row: Row) -> SellerIdentity:
    base: dict[str, Any] = {
        "key_id": row["key_id"],
        "app_id": row["app_id"],
        "app_name": row["app_name"],
        "ownerid": row["ownerid"],
        "owner": row["owner"],
        "account_id": row["account_id"],
        "seller_log": bool(row["seller_log"]),
    }
    member_id: int | None = row["member_account_id"]
    if member_id is None:
        return SellerIdentity(permissions=row["permissions"], **base)
    role: str | None = row["member_role"]
    # Keys are issued per application, so a member's team row is bound to the key's application;
    # anything else means the account is no longer (or never was) on this application's team.
    if role not in (RESELLER, MANAGER) or row["member_app_id"] != row["app_id"]:
        raise errorcodes.ACCOUNT_NOT_IN_TEAM()
    if row["member_disabled"]:
        raise errorcodes.ACCOUNT_DISABLED(f"The {role} account '{row['member_username']}' is disabled.")
    return SellerIdentity(
        permissions=row["permissions"] & team_areas(role, row["member_permissions"]),
        role=role,
        member_account_id=member_id,
        member_username=row["member_username"],
        key_levels=parse_levels(row["member_key_levels"] or "") if role == RESELLER else (),
        **base,
    )


async def authenticate(db: Executor, key: str | None, now: int) -> SellerIdentity:
    if key is None or key.strip() == "":
        raise errorcodes.MISSING_SELLER_KEY()
    key = key.strip()
    if not KEY_FORMAT.fullmatch(key):
        raise errorcodes.INVALID_SELLER_KEY()
    row = await store.find_caller(db, ids.digest(key))
    if row is None:
        raise errorcodes.UNKNOWN_SELLER_KEY()
    if row["account_disabled"]:
        raise errorcodes.ACCOUNT_DISABLED()
    identity = _identity(row)
    last_used = row["last_used_at"]
    if last_used is None or now - last_used >= TOUCH_INTERVAL:
        await store.touch(db, row["key_id"], now)
    return identity


def require(identity: SellerIdentity, area: perms.Area | Literal[""], operation: str) -> None:
    if not perms.allows(identity.permissions, area):
        who = "This seller key" if identity.role == OWNER else f"A {identity.role}"
        raise errorcodes.PERMISSION_DENIED(who=who, operation=operation, area=area)


async def create(db: Executor, identity: SellerIdentity, *, name: str, permissions: int, now: int) -> str:
    return await issue_key(db, app_id=identity.app_id, name=name, permissions=permissions, now=now)


async def list_keys(db: Executor, identity: SellerIdentity) -> list[dict[str, Any]]:
    return [
        {
            "id": str(row["id"]),
            "name": row["name"],
            "prefix": row["prefix"],
            "permissions": perms.names(row["permissions"]),
            "created_at": row["created_at"],
            "last_used_at": row["last_used_at"],
            "current": row["id"] == identity.key_id,
            # None: the owner's key; otherwise the reseller or manager it acts as.
            "account": row["account"],
            "role": row["account_role"] or "owner",
        }
        for row in await store.list_for_app(db, identity.app_id)
    ]


async def delete(db: Executor, identity: SellerIdentity, key_id: int) -> None:
    if key_id == identity.key_id:
        raise errorcodes.CANNOT_DELETE_OWN_KEY()
    if await store.delete(db, identity.app_id, key_id) == 0:
        raise errorcodes.SELLER_KEY_NOT_FOUND()
