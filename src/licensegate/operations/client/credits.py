"""Client API — usage credits: spend the logged-in user's (or key's) balance, call by call."""

from __future__ import annotations

from typing import Any

from licensegate.domain import credits
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

CREDITS = (
    "the balance this session spends (its license key's, else its user's), or null when the seller "
    "set none: {balance, refill: {amount, period (day|week|month), at (HH:MM UTC), next (Unix seconds)} "
    "or null}"
)


def brief(row: credits.CreditRow | None, now: int) -> dict[str, Any] | None:
    if row is None:
        return None
    return {"balance": row["balance"], "refill": credits.refill_of(row, now)}


async def of_session(call: ClientCall, user_id: int, credential: str) -> dict[str, Any] | None:
    """The `credits` field of a login's answer (no query for an application without balances)."""
    if not await call.services.credited.get(call.db, call.app.id):
        return None
    now = call.now()
    return brief(await credits.of_session(call.db, call.app.id, user_id, credential, now), now)


@registry.operation(
    "spend",
    group="Licensing",
    summary="Spend Credits",
    requires="validated",
    params=[
        Param(
            "cost",
            kind="int",
            minimum=1,
            maximum=credits.MAX_COST,
            doc="how many credits this use costs (default 1)",
        )
    ],
    statuses=frozenset({200, 400, 401, 403, 429, 500, 503}),
    returns={"balance": "credits left after this spend (integer)"},
)
async def spend(call: ClientCall) -> dict[str, Any]:
    """Spend credits of the logged-in session's balance: its license key's when the seller set
    one on the key it logged in with, else its user's. Atomic: concurrent spends never take the
    balance below zero, and a refused spend takes nothing. A refill due since the last use is
    applied first. Refusals: `credits_exhausted` (the application's `nocredits` message; the
    failure body's `balance` is what is left), `no_credits` (no balance set), and
    `session_not_validated`."""
    session = call.live_session
    assert session.user_id is not None
    cost = call.args.opt_integer("cost") or 1
    left = await credits.spend(
        call.db,
        call.app.id,
        session.user_id,
        session.credential,
        cost,
        await call.messages(),
        call.now(),
        report=credits.SPENT in await call.services.event_wants.get(call.db, call.app.id),
    )
    call.services.credits_spent += cost
    call.services.logins.spent(call.app.id, call.now(), cost)  # the overview's "spent today"
    return {"message": "Successfully spent credits", "balance": left}
