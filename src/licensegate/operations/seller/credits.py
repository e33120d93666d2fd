"""Seller API — Usage credits: set, add to, schedule the refill of, show and remove the credit
balance of a user or of a key (the client spends it with `spend`). Area `users`."""

from __future__ import annotations

from typing import Any

from licensegate.domain import credits, errorcodes
from licensegate.domain.errors import ErrorCode
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Credits"
AREA: Area = "users"
TARGETS = (
    Param("user", max_length=64, doc="a username: that user's balance (spent by their sessions)"),
    Param("key", max_length=128, doc="a license key: its balance (spent by sessions logged in with it)"),
)
ENTRY = (
    "{balance, spent (in all), refill: {amount, period (day|week|month), at (HH:MM UTC), "
    "next (Unix seconds)} or null}"
)


def entry(row: credits.CreditRow, now: int) -> dict[str, Any]:
    return {"balance": row["balance"], "spent": row["spent"], "refill": credits.refill_of(row, now)}


def _audited(row: credits.CreditRow) -> dict[str, Any]:
    period, at = row["refill_period"], credits.time_text(row["refill_minute"])
    refill = None if period is None else f"{row['refill_amount']} per {period} at {at} UTC"
    return {"balance": row["balance"], "refill": refill}


async def target_of(call: SellerCall, neither: ErrorCode = errorcodes.CREDIT_TARGET) -> credits.Target:
    """The user or key a call names (`user` or `key`, exactly one: else `neither`), in the
    caller's scope; the named rate limits name theirs the same way."""
    return await credits.target(
        call.db, call.scope, user=call.args.opt_text("user"), key=call.args.opt_text("key"), neither=neither
    )


@registry.operation(
    "setcredits",
    group=GROUP,
    summary="Set Credits",
    area=AREA,
    mutates=True,
    params=[
        *TARGETS,
        Param(
            "balance", kind="int", required=True, minimum=0, maximum=credits.MAXIMUM, doc="the new balance"
        ),
    ],
    returns={"credits": ENTRY},
)
async def set_credits(call: SellerCall) -> dict[str, Any]:
    """Give a user or a key a credit balance, or set the one it has (its refill rule stays).
    Refusals: `credit_target` (name exactly one of `user` and `key`), `user_not_found`,
    `key_not_found`."""
    to = await target_of(call)
    now = call.now()
    before = await credits.find(call.db, to, now)
    row = await credits.set_balance(call.db, call.app_id, to, call.args.integer("balance"), now)
    call.record(to.label, before=None if before is None else _audited(before), after=_audited(row))
    if before is None:
        await call.services.credited.changed(call.app_id)  # its logins answer the balance from now on
    return {"message": "Successfully set credits", "credits": entry(row, now)}


@registry.operation(
    "addcredits",
    group=GROUP,
    summary="Add Credits",
    area=AREA,
    mutates=True,
    params=[
        *TARGETS,
        Param(
            "amount",
            kind="int",
            required=True,
            minimum=-credits.MAXIMUM,
            maximum=credits.MAXIMUM,
            doc="credits to add (negative: to take away)",
        ),
    ],
    returns={"credits": ENTRY},
)
async def add_credits(call: SellerCall) -> dict[str, Any]:
    """Add credits to a balance (or take them, with a negative amount), atomically with the
    client's spends. Refusals: `credits_not_set` (404), `credits_out_of_range` (the balance
    would go below 0), `credit_target`, `user_not_found`, `key_not_found`."""
    to = await target_of(call)
    now = call.now()
    amount = call.args.integer("amount")
    row = await credits.add(call.db, call.app_id, to, amount, now)
    call.record(to.label, before={"balance": row["balance"] - amount}, after={"balance": row["balance"]})
    return {"message": "Successfully added credits", "credits": entry(row, now)}


@registry.operation(
    "refillcredits",
    group=GROUP,
    summary="Set Credit Refill",
    area=AREA,
    mutates=True,
    params=[
        *TARGETS,
        Param(
            "period",
            required=True,
            choices=("day", "week", "month", "none"),
            ignore_case=True,
            doc="how often: day, week (Mondays), month (the 1st), or none to stop refilling",
        ),
        Param(
            "amount", kind="int", minimum=1, maximum=credits.MAXIMUM, doc="the balance a refill tops up to"
        ),
        Param("at", max_length=5, doc="the time of day of a refill, HH:MM UTC (default 00:00)"),
    ],
    returns={"credits": ENTRY},
)
async def refill_credits(call: SellerCall) -> dict[str, Any]:
    """Refill a balance on a schedule: at each refill the balance is topped up to `amount`
    (credits beyond it are kept). The first refill is the first one after now. Refusals:
    `credits_not_set` (404), `invalid_refill`, `credit_target`, `user_not_found`, `key_not_found`."""
    to = await target_of(call)
    now = call.now()
    before = await credits.show(call.db, to, now)
    row = await credits.set_refill(
        call.db,
        call.app_id,
        to,
        amount=call.args.opt_integer("amount"),
        period=call.args.text("period"),
        at=call.args.opt_text("at"),
        now=now,
    )
    call.record(to.label, before=_audited(before), after=_audited(row))
    return {"message": "Successfully set credit refill", "credits": entry(row, now)}


@registry.operation(
    "getcredits",
    group=GROUP,
    summary="Get Credits",
    area=AREA,
    params=list(TARGETS),
    returns={"credits": ENTRY},
)
async def get_credits(call: SellerCall) -> dict[str, Any]:
    """A user's or a key's credit balance, with any refill due applied. Refusals:
    `credits_not_set` (404), `credit_target`, `user_not_found`, `key_not_found`."""
    to = await target_of(call)
    now = call.now()
    return {
        "message": "Successfully retrieved credits",
        "credits": entry(await credits.show(call.db, to, now), now),
    }


@registry.operation(
    "delcredits",
    group=GROUP,
    summary="Remove Credits",
    area=AREA,
    mutates=True,
    params=list(TARGETS),
    returns={},
)
async def delete_credits(call: SellerCall) -> dict[str, Any]:
    """Remove a user's or a key's credit balance (its sessions then have none to spend).
    Refusals: `credits_not_set` (404), `credit_target`, `user_not_found`, `key_not_found`."""
    to = await target_of(call)
    before = await credits.show(call.db, to, call.now())
    await credits.delete(call.db, call.app_id, to, call.now())
    call.record(to.label, before=_audited(before))
    return {"message": "Successfully removed credits"}
