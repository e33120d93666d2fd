"""Seller API — Reseller & Manager: the application's team accounts, resellers' balances and
managers' permissions."""

from __future__ import annotations

from typing import Any

from licensegate.domain import permissions, team
from licensegate.domain.permissions import MANAGER, RESELLER, Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry
from licensegate.store.database import Row

GROUP = "Reseller & Manager"
AREA: Area = "team"
MAX_NAME = 64

USER = Param("user", required=True, max_length=MAX_NAME, aliases=("username",), doc="the account's username")
USERNAME = Param(
    "username", required=True, max_length=MAX_NAME, aliases=("user",), doc="the account's username"
)
PASSWORD = Param(
    "pass", max_length=256, strip=False, secret=True, doc="a new password for the dashboard sign-in"
)
EMAIL = Param("email", max_length=254, doc="email address")
DISABLED = Param("disabled", "bool", max_length=5, doc="1: the account (and its seller keys) stops working")
KEY_LEVELS = Param(
    "keylevels",
    max_length=1024,
    doc="levels the reseller may sell, separated by commas (`1,2,3`); `N/A` or `any`: any level",
)
PERMS = Param(
    "perms",
    max_length=256,
    doc="the manager's areas: `all`, a bitmask or area names separated by commas, from: "
    + ", ".join(a for a in permissions.AREAS if a not in ("team", "sellerkeys")),
)
BALANCE_ENTRY = "{day, week, month, three_month, six_month, year, lifetime}: units left per key duration"
RESELLERS = f"[{{username, balance: {BALANCE_ENTRY}, key_levels: [level] (empty: any)}}], oldest first"
MANAGERS = "[{username, permissions: [area]}], oldest first"
# setbalance's parameter for each bucket (KeyAuth's names).
AMOUNTS = {
    "day": "day",
    "week": "week",
    "month": "month",
    "threemonth": "three_month",
    "sixmonth": "six_month",
    "year": "year",
    "lifetime": "lifetime",
}


def _target(username: str) -> str:
    return f"account:{username}"


def _settings(row: Row) -> dict[str, Any]:
    """An account's settings as the audit log shows them (never its password)."""
    shown: dict[str, Any] = {"role": row["role"], "email": row["email"], "disabled": row["disabled"]}
    if row["role"] == RESELLER:
        shown["key_levels"] = row["key_levels"]
    else:
        shown["permissions"] = permissions.names(row["permissions"])
    return shown


@registry.operation(
    "addAccount",
    group=GROUP,
    summary="Create Reseller",
    area=AREA,
    mutates=True,
    params=[
        Param("role", required=True, max_length=16, doc="`Reseller` or `Manager` (any case)"),
        Param(
            "user",
            required=True,
            max_length=MAX_NAME,
            aliases=("username",),
            doc="username, unique across the service",
        ),
        Param("pass", required=True, max_length=256, strip=False, secret=True, doc="password"),
        EMAIL,
        Param(
            KEY_LEVELS.name,
            max_length=KEY_LEVELS.max_length,
            doc=f"resellers: {KEY_LEVELS.doc} (default any)",
        ),
        Param(PERMS.name, max_length=PERMS.max_length, doc=f"managers: {PERMS.doc} (default all of them)"),
    ],
    returns={
        "message": "`Successfully created account!`",
        "username": "the new account's username",
        "role": "`reseller` or `manager`",
        "sellerkey": "a seller key acting as the new account; shown this once, only its digest is stored",
    },
)
async def add_account(call: SellerCall) -> dict[str, Any]:
    """Create a reseller (role=Reseller) or a manager (role=Manager) of this application, with a
    seller key acting as it. Resellers only ever use the License and Users groups, limited to
    what they created; managers use the areas in `perms`. A reseller starts with an empty
    balance. `perms` is ignored for resellers and `keylevels` for managers."""
    args = call.args
    created = await team.create_account(
        call.db,
        call.services.passwords,
        call.identity,
        role=args.text("role"),
        username=args.text("user"),
        password=args.text("pass"),
        email=args.opt_text("email"),
        key_levels=args.opt_text("keylevels"),
        permissions=args.opt_text("perms"),
        now=call.now(),
    )
    after: dict[str, Any] = {"role": created.role, "email": args.opt_text("email")}
    if created.role == RESELLER:
        after["key_levels"] = list(created.key_levels)
    else:
        after["permissions"] = permissions.names(created.permissions)
    call.record(_target(created.username), before=None, after=after)
    return {
        "message": "Successfully created account!",
        "username": created.username,
        "role": created.role,
        "sellerkey": created.sellerkey,
    }


