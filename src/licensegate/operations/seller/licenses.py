"""Seller API — License: generate, verify, export, extend, annotate, re-level, ban and delete
license keys.

A reseller's key sees only the keys that reseller generated (any other key is "not found" to
it, and bulk deletions delete only its own); it generates keys of its allowed levels and pays
for them, and for time it adds, from its balance."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from licensegate.domain import apps, keygen, licenses, logins, users
from licensegate.domain.messages import Messages
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "License"
AREA: Area = "licenses"

KEY = Param("key", required=True, max_length=keygen.MAX_KEY_LENGTH, doc="the license key")
USER_TOO = Param(
    "userToo", "bool", max_length=5, doc="1: also act on the user who redeemed the key (default 0)"
)
FORMAT = Param(
    "format",
    max_length=4,
    choices=("json", "text"),
    ignore_case=True,
    doc="`json` (default) or `text`: one key per line; any case",
)
STATUS_FILTER = Param(
    "status",
    max_length=6,
    choices=licenses.FILTERS,
    doc="only `unused`, `used` or `banned` keys (default: all)",
)
KEY_ENTRY = (
    "[{id, key, note, expires (duration in seconds), status (Not Used | Used | Banned), level, "
    "genby, gendate, usedon, usedby, banned (reason or null)}], oldest first"
)
EXISTING_USER = Param(
    "user", required=True, max_length=64, aliases=("username",), doc="the user's name", names_user=True
)
EXPIRY = Param("expiry", "float", required=True, maximum=licenses.MAX_DAYS, max_length=24)
EXPORT_RETURNS = {"keys": KEY_ENTRY, "count": "how many keys match in total (all pages)"}


# --- KeyAuth's field names ---------------------------------------------------------------------


def export_entry(row: licenses.KeyRow) -> dict[str, Any]:
    """A key as fetchallkeys lists it."""
    return {
        "id": str(row["id"]),
        "key": row["key"],
        "note": row["note"],
        "expires": row["duration"],
        "status": licenses.status_text(row),
        "level": row["level"],
        "genby": row["generated_by"],
        "gendate": row["created_at"],
        "usedon": row["used_at"],
        "usedby": row["used_by"],
        "banned": row["banned_reason"],
    }


def used_entry(row: licenses.KeyRow) -> dict[str, Any]:
    """A redeemed key as fetchusedkeys lists it."""
    return {
        "key": row["key"],
        "usedby": row["used_by"],
        "usedon": row["used_at"],
        "level": row["level"],
        "note": row["note"],
    }


def info_fields(details: licenses.KeyInfo) -> dict[str, Any]:
    """One key as info answers it."""
    row = details.key
    return {
        "key": row["key"],
        "duration": row["duration"],
        "hwid": details.hwids,
        "note": row["note"],
        "status": licenses.status_text(row),
        "level": row["level"],
        "createdby": row["generated_by"],
        "usedby": row["used_by"],
        "usedon": row["used_at"],
        "creationdate": row["created_at"],
        "banned": row["banned_reason"],
    }


def _keys_text(body: dict[str, Any]) -> str:
    keys = body["keys"]
    return "\n".join(k if isinstance(k, str) else k["key"] for k in keys)


@registry.operation(
    "add",
    group=GROUP,
    summary="Generate License Key",
    area=AREA,
    mutates=True,
    params=[
        replace(
            EXPIRY, doc="duration in days (fractions allowed); the clock starts when the key is redeemed"
        ),
        Param(
            "mask",
            max_length=keygen.MAX_KEY_LENGTH,
            doc=f"key template; each `*` becomes a random character (default `{keygen.DEFAULT_MASK}`). "
            "A mask without `*` is one custom key.",
        ),
        Param(
            "character",
            "int",
            minimum=1,
            maximum=3,
            max_length=1,
            doc="random characters: 1 mixed case (default), 2 upper case, 3 lower case; digits always",
        ),
        Param("level", max_length=12, doc="the level whose subscriptions the key grants (default 1)"),
        Param(
            "amount",
            "int",
            minimum=1,
            maximum=licenses.MAX_AMOUNT,
            max_length=4,
            doc=f"how many keys (1 to {licenses.MAX_AMOUNT}, default 1)",
        ),
        Param("note", max_length=256, strip=False, doc="a note kept with each key"),
        Param(
            "owner",
            max_length=64,
            doc="recorded as the keys' creator (default SellerAPI; a reseller is always recorded as itself)",
        ),
        FORMAT,
    ],
    returns={
        "message": "`License Successfully Generated`",
        "key": "the first key generated",
        "keys": "every key generated",
    },
    text=_keys_text,
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Generate one or more license keys of a level. All keys of one call are created together
    or not at all. The level must belong to at least one subscription.

    A reseller may generate only its allowed levels (else 403 `level_not_allowed`) and only the
    durations its balance pays for: 1, 7, 30, 90, 180 or 365 days, or lifetime (3650 days or
    more; else 400 `duration_not_sold`). Each key costs one unit of the matching bucket, spent
    in the same transaction (403 `insufficient_balance` when the bucket holds fewer)."""
    args = call.args
    spec = licenses.KeySpec(
        days=args.number("expiry"),
        mask=args.opt_text("mask") or keygen.DEFAULT_MASK,
        character=args.opt_integer("character") or keygen.MIXED,
        level=args.opt_text("level") or "1",
        amount=args.opt_integer("amount") or 1,
        note=args.opt_text("note"),
        generated_by=args.opt_text("owner") or "SellerAPI",
        account_id=call.identity.acting_account_id,
    )
    keys = await licenses.generate(call.db, call.services.secrets, call.scope, spec, call.now())
    return {"message": "License Successfully Generated", "key": keys[0], "keys": keys}


