"""Who may do what to an application through the seller operations, whichever face they use (the
seller API with a seller key, the dashboard signed in to an account):

- permission areas, a bitmask shared by seller keys and manager accounts (as KeyAuth's managers
  use it);
- the caller's identity: the application's owner, or one of its team accounts (a reseller or a
  manager). A team account's areas are narrowed by its role: a manager keeps the areas its team
  row grants, never `team` or `sellerkeys`; a reseller only ever has `licenses` and `users`;
- the caller's scope: what it sees of the application. A reseller sees only the keys and users
  it created; the domain's seller-side functions take a `Scope` and apply it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from licensegate.domain import errorcodes
from licensegate.store import team as team_store
from licensegate.store.database import Executor, Row

Area = Literal[
    "licenses",
    "users",
    "subscriptions",
    "chats",
    "sessions",
    "webhooks",
    "files",
    "variables",
    "logs",
    "blacklists",
    "settings",
    "tokens",
    "team",
    "sellerkeys",
]
# Each area's bit; stored in seller keys and team rows, so a bit never changes meaning.
AREAS: dict[Area, int] = {
    "licenses": 1,
    "users": 2,
    "subscriptions": 4,
    "chats": 8,
    "sessions": 16,
    "webhooks": 32,
    "files": 64,
    "variables": 128,
    "logs": 256,
    "blacklists": 512,
    "settings": 1024,
    "tokens": 2048,
    "team": 4096,
    "sellerkeys": 8192,
}
ALL = sum(AREAS.values())


def allows(permissions: int, area: Area | Literal[""]) -> bool:
    """Whether `permissions` covers `area` (every caller may use an operation of no area)."""
    return area == "" or bool(permissions & AREAS[area])


def parse(text: str) -> int:
    """`all`, a bitmask number, or area names separated by commas."""
    text = text.strip().lower()
    if text == "all":
        return ALL
    if text.isascii() and text.isdigit():
        value = int(text)
        if value <= 0 or value & ~ALL:
            raise errorcodes.INVALID_PERMISSIONS(f"Permissions must be a bitmask between 1 and {ALL}.")
        return value
    value = 0
    for name in (part.strip() for part in text.split(",")):
        if name not in AREAS:
            raise errorcodes.INVALID_PERMISSIONS(name=name[:32], known=", ".join(AREAS))
        value |= AREAS[name]
    return value


def names(permissions: int) -> list[str]:
    return [name for name, bit in AREAS.items() if permissions & bit]


# --- roles -------------------------------------------------------------------------------------

Role = Literal["owner", "reseller", "manager"]
OWNER: Role = "owner"
RESELLER: Role = "reseller"
MANAGER: Role = "manager"
# Areas only the application owner may ever use: managing the team and the seller keys.
OWNER_ONLY = AREAS["team"] | AREAS["sellerkeys"]
MANAGER_AREAS = ALL & ~OWNER_ONLY
RESELLER_AREAS = AREAS["licenses"] | AREAS["users"]


def team_areas(role: str, granted: int) -> int:
    """The areas a team account of this role may use, given what its team row grants."""
    if role == MANAGER:
        return granted & MANAGER_AREAS
    if role == RESELLER:
        return RESELLER_AREAS
    return 0


def parse_levels(text: str) -> tuple[str, ...]:
    """Stored key levels (comma-separated; empty = any level) as a tuple."""
    return tuple(level for level in text.split(",") if level)


# --- who calls, and what they see ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reseller:
    """A reseller caller: it sees only the keys and users it created, may only make keys of its
    allowed levels, and pays for the time it gives out of its balance."""

    account_id: int
    username: str
    key_levels: tuple[str, ...] = ()  # empty: any level
    # How it came in (the dashboard, a seller key), for its balance history; not part of who it is.
    via: str = field(default="", compare=False)

    def allows_level(self, level: str) -> bool:
        return not self.key_levels or level in self.key_levels


@dataclass(frozen=True, slots=True)
class Scope:
    """What one caller sees of one application: all of it, or, for a reseller, only the keys and
    users it created (any other is "not found" to it, and bulk operations act on its own)."""

    app_id: int
    reseller: Reseller | None = None

    @property
    def reseller_id(self) -> int | None:
        """The account whose keys and users alone are visible, or None for all of them."""
        return None if self.reseller is None else self.reseller.account_id


@dataclass(frozen=True, slots=True)
class SellerIdentity:
    app_id: int
    app_name: str
    ownerid: str
    owner: str  # the application owner's username
    account_id: int  # the application owner's account
    permissions: int  # the areas this caller may use (already narrowed for team members)
    seller_log: bool  # the application records every seller call
    role: Role = OWNER
    member_account_id: int | None = None  # the team account acting (None: the owner)
    member_username: str | None = None
    key_levels: tuple[str, ...] = ()  # resellers: the levels they may sell (empty: any)
    key_id: int | None = None  # the seller key used (None: signed in to an account)
    key_name: str | None = None  # that key's name (its prefix when it has none)

    @property
    def acting_account_id(self) -> int:
        """The account doing what this call does: the team member, or else the owner."""
        return self.account_id if self.member_account_id is None else self.member_account_id

    @property
    def reseller(self) -> Reseller | None:
        """The reseller this caller is limited to, or None for the owner and managers."""
        if self.role != RESELLER or self.member_account_id is None or self.member_username is None:
            return None
        via = "dashboard" if self.key_id is None else f"seller API, key '{self.key_name}'"
        return Reseller(self.member_account_id, self.member_username, self.key_levels, via)

    @property
    def scope(self) -> Scope:
        return Scope(self.app_id, self.reseller)


def require(identity: SellerIdentity, area: Area | Literal[""], operation: str) -> None:
    """Refuse an operation of an area the caller may not use."""
    if not allows(identity.permissions, area):
        who = "This seller key" if identity.role == OWNER else f"A {identity.role}"
        raise errorcodes.PERMISSION_DENIED(who=who, operation=operation, area=area)


def require_within(identity: SellerIdentity, areas: int, action: str) -> None:
    """A caller can only give what it holds: refuse `action` when it would hand out (or touch an
    account or key holding) `areas` beyond the caller's own."""
    beyond = areas & ~identity.permissions
    if beyond:
        raise errorcodes.BEYOND_OWN_AREAS(action=action, areas=", ".join(names(beyond)))


