"""Seller API — Tokens: the token system's tokens (one per license key and per user, made with
them): list them to ship them in token files, ban and unban, reset the bound file hash, delete."""

from __future__ import annotations

from typing import Any

from licensegate.domain import tokens
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import LIMIT, PAGE, Param, paging
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Tokens"
AREA: Area = "tokens"
TOKEN = Param("token", required=True, max_length=128, secret=True, doc="the token (32 hex)")


@registry.operation(
    "fetchalltokens",
    group=GROUP,
    summary="Get Tokens",
    area=AREA,
    params=[
        Param("tokentype", max_length=8, choices=tokens.KINDS, aliases=("kind",), doc="`license` or `user`"),
        Param("state", max_length=8, choices=tokens.STATES, doc="`active`, `banned`, `used` or `unused`"),
        Param("assigned", max_length=128, doc="only the token of this key or username"),
        PAGE,
        LIMIT,
    ],
    returns={
        "tokens": "[{token, type (license | user), assigned, banned, reason, hash (bound file hash or "
        "null), status (Used | Not Used), used_at, created_at}], oldest first",
        "count": "how many tokens match the filters",
    },
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """A page of the application's tokens (an empty list when none match)."""
    limit, offset = paging(call.args)
    listed, total = await tokens.list_page(
        call.db,
        call.services.secrets,
        call.app_id,
        kind=call.args.opt_text("tokentype"),
        state=call.args.opt_text("state"),
        search=call.args.opt_text("assigned"),
        limit=limit,
        offset=offset,
    )
    found = [token_entry(token) for token in listed]
    return {"message": "Successfully retrieved tokens", "tokens": found, "count": total}


def token_entry(listed: tokens.ListedToken) -> dict[str, Any]:
    """A token as fetchalltokens lists it."""
    row = listed.row
    return {
        "token": listed.token,
        "type": row["kind"],
        "assigned": row["assigned"],
        "banned": row["banned_reason"] is not None,
        "reason": row["banned_reason"],
        "hash": row["file_hash"],
        "status": "Used" if row["used_at"] is not None else "Not Used",
        "used_at": row["used_at"],
        "created_at": row["created_at"],
    }


@registry.operation(
    "bantoken",
    group=GROUP,
    summary="Ban Token",
    area=AREA,
    mutates=True,
    params=[TOKEN, Param("reason", required=True, max_length=256, doc="shown to the program at init")],
    returns={"message": "`Successfully banned token`"},
)
async def ban(call: SellerCall) -> dict[str, Any]:
    """Ban a token: `init` with it is refused with the reason (404 `token_not_found` if unknown)."""
    reason = call.args.text("reason")
    await tokens.ban(call.db, call.app_id, call.args.text("token"), reason)
    call.record("token", after={"banned": reason})
    return {"message": "Successfully banned token"}


@registry.operation(
    "unbantoken",
    group=GROUP,
    summary="Unban Token",
    area=AREA,
    mutates=True,
    params=[TOKEN],
    returns={"message": "`Successfully unbanned token`"},
)
async def unban(call: SellerCall) -> dict[str, Any]:
    """Lift a token's ban."""
    await tokens.unban(call.db, call.app_id, call.args.text("token"))
    call.record("token", after={"banned": None})
    return {"message": "Successfully unbanned token"}


@registry.operation(
    "resettokenhash",
    group=GROUP,
    summary="Reset Token Hash",
    area=AREA,
    mutates=True,
    params=[TOKEN],
    returns={"message": "`Successfully reset token hash`"},
)
async def reset_hash(call: SellerCall) -> dict[str, Any]:
    """Forget the file hash bound at the token's first use: the next `init` binds a new one."""
    await tokens.reset_hash(call.db, call.app_id, call.args.text("token"))
    call.record("token", after={"hash": None})
    return {"message": "Successfully reset token hash"}


@registry.operation(
    "deltoken",
    group=GROUP,
    summary="Delete Token",
    area=AREA,
    mutates=True,
    params=[TOKEN],
    returns={"message": "`Successfully deleted token`"},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete a token (its program can no longer pass `init` while token validation is on)."""
    await tokens.delete(call.db, call.app_id, call.args.text("token"))
    call.record("token")
    return {"message": "Successfully deleted token"}
