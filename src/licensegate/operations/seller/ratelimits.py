"""Seller API — Rate limits: named limits (requests per window) on a user or a key, applied to the
client calls of that user's sessions or of sessions logged in with that key, on top of the
address and application limits. Area `users`."""

from __future__ import annotations

from typing import Any

from licensegate.domain import errorcodes, namedlimits
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.credits import target_of
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Rate limits"
AREA: Area = "users"
TARGETS = (
    Param("user", max_length=64, doc="a username: limits every session of that user"),
    Param("key", max_length=128, doc="a license key: limits every session logged in with it"),
)
NAME = Param("name", required=True, max_length=64, doc="the limit's name (one user or key may have several)")
ENTRY = "{name, requests (per window), window (seconds)}"


def entry(row: namedlimits.LimitRow) -> dict[str, Any]:
    return {"name": row["name"], "requests": row["max_requests"], "window": row["window_seconds"]}


@registry.operation(
    "setratelimit",
    group=GROUP,
    summary="Set Rate Limit",
    area=AREA,
    mutates=True,
    params=[
        *TARGETS,
        NAME,
        Param(
            "requests",
            kind="int",
            required=True,
            minimum=1,
            maximum=namedlimits.MAX_REQUESTS,
            doc="client calls allowed per window",
        ),
        Param(
            "window",
            kind="int",
            required=True,
            minimum=1,
            maximum=namedlimits.MAX_WINDOW,
            doc="the window, in seconds",
        ),
    ],
    returns={"limit": ENTRY},
)
async def set_rate_limit(call: SellerCall) -> dict[str, Any]:
    """Set a named limit on a user or a key, or change the one of that name. A client call of a
    session it applies to over the limit is refused with `named_limit_exceeded` (429, with
    `Retry-After`) and is counted by no limit. Windows are fixed (they start at multiples of
    `window` seconds since the epoch). Refusals: `named_limit_target` (name exactly one of
    `user` and `key`), `user_not_found`, `key_not_found`."""
    to = await target_of(call, errorcodes.NAMED_LIMIT_TARGET)
    name = call.args.text("name")
    row: namedlimits.LimitRow = {
        "name": name,
        "max_requests": call.args.integer("requests"),
        "window_seconds": call.args.integer("window"),
    }
    await namedlimits.put(
        call.db, call.app_id, to, name, row["max_requests"], row["window_seconds"], call.now()
    )
    call.record(to.label, after={"rate_limit": entry(row)})
    await call.services.named_limits.changed(call.app_id)
    return {"message": "Successfully set rate limit", "limit": entry(row)}


@registry.operation(
    "listratelimits",
    group=GROUP,
    summary="List Rate Limits",
    area=AREA,
    params=list(TARGETS),
    returns={"limits": f"[{ENTRY}], by name"},
)
async def list_rate_limits(call: SellerCall) -> dict[str, Any]:
    """The named limits of a user or a key. Refusals: `named_limit_target`, `user_not_found`,
    `key_not_found`."""
    to = await target_of(call, errorcodes.NAMED_LIMIT_TARGET)
    rows = await namedlimits.of_target(call.db, to)
    return {"message": "Successfully retrieved rate limits", "limits": [entry(row) for row in rows]}


@registry.operation(
    "delratelimit",
    group=GROUP,
    summary="Remove Rate Limit",
    area=AREA,
    mutates=True,
    params=[*TARGETS, NAME],
    returns={},
)
async def delete_rate_limit(call: SellerCall) -> dict[str, Any]:
    """Remove a named limit from a user or a key. Refusals: `named_limit_not_found` (404),
    `named_limit_target`, `user_not_found`, `key_not_found`."""
    to = await target_of(call, errorcodes.NAMED_LIMIT_TARGET)
    name = call.args.text("name")
    await namedlimits.delete(call.db, to, name)
    call.record(to.label, before={"rate_limit": name})
    await call.services.named_limits.changed(call.app_id)
    return {"message": "Successfully removed rate limit"}