@registry.operation(
    "verify",
    group=GROUP,
    summary="Verify License Key",
    area=AREA,
    params=[KEY],
    returns={"message": "`Key Successfully Verified`"},
)
async def verify(call: SellerCall) -> dict[str, Any]:
    """Succeed when the key exists (whatever its status)."""
    await licenses.get(call.db, call.scope, call.args.text("key"))
    return {"message": "Key Successfully Verified"}


@registry.operation(
    "del",
    group=GROUP,
    summary="Delete License Key",
    area=AREA,
    mutates=True,
    params=[KEY, USER_TOO],
    returns={"message": "`Successfully deleted license!`"},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete a key and the subscriptions its redemption granted; with userToo=1 also the user
    who redeemed it."""
    await licenses.delete(
        call.db, call.scope, call.args.text("key"), user_too=call.args.flag("userToo"), now=call.now()
    )
    return {"message": "Successfully deleted license!"}


@registry.operation(
    "delmultiple",
    group=GROUP,
    summary="Delete Multiple License Keys",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "key",
            required=True,
            max_length=licenses.MAX_KEYS_PER_CALL * (keygen.MAX_KEY_LENGTH + 2),
            doc=f"up to {licenses.MAX_KEYS_PER_CALL} keys separated by commas and/or white space",
        ),
        USER_TOO,
    ],
    returns={"message": "`Successfully deleted licenses!`", "deleted": "how many keys were deleted"},
)
async def delete_multiple(call: SellerCall) -> dict[str, Any]:
    """Delete several keys as `del` does, all or none: if any key is unknown nothing is deleted."""
    keys = licenses.split_keys(call.args.text("key"))
    deleted = await licenses.delete_many(
        call.db, call.scope, keys, user_too=call.args.flag("userToo"), now=call.now()
    )
    return {"message": "Successfully deleted licenses!", "deleted": deleted}


DELETED = {"deleted": "how many keys were deleted (0 is still success)"}


@registry.operation(
    "delunused",
    group=GROUP,
    summary="Delete All Unused License Keys",
    area=AREA,
    mutates=True,
    returns={"message": "`Deleted All Unused Keys!`", **DELETED},
)
async def delete_unused(call: SellerCall) -> dict[str, Any]:
    """Delete every key that is unused and not banned."""
    deleted = await licenses.delete_matching(call.db, call.scope, "unused", now=call.now())
    return {"message": "Deleted All Unused Keys!", "deleted": deleted}


@registry.operation(
    "delused",
    group=GROUP,
    summary="Delete All Used License Keys",
    area=AREA,
    mutates=True,
    returns={"message": "`Deleted All Used Keys!`", **DELETED},
)
async def delete_used(call: SellerCall) -> dict[str, Any]:
    """Delete every used key that is not banned (also serves "Delete Used License Keys"). The
    users keep the time the keys granted them."""
    deleted = await licenses.delete_matching(call.db, call.scope, "used", now=call.now())
    return {"message": "Deleted All Used Keys!", "deleted": deleted}


@registry.operation(
    "delalllicenses",
    group=GROUP,
    summary="Delete All License Keys",
    area=AREA,
    mutates=True,
    returns={"message": "`Deleted All Keys!`", **DELETED},
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every key of the application. The users keep the time the keys granted them."""
    deleted = await licenses.delete_matching(call.db, call.scope, "all", now=call.now())
    return {"message": "Deleted All Keys!", "deleted": deleted}


@registry.operation(
    "delsubkeys",
    group=GROUP,
    summary="Delete Subscription License Keys",
    area=AREA,
    mutates=True,
    params=[
        Param("sub", required=True, max_length=64, aliases=("subscription",), doc="subscription name"),
        Param(
            "unusedOnly", "bool", max_length=5, doc="1: only keys that are unused and not banned (default 0)"
        ),
    ],
    returns={"message": "`Successfully deleted the subscription's license keys!`", **DELETED},
)
async def delete_for_subscription(call: SellerCall) -> dict[str, Any]:
    """Delete the keys whose level is this subscription's level. Users keep what they were granted."""
    deleted = await licenses.delete_for_subscription(
        call.db, call.scope, call.args.text("sub"), unused_only=call.args.flag("unusedOnly"), now=call.now()
    )
    return {"message": "Successfully deleted the subscription's license keys!", "deleted": deleted}


async def _export(call: SellerCall, which: str | None) -> dict[str, Any]:
    paged = "page" in call.args or "limit" in call.args
    limit, offset = paging(call.args) if paged else (None, 0)
    rows, count = await licenses.export(call.db, call.scope, which, limit, offset)
    keys = [export_entry(row) for row in rows]
    return {"message": "Successfully Retrieved Licenses", "keys": keys, "count": count}


@registry.operation(
    "fetchallkeys",
    group=GROUP,
    summary="Export License Keys",
    area=AREA,
    params=[STATUS_FILTER, PAGE, LIMIT, FORMAT],
    returns={"message": "`Successfully Retrieved Licenses`", **EXPORT_RETURNS},
    text=_keys_text,
)
async def export_all(call: SellerCall) -> dict[str, Any]:
    """Every key (or those of one status). Without `page` and `limit` every key is returned; with
    either, one page."""
    return await _export(call, call.args.opt_text("status"))


@registry.operation(
    "exportunused",
    group=GROUP,
    summary="Export Unused License Keys",
    area=AREA,
    params=[PAGE, LIMIT, FORMAT],
    returns={"message": "`Successfully Retrieved Licenses`", **EXPORT_RETURNS},
    text=_keys_text,
)
async def export_unused(call: SellerCall) -> dict[str, Any]:
    """The keys that are unused and not banned, as `fetchallkeys` lists them."""
    return await _export(call, "unused")


@registry.operation(
    "exportused",
    group=GROUP,
    summary="Export Used License Keys",
    area=AREA,
    params=[PAGE, LIMIT, FORMAT],
    returns={"message": "`Successfully Retrieved Licenses`", **EXPORT_RETURNS},
    text=_keys_text,
)
async def export_used(call: SellerCall) -> dict[str, Any]:
    """The keys that are used and not banned, as `fetchallkeys` lists them."""
    return await _export(call, "used")


@registry.operation(
    "fetchusedkeys",
    group=GROUP,
    summary="Get Used License Keys",
    area=AREA,
    params=[PAGE, LIMIT],
    returns={
        "message": "`Successfully retrieved used licenses`",
        "keys": "[{key, usedby, usedon, level, note}], the latest redemption first",
        "count": "how many keys have been redeemed (all pages)",
    },
)
async def fetch_used(call: SellerCall) -> dict[str, Any]:
    """Redeemed keys (banned ones included) with who redeemed them and when, one page at a time."""
    limit, offset = paging(call.args)
    rows, count = await licenses.used_keys(call.db, call.scope, limit, offset)
    keys = [used_entry(row) for row in rows]
    return {"message": "Successfully retrieved used licenses", "keys": keys, "count": count}


@registry.operation(
    "addtime",
    group=GROUP,
    summary="Extend License Expiry",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "time",
            "float",
            required=True,
            maximum=licenses.MAX_DAYS,
            max_length=24,
            doc="days to add (fractions allowed)",
        ),
        Param("key", max_length=keygen.MAX_KEY_LENGTH, doc="one key; without it, every unused key"),
    ],
    returns={
        "message": "`Added time to unused licenses!` (no key) or `Added time to license!`",
        "updated": "how many unused keys got a longer duration, or, for a used key, how many of "
        "its grants now expire later",
    },
)
async def add_time(call: SellerCall) -> dict[str, Any]:
    """Add days to every unused key's duration, or to one key: an unused key gets a longer
    duration, a used key's grants expire later. A reseller pays for the time it adds: one unit
    of the bucket matching `time` per key lengthened (all or nothing)."""
    key = call.args.opt_text("key")
    updated = await licenses.add_time(call.db, call.scope, call.args.number("time"), key, now=call.now())
    message = "Added time to unused licenses!" if key is None else "Added time to license!"
    return {"message": message, "updated": updated}


