"""Seller API — License Files: issue a signed license file for a user or a key, set how long
files stay valid and how often a client may ask for one, and list the public keys programs
verify files with (docs/offline.md)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import errorcodes, licensefiles, users
from licensegate.domain import licenses as license_rules
from licensegate.domain.messages import Messages
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "License Files"


async def _user_of(call: SellerCall, user: str | None, key: str | None) -> tuple[int, str | None]:
    """The user the call names (by name, or as the user who redeemed `key`) and the key."""
    if (user is None) == (key is None):
        raise errorcodes.MISSING_PARAMETER("Name exactly one of 'user' or 'key'.", param="user")
    if key is not None:
        row = await license_rules.get(call.db, call.scope, key)
        if row["used_by_user_id"] is None:
            raise errorcodes.LICENSE_FILE_NO_USER(key=key)
        return row["used_by_user_id"], key
    assert user is not None
    found = await users.find_named(call.db, call.app_id, user, reseller_id=call.scope.reseller_id)
    if found is None:
        raise errorcodes.USER_NOT_FOUND(username=user)
    return found["id"], None


@registry.operation(
    "issuelicensefile",
    group=GROUP,
    summary="Issue License File",
    area="users",
    mutates=True,
    params=[
        Param("user", max_length=64, doc="the user's name (or name `key`)"),
        Param("key", max_length=128, doc="a redeemed key: the file is its user's, and names this key"),
        Param("hwid", max_length=256, doc="the machine it is for (default: the user's first bound HWID)"),
        Param("encrypt", kind="bool", doc="1: encrypt it for that machine and key (needs both)"),
    ],
    returns={
        "file": "the signed license file (text, docs/offline.md)",
        "serial": "its serial",
        "expires": "when it expires (Unix seconds)",
    },
)
async def issue(call: SellerCall) -> dict[str, Any]:
    """A signed license file for a user, as Get License File gives a program (the seller's own
    issuing waits no cooldown). Refusals: `user_not_found`, `key_not_found`,
    `license_file_no_user` (the key is unused), `user_banned`, `subscription_paused`,
    `no_active_subscription`, `license_file_needs_key`."""
    user_id, key = await _user_of(call, call.args.opt_text("user"), call.args.opt_text("key"))
    hwid = call.args.opt_text("hwid") or await licensefiles.first_hwid(call.db, user_id)
    ask = licensefiles.Ask(
        user_id=user_id,
        hwid=hwid,
        encrypt=call.args.flag("encrypt"),
        issued_by=call.caller.actor,
        credential=key,
        limited=False,
    )
    issued = await licensefiles.issue(
        call.db,
        call.services.secrets,
        call.services.signers,
        licensefiles.Policy.of(call.services.settings),
        call.app_id,
        ask,
        msg=Messages({}),
        now=call.now(),
    )
    call.record(f"user:{issued.username}", after=issued.audited())
    return {
        "message": "Successfully issued a license file",
        "file": issued.text,
        "serial": issued.serial,
        "expires": issued.expires_at,
    }


@registry.operation(
    "setlicensefiles",
    group=GROUP,
    summary="Set License File Policy",
    area="settings",
    mutates=True,
    params=[
        Param(
            "ttl",
            kind="int",
            minimum=3600,
            maximum=10 * 365 * 86400,
            doc="seconds a file stays valid (absent: the deployment's default)",
        ),
        Param(
            "cooldown",
            kind="int",
            minimum=0,
            maximum=365 * 86400,
            doc="seconds between two files a client asks for, per user (absent: the default)",
        ),
    ],
)
async def set_policy(call: SellerCall) -> dict[str, Any]:
    """How long this application's license files stay valid offline (at least an hour) and how
    long a user waits between two files a program asks for."""
    ttl, cooldown = call.args.opt_integer("ttl"), call.args.opt_integer("cooldown")
    await licensefiles.set_policy(call.db, call.app_id, ttl=ttl, cooldown=cooldown)
    call.record("app", after={"license_file_ttl": ttl, "license_file_cooldown": cooldown})
    return {"message": "Successfully set the license file policy"}


@registry.operation(
    "fetchlicensekeys",
    group=GROUP,
    summary="List License File Keys",
    returns={"keys": "[{kid, public_key (64 hex), retired_at (null for the key signing now)}]"},
)
async def public_keys(call: SellerCall) -> dict[str, Any]:
    """The public keys a program's trust store holds to verify license files, by key id: the
    current signing key first, then the keys it replaced (`rotatesigningkey`), whose files
    verify until they expire. Public: no secret is shown."""
    keys = await licensefiles.public_keys(call.db, call.services.secrets, call.app_id)
    return {
        "message": "Successfully retrieved the license file keys",
        "keys": [{"kid": k.kid, "public_key": k.public_key, "retired_at": k.retired_at} for k in keys],
    }
