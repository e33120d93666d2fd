"""Seller API — Seller Key: validate the key in use, and manage the application's seller keys."""

from __future__ import annotations

from typing import Any

from licensegate.domain import permissions, sellerkeys
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Seller Key"


@registry.operation(
    "setseller",
    group=GROUP,
    summary="Validate Seller Key",
    returns={
        "app": "the application the key belongs to: {name, ownerid}",
        "permissions": "the permission areas this key grants",
    },
)
async def validate(call: SellerCall) -> dict[str, Any]:
    """Succeeds when the seller key is known; tells which application it opens and what it may do."""
    return {
        "message": "Seller Key Successfully Found",
        "app": {"name": call.identity.app_name, "ownerid": call.identity.ownerid},
        "permissions": permissions.names(call.identity.permissions),
    }


@registry.operation(
    "addsellerkey",
    group=GROUP,
    summary="Create Seller Key",
    area="sellerkeys",
    mutates=True,
    params=[
        Param("name", max_length=64, doc="a label to tell keys apart"),
        Param(
            "permissions",
            max_length=256,
            doc="`all` (default), a bitmask, or area names separated by commas: "
            + ", ".join(permissions.AREAS),
        ),
    ],
    returns={
        "sellerkey": "the new key; shown this once, only its digest is stored",
        "permissions": "its areas",
    },
)
async def add_key(call: SellerCall) -> dict[str, Any]:
    """Create another seller key for this application, optionally limited to some areas."""
    granted = permissions.parse(call.args.opt_text("permissions") or "all")
    key = await sellerkeys.create(
        call.db,
        call.identity,
        name=call.args.opt_text("name") or "",
        permissions=granted,
        now=call.now(),
    )
    label = call.args.opt_text("name") or ""
    call.record(f"sellerkey:{key[:6]}", after={"name": label, "permissions": permissions.names(granted)})
    return {
        "message": "Seller key created.",
        "sellerkey": key,
        "permissions": permissions.names(granted),
    }


@registry.operation(
    "fetchallsellerkeys",
    group=GROUP,
    summary="List Seller Keys",
    area="sellerkeys",
    returns={
        "keys": "[{id, name, prefix, permissions, created_at, last_used_at, last_used_ip (the address "
        "of that use), current, account (the team "
        "member a key acts as, or null for the owner's keys), role (owner, reseller or manager)}]"
    },
)
async def list_keys(call: SellerCall) -> dict[str, Any]:
    """The application's seller keys (never the keys themselves: a prefix identifies each)."""
    return {
        "message": "Successfully retrieved seller keys",
        "keys": await sellerkeys.list_keys(call.db, call.identity),
    }


@registry.operation(
    "delsellerkey",
    group=GROUP,
    summary="Delete Seller Key",
    area="sellerkeys",
    mutates=True,
    params=[
        Param(
            "id",
            "int",
            required=True,
            minimum=1,
            max_length=20,
            doc="the key's id from fetchallsellerkeys",
        )
    ],
)
async def delete_key(call: SellerCall) -> dict[str, Any]:
    """Revoke a seller key at once. A key cannot revoke itself."""
    await sellerkeys.delete(call.db, call.identity, call.args.integer("id"))
    call.record(f"sellerkey#{call.args.integer('id')}", before={"id": call.args.integer("id")})
    return {"message": "Seller key deleted."}