@registry.operation(
    "info",
    group=GROUP,
    summary="Get License Information",
    area=AREA,
    params=[KEY],
    returns={
        "message": "`Successfully retrieved license information`",
        "key": "the key",
        "duration": "seconds of access the key grants",
        "hwid": "HWIDs of the user who redeemed it (empty when unused)",
        "note": "note or null",
        "status": "Not Used | Used | Banned",
        "level": "level",
        "createdby": "who generated it",
        "usedby": "username of the user who redeemed it, or null",
        "usedon": "redemption time (Unix seconds) or null",
        "creationdate": "generation time (Unix seconds)",
        "banned": "ban reason or null",
    },
)
async def get_info(call: SellerCall) -> dict[str, Any]:
    """Everything about one key."""
    details = await licenses.info(call.db, call.scope, call.args.text("key"))
    return {"message": "Successfully retrieved license information", **info_fields(details)}


@registry.operation(
    "setnote",
    group=GROUP,
    summary="Set License Note",
    area=AREA,
    mutates=True,
    params=[KEY, Param("note", required=True, max_length=256, strip=False, doc="the new note")],
    returns={"message": "`Successfully set note`"},
)
async def set_note(call: SellerCall) -> dict[str, Any]:
    """Replace the key's note."""
    await licenses.set_note(call.db, call.scope, call.args.text("key"), call.args.text("note"))
    return {"message": "Successfully set note"}


