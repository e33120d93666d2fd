"""Seller API — Entitlements: create, list, edit and delete named features, and attach them to
(or detach them from) a subscription, a single key or a single user. Area `subscriptions`."""

from __future__ import annotations

from typing import Any

from licensegate.domain import entitlements
from licensegate.domain.entitlements import MAX_CALL_BYTES, MAX_CODE, MAX_METADATA, MAX_NAME, EntitlementRow
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Entitlements"
AREA: Area = "subscriptions"
CODE = Param(
    "code", required=True, max_length=MAX_CODE, doc="the entitlement's code (letters, digits, `._:-`)"
)
METADATA = Param(
    "metadata",
    max_length=MAX_METADATA * 2,
    strip=False,
    doc="a JSON object of at most 16 KB the client receives with the entitlement (`{}` clears it)",
)
TARGETS = (
    Param("sub", max_length=64, doc="a subscription's name: every user holding it live has the entitlement"),
    Param("key", max_length=128, doc="a license key: the user who redeemed it has the entitlement"),
    Param("user", max_length=64, doc="a username: that user has the entitlement"),
)
ENTRY = "{code, name, metadata (object), created_at, updated_at}"


def entry(row: EntitlementRow) -> dict[str, Any]:
    """An entitlement as the seller API lists it."""
    return {
        "code": row["code"],
        "name": row["name"],
        "metadata": entitlements.metadata_of(row),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }


async def _target(call: SellerCall) -> entitlements.Target:
    """The one subscription, key or user the call names."""
    sub, key, user = (call.args.opt_text(param.name) for param in TARGETS)
    return await entitlements.target(call.db, call.scope, sub=sub, key=key, user=user)


def _audited(row: EntitlementRow) -> dict[str, Any]:
    return {"code": row["code"], "name": row["name"], "metadata": row["metadata"]}


@registry.operation(
    "addentitlement",
    group=GROUP,
    summary="Create Entitlement",
    area=AREA,
    mutates=True,
    max_body_bytes=MAX_CALL_BYTES,
    params=[CODE, Param("name", max_length=MAX_NAME, doc="display name (default: the code)"), METADATA],
    returns={"entitlement": ENTRY},
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Create an entitlement. Refusals: `entitlement_exists` (409), `invalid_entitlement_code`,
    `invalid_metadata`."""
    row = await entitlements.create(
        call.db,
        call.app_id,
        code=call.args.text("code"),
        name=call.args.opt_text("name"),
        metadata=call.args.opt_text("metadata"),
        now=call.now(),
    )
    call.record(f"entitlement:{row['code']}", after=_audited(row))
    await call.services.entitled.changed(call.app_id)  # its logins answer entitlements from now on
    return {"message": "Successfully created entitlement", "entitlement": entry(row)}


@registry.operation(
    "fetchentitlements",
    group=GROUP,
    summary="List Entitlements",
    area=AREA,
    params=list(TARGETS),
    returns={"entitlements": f"[{ENTRY}]"},
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """Every entitlement of the application by code; with `sub`, `key` or `user`, only those
    attached directly to it."""
    if not any(param.name in call.args for param in TARGETS):
        rows = await entitlements.list_all(call.db, call.app_id)
    else:
        to = await _target(call)
        rows = await entitlements.attached_to(call.db, to.owner, to.owner_id)
    return {"message": "Successfully retrieved entitlements", "entitlements": [entry(row) for row in rows]}


@registry.operation(
    "editentitlement",
    group=GROUP,
    summary="Edit Entitlement",
    area=AREA,
    mutates=True,
    max_body_bytes=MAX_CALL_BYTES,
    params=[
        CODE,
        Param("newCode", max_length=MAX_CODE, doc="new code"),
        Param("name", max_length=MAX_NAME, doc="new display name"),
        METADATA,
    ],
    returns={"entitlement": ENTRY},
)
async def edit(call: SellerCall) -> dict[str, Any]:
    """Change an entitlement's code, name or metadata; what is attached stays attached."""
    code = call.args.text("code")
    before, after = await entitlements.edit(
        call.db,
        call.app_id,
        code,
        new_code=call.args.opt_text("newCode"),
        name=call.args.opt_text("name"),
        metadata=call.args.opt_text("metadata"),
        now=call.now(),
    )
    call.record(f"entitlement:{code}", before=_audited(before), after=_audited(after))
    return {"message": "Successfully edited entitlement", "entitlement": entry(after)}


@registry.operation(
    "delentitlement", group=GROUP, summary="Delete Entitlement", area=AREA, mutates=True, params=[CODE]
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete an entitlement; it is detached from every subscription, key and user."""
    row = await entitlements.delete(call.db, call.app_id, call.args.text("code"))
    call.record(f"entitlement:{row['code']}", before=_audited(row))
    await call.services.entitled.changed(call.app_id)
    return {"message": "Successfully deleted entitlement"}


@registry.operation(
    "attachentitlement",
    group=GROUP,
    summary="Attach Entitlement",
    area=AREA,
    mutates=True,
    params=[CODE, *TARGETS],
)
async def attach(call: SellerCall) -> dict[str, Any]:
    """Attach an entitlement to exactly one of a subscription (`sub`), a key (`key`) or a user
    (`user`). Attaching twice changes nothing. Refusals: `entitlement_target` (none or several
    named), `entitlement_not_found`, `subscription_not_found`, `key_not_found`, `user_not_found`."""
    code, to = call.args.text("code"), await _target(call)
    if await entitlements.attach(call.db, call.app_id, code, to, call.now()):
        call.record(to.label, after={"entitlement": code})
    return {"message": "Successfully attached entitlement"}


@registry.operation(
    "detachentitlement",
    group=GROUP,
    summary="Detach Entitlement",
    area=AREA,
    mutates=True,
    params=[CODE, *TARGETS],
)
async def detach(call: SellerCall) -> dict[str, Any]:
    """Detach an entitlement from a subscription, key or user (as Attach names them). Detaching
    one that is not attached changes nothing."""
    code, to = call.args.text("code"), await _target(call)
    if await entitlements.detach(call.db, call.app_id, code, to):
        call.record(to.label, before={"entitlement": code})
    return {"message": "Successfully detached entitlement"}