@registry.operation(
    "deleteAccount",
    group=GROUP,
    summary="Delete Reseller",
    area=AREA,
    mutates=True,
    params=[
        USER,
        Param(
            "purge",
            "bool",
            max_length=5,
            doc="1: also delete the license keys it generated and the users that belong to it "
            "(default 0: they stay)",
        ),
    ],
    returns={
        "message": "`Successfully deleted account!`",
        "deletedkeys": "license keys deleted with it (0 without purge)",
        "deletedusers": "users deleted with it (0 without purge)",
    },
)
async def delete_account(call: SellerCall) -> dict[str, Any]:
    """Delete a reseller or manager of this application (also serves "Delete Manager") and its
    seller keys. The keys and users it created stay, unless purge=1."""
    purge = call.args.flag("purge")
    gone = await team.delete_account(
        call.db, call.app_id, call.args.text("user"), purge=purge, now=call.now()
    )
    after = {"deleted_keys": gone.keys, "deleted_users": gone.users} if purge else None
    call.record(_target(gone.account["username"]), before=_settings(gone.account), after=after)
    return {"message": "Successfully deleted account!", "deletedkeys": gone.keys, "deletedusers": gone.users}


@registry.operation(
    "fetchteam",
    group=GROUP,
    summary="Get Team",
    area=AREA,
    returns={"resellers": RESELLERS, "managers": MANAGERS},
)
async def fetch_team(call: SellerCall) -> dict[str, Any]:
    """Every reseller and manager of this application."""
    resellers, managers = await team.list_team(call.db, call.app_id)
    return {"message": "Successfully retrieved team", "resellers": resellers, "managers": managers}


@registry.operation(
    "fetchresellers",
    group=GROUP,
    summary="Get All Resellers",
    area=AREA,
    returns={"resellers": RESELLERS},
)
async def fetch_resellers(call: SellerCall) -> dict[str, Any]:
    """Every reseller of this application with its balance and allowed levels."""
    resellers, _ = await team.list_team(call.db, call.app_id)
    return {"message": "Successfully retrieved resellers", "resellers": resellers}


@registry.operation(
    "fetchmanagers",
    group=GROUP,
    summary="Get Managers",
    area=AREA,
    returns={"managers": MANAGERS},
)
async def fetch_managers(call: SellerCall) -> dict[str, Any]:
    """Every manager of this application with its permission areas."""
    _, managers = await team.list_team(call.db, call.app_id)
    return {"message": "Successfully retrieved managers", "managers": managers}


@registry.operation(
    "getbalance",
    group=GROUP,
    summary="Get Reseller Information",
    area=AREA,
    params=[USERNAME],
    returns={
        "username": "the reseller's username",
        "email": "or null",
        "balance": BALANCE_ENTRY,
        "key_levels": "[level] the reseller may sell (empty: any)",
        "disabled": "0 or 1",
    },
)
async def get_balance(call: SellerCall) -> dict[str, Any]:
    """One reseller's balance, allowed levels and state."""
    info = await team.reseller_info(call.db, call.app_id, call.args.text("username"))
    return {"message": "Successfully retrieved reseller", **info}