@registry.operation(
    "setduration",
    group=GROUP,
    summary="Set License Duration",
    area=AREA,
    mutates=True,
    params=[
        KEY,
        replace(EXPIRY, doc="the new duration in days (fractions allowed)"),
    ],
    returns={"message": "`Successfully set license duration!`", "duration": "the key's duration in seconds"},
)
async def set_duration(call: SellerCall) -> dict[str, Any]:
    """Give an unused key another duration (a used key's grants already run: 409
    `key_used_duration`, add time instead). A reseller cannot (403 `duration_paid`): its balance
    paid for the duration the key was made with."""
    key = call.args.text("key")
    seconds = await licenses.set_duration(call.db, call.scope, key, call.args.number("expiry"))
    call.record(f"key {key}", after={"duration": seconds})
    return {"message": "Successfully set license duration!", "duration": seconds}


@registry.operation(
    "changekeysub",
    group=GROUP,
    summary="Change License Subscription",
    area=AREA,
    mutates=True,
    params=[
        KEY,
        Param("sub", max_length=64, aliases=("subscription",), doc="the subscription whose level it takes"),
        Param("level", max_length=12, doc="the new level (instead of `sub`)"),
    ],
    returns={"message": "`Successfully changed license subscription!`", "level": "the key's new level"},
)
async def change_subscription(call: SellerCall) -> dict[str, Any]:
    """Give an unused key the level of another subscription (`sub`) or a level (`level`); exactly
    one of the two. A used key cannot change: its grants were already made. A reseller may only
    choose a level it sells (403 `level_not_allowed`)."""
    level = await licenses.change_level(
        call.db,
        call.scope,
        call.args.text("key"),
        sub_name=call.args.opt_text("sub"),
        level=call.args.opt_text("level"),
    )
    return {"message": "Successfully changed license subscription!", "level": level}