def identity_of(
    row: Row, *, granted: int, key_id: int | None = None, key_name: str | None = None
) -> SellerIdentity:
    """The identity described by a caller row (`store.sellerkeys.find_caller`,
    `store.team.find_caller`): the owner with the areas `granted`, or a team member with them
    narrowed by its role. A team account no longer on the application's team, or disabled, is
    refused."""
    base: dict[str, Any] = {
        "key_id": key_id,
        "key_name": key_name,
        "app_id": row["app_id"],
        "app_name": row["app_name"],
        "ownerid": row["ownerid"],
        "owner": row["owner"],
        "account_id": row["account_id"],
        "seller_log": bool(row["seller_log"]),
    }
    member_id: int | None = row["member_account_id"]
    if member_id is None:
        return SellerIdentity(permissions=granted, **base)
    role = row["member_role"]
    # Team accounts are bound to one application; anything else means the account is no longer
    # (or never was) on this application's team.
    if role not in (RESELLER, MANAGER) or row["member_app_id"] != row["app_id"]:
        raise errorcodes.ACCOUNT_NOT_IN_TEAM()
    if row["member_disabled"]:
        raise errorcodes.ACCOUNT_DISABLED(f"The {role} account '{row['member_username']}' is disabled.")
    return SellerIdentity(
        permissions=granted & team_areas(role, row["member_permissions"]),
        role=role,
        member_account_id=member_id,
        member_username=row["member_username"],
        key_levels=parse_levels(row["member_key_levels"] or "") if role == RESELLER else (),
        **base,
    )


async def identity_of_account(db: Executor, app_id: int, account_id: int | None) -> SellerIdentity:
    """The identity of an account acting on one application without a seller key (signed in to
    the dashboard, say): its owner, with every area, or a reseller or manager of its team, with
    the areas its role allows. `account_id` None is the owner (the command line acts as the
    owner)."""
    row = await team_store.find_caller(db, app_id, account_id)
    if row is None:
        raise errorcodes.APP_NOT_FOUND()
    if row["account_disabled"]:
        raise errorcodes.ACCOUNT_DISABLED()
    if account_id not in (None, row["account_id"]) and row["member_account_id"] is None:
        raise errorcodes.ACCOUNT_NOT_IN_TEAM("This account is not on this application's team.")
    return identity_of(row, granted=ALL)