@registry.operation(
    "setbalance",
    group=GROUP,
    summary="Edit Reseller's Balance",
    area=AREA,
    mutates=True,
    aliases=("balance", "addbalance"),
    params=[
        USERNAME,
        *(
            Param(
                name,
                "int",
                minimum=-team.MAX_BALANCE,
                maximum=team.MAX_BALANCE,
                max_length=11,
                doc=f"units of {bucket.replace('_', ' ')} keys to add (negative: take away)",
            )
            for name, bucket in AMOUNTS.items()
        ),
    ],
    returns={
        "message": "`Balance Successfully Added`",
        "username": "the reseller's username",
        "balance": f"the new balance {BALANCE_ENTRY}",
    },
)
async def set_balance(call: SellerCall) -> dict[str, Any]:
    """Add the given units to the reseller's balance (as KeyAuth does: missing amounts add
    nothing, negative ones take away), all buckets at once or none: when a bucket would fall
    below zero nothing changes."""
    username = call.args.text("username")
    deltas = {
        bucket: amount
        for name, bucket in AMOUNTS.items()
        if (amount := call.args.opt_integer(name)) is not None
    }
    after = await team.add_balance(
        call.db, call.app_id, username, deltas, actor=call.caller.actor, now=call.now()
    )
    before = {bucket: held - deltas.get(bucket, 0) for bucket, held in after.items()}
    call.record(_target(username), before={"balance": before}, after={"balance": after})
    return {"message": "Balance Successfully Added", "username": username, "balance": after}


async def _edit(call: SellerCall, role: str, **settings: Any) -> dict[str, Any]:
    before, after = await team.edit_account(
        call.db,
        call.services.passwords,
        call.identity,
        call.args.text("username"),
        role,
        password=call.args.opt_text("pass"),
        email=call.args.opt_text("email"),
        disabled=call.args.opt_flag("disabled"),
        **settings,
    )
    shown_after = _settings(after)
    if call.args.opt_text("pass") is not None:
        shown_after["password_changed"] = True
    call.record(_target(after["username"]), before=_settings(before), after=shown_after)
    return {"message": f"Successfully edited {role}!"}


@registry.operation(
    "editreseller",
    group=GROUP,
    summary="Edit Reseller",
    area=AREA,
    mutates=True,
    params=[USERNAME, KEY_LEVELS, PASSWORD, EMAIL, DISABLED],
    returns={"message": "`Successfully edited reseller!`"},
)
async def edit_reseller(call: SellerCall) -> dict[str, Any]:
    """Change a reseller's allowed levels, password, email or disabled state (at least one). Its
    balance changes with setbalance."""
    return await _edit(call, RESELLER, key_levels=call.args.opt_text("keylevels"))


@registry.operation(
    "editmanager",
    group=GROUP,
    summary="Edit Manager",
    area=AREA,
    mutates=True,
    params=[USERNAME, PERMS, PASSWORD, EMAIL, DISABLED],
    returns={"message": "`Successfully edited manager!`"},
)
async def edit_manager(call: SellerCall) -> dict[str, Any]:
    """Change a manager's permission areas, password, email or disabled state (at least one).
    New areas apply to its seller keys at once."""
    return await _edit(call, MANAGER, permissions=call.args.opt_text("perms"))


@registry.operation(
    "addaccountkey",
    group=GROUP,
    summary="Create Team Account Seller Key",
    area=AREA,
    mutates=True,
    params=[USER, Param("name", max_length=64, doc="a label to tell keys apart (default: the username)")],
    returns={"sellerkey": "the new key; shown this once, only its digest is stored"},
)
async def add_account_key(call: SellerCall) -> dict[str, Any]:
    """Issue another seller key acting as a reseller or manager of this application."""
    row, key = await team.add_key(
        call.db, call.identity, call.args.text("user"), call.args.opt_text("name"), call.now()
    )
    call.record(_target(row["username"]), before=None, after={"sellerkey_prefix": key[:6]})
    return {"message": "Seller key created.", "sellerkey": key}