@registry.operation(
    "ban",
    group=GROUP,
    summary="Ban License Key",
    area=AREA,
    mutates=True,
    params=[KEY, Param("reason", required=True, max_length=256, doc="why it is banned"), USER_TOO],
    returns={"message": "`Successfully banned license!`"},
)
async def ban(call: SellerCall) -> dict[str, Any]:
    """Ban a key so it can no longer be redeemed or used to log in; the sessions logged in with
    it end at once. With userToo=1 also ban the user who redeemed it, which ends all their
    sessions and blacklists their HWIDs and IP (not for a caller without the `blacklists` area).
    Banning again replaces the reason."""
    await licenses.ban(
        call.db,
        call.scope,
        call.args.text("key"),
        call.args.text("reason"),
        user_too=call.args.flag("userToo"),
        now=call.now(),
        blacklist_as=call.blacklist_as,
    )
    return {"message": "Successfully banned license!"}


@registry.operation(
    "unban",
    group=GROUP,
    summary="Unban License Key",
    area=AREA,
    mutates=True,
    params=[KEY],
    returns={"message": "`Successfully unbanned license!`"},
)
async def unban(call: SellerCall) -> dict[str, Any]:
    """Lift a key's ban and, if it was redeemed, the ban of the user who redeemed it."""
    await licenses.unban(
        call.db,
        call.scope,
        call.args.text("key"),
        lift_blacklist=call.blacklist_as is not None,
        now=call.now(),
    )
    return {"message": "Successfully unbanned license!"}


@registry.operation(
    "activate",
    group=GROUP,
    summary="Create User From License",
    area=AREA,
    mutates=True,
    params=[
        Param("user", required=True, max_length=64, aliases=("username",), doc="the new user's name"),
        KEY,
        Param("pass", required=True, max_length=256, strip=False, secret=True, doc="the new user's password"),
        Param("hwid", max_length=256, doc="the user's hardware id (optional)"),
    ],
    returns={"info": "the new user, as a client login shows it: {username, subscriptions, ip, hwid, ...}"},
)
async def activate(call: SellerCall) -> dict[str, Any]:
    """Redeem an unused key into a new user, by the rules of the client's `register` (the
    application's messages answer refusals: a taken name, an unknown, used or banned key, a key
    level without a subscription)."""
    key = call.args.text("key")
    await licenses.get(call.db, call.scope, key)  # a reseller's own keys only
    app = await apps.client_app(call.db, call.app_id)
    msg = Messages(await call.services.messages.get(call.db, call.app_id))
    login = await logins.register(
        call.db,
        call.services.passwords,
        call.services.secrets,
        app,
        logins.Client(session_id="", ip=call.caller.ip or "", hwid=call.args.opt_text("hwid")),
        username=call.args.text("user"),
        password=call.args.text("pass"),
        key=key,
        email=None,
        msg=msg,
        now=call.now(),
    )
    call.record(f"user {login.username}", after={"key": key})
    return {"message": msg("loggedInMsg"), "info": login.info}


@registry.operation(
    "getkey",
    group=GROUP,
    summary="Retrieve License From User",
    area=AREA,
    params=[EXISTING_USER],
    returns={"key": "the key the user was made from (the first they redeemed)"},
)
async def get_key(call: SellerCall) -> dict[str, Any]:
    """The key a user redeemed first; 404 `key_not_found` when they redeemed none."""
    key = await licenses.key_of_user(call.db, call.scope, call.args.text("user"))
    return {"message": "Successfully retrieved license", "key": key}


@registry.operation(
    "assignkey",
    group=GROUP,
    summary="Assign License To User",
    area=AREA,
    mutates=True,
    params=[EXISTING_USER, KEY],
    returns={"subscriptions": "names of the subscriptions the key granted or lengthened"},
)
async def assign_key(call: SellerCall) -> dict[str, Any]:
    """Redeem an unused key onto an existing user (as the client's Upgrade Access does): every
    subscription of the key's level is granted, a running one lengthened by the key's duration."""
    key, username = call.args.text("key"), call.args.text("user")
    await licenses.get(call.db, call.scope, key)
    await users.get(call.db, call.scope, username)
    app = await apps.client_app(call.db, call.app_id)
    msg = Messages(await call.services.messages.get(call.db, call.app_id))
    names = await logins.upgrade(call.db, app, username=username, key=key, msg=msg, now=call.now())
    call.record(f"key {key}", after={"user": username, "subscriptions": names})
    return {"message": "Successfully assigned license to user", "subscriptions": names}
