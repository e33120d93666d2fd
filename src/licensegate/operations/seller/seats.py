"""Seller API — Seats: how many machines and concurrent sessions a user may hold, set on a
subscription (its holders), a key or a user (see `domain/seats.py`). Area `subscriptions`."""

from __future__ import annotations

from typing import Any

from licensegate.domain import heartbeats, seats
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Seats"
AREA: Area = "subscriptions"
MAX_LIMIT = 100_000
TARGETS = (
    Param("sub", max_length=64, doc="a subscription's name: the rule of every user holding it"),
    Param("key", max_length=128, doc="a license key: the rule of sessions logged in with it"),
    Param("user", max_length=64, doc="a username: that user's rule (overrides the others)"),
)
ENTRY = (
    "{machines, sessions (null: no limit), countby (user|key), overage (refuse|end_oldest|allow), percent}"
)


def entry(row: seats.RuleRow) -> dict[str, Any]:
    return {
        "machines": row["max_machines"],
        "sessions": row["max_sessions"],
        "countby": row["count_by"],
        "overage": row["overage"],
        "percent": row["overage_percent"],
    }


async def _target(call: SellerCall) -> seats.Target:
    sub, key, user = (call.args.opt_text(param.name) for param in TARGETS)
    return await seats.target(call.db, call.scope, sub=sub, key=key, user=user)


@registry.operation(
    "setseats",
    group=GROUP,
    summary="Set Seats",
    area=AREA,
    mutates=True,
    params=[
        *TARGETS,
        Param("machines", kind="int", minimum=1, maximum=MAX_LIMIT, doc="machines (distinct HWIDs) at once"),
        Param("sessions", kind="int", minimum=1, maximum=MAX_LIMIT, doc="logged-in sessions at once"),
        Param(
            "countby",
            choices=seats.COUNT_BY,
            ignore_case=True,
            doc="count the user's sessions (`user`, default) or only those of the same key (`key`)",
        ),
        Param(
            "overage",
            choices=seats.OVERAGES,
            ignore_case=True,
            doc="a login over the limit: `refuse` (default), `end_oldest`, or `allow` up to `percent` over",
        ),
        Param("percent", kind="int", minimum=0, maximum=1000, doc="with `overage=allow`: how far over, in %"),
    ],
    returns={"seats": ENTRY},
)
async def set_seats(call: SellerCall) -> dict[str, Any]:
    """Set the seat rule of a subscription, a key or a user (replacing its rule). A user's rule
    wins over the key's its session logged in with, which wins over the most generous of its
    subscriptions'. Refusals: `seat_target`, `seat_rule_empty`, `subscription_not_found`,
    `key_not_found`, `user_not_found`."""
    to = await _target(call)
    row = await seats.put(
        call.db,
        call.app_id,
        to,
        max_machines=call.args.opt_integer("machines"),
        max_sessions=call.args.opt_integer("sessions"),
        count_by=call.args.opt_text("countby") or "user",
        overage=call.args.opt_text("overage") or "refuse",
        overage_percent=call.args.opt_integer("percent") or 0,
        now=call.now(),
    )
    call.record(to.label, after={"seats": entry(row)})
    return {"message": "Successfully set seats", "seats": entry(row)}


@registry.operation(
    "getseats",
    group=GROUP,
    summary="Get Seats",
    area=AREA,
    params=list(TARGETS),
    returns={"seats": ENTRY, "in_use": "for a user: {sessions, machines} live now"},
)
async def get_seats(call: SellerCall) -> dict[str, Any]:
    """The seat rule set on a subscription, a key or a user; for a user, also the sessions and
    machines it holds now. Refusals: `seat_rule_not_found` (404), `seat_target`."""
    to = await _target(call)
    answer: dict[str, Any] = {
        "message": "Successfully retrieved seats",
        "seats": entry(await seats.show(call.db, to)),
    }
    if to.owner == "user":
        sessions, machines = await seats.in_use(call.db, to.owner_id, call.now())
        answer["in_use"] = {"sessions": sessions, "machines": machines}
    return answer


@registry.operation(
    "delseats", group=GROUP, summary="Remove Seats", area=AREA, mutates=True, params=list(TARGETS), returns={}
)
async def delete_seats(call: SellerCall) -> dict[str, Any]:
    """Remove the seat rule of a subscription, a key or a user. Refusals: `seat_rule_not_found`
    (404), `seat_target`."""
    to = await _target(call)
    row = await seats.delete(call.db, to)
    call.record(to.label, before={"seats": entry(row)})
    return {"message": "Successfully removed seats"}


@registry.operation(
    "setheartbeat",
    group=GROUP,
    summary="Set Heartbeat",
    area="settings",
    mutates=True,
    params=[
        Param(
            "interval",
            kind="int",
            required=True,
            minimum=0,
            maximum=heartbeats.MAX_SECONDS,
            doc="seconds between a logged-in session's beats (0: no beats required)",
        ),
        Param(
            "grace",
            kind="int",
            minimum=0,
            maximum=heartbeats.MAX_SECONDS,
            doc="seconds a session may be late before it is ended (default 0)",
        ),
    ],
    returns={"heartbeat": "{interval, grace}"},
)
async def set_heartbeat(call: SellerCall) -> dict[str, Any]:
    """Require logged-in sessions to beat (a login, `check` or `heartbeat`) every `interval`
    seconds; one silent for interval + grace is ended off the request path, which frees its
    seat."""
    interval, grace = call.args.integer("interval"), call.args.opt_integer("grace") or 0
    await heartbeats.set_policy(call.db, call.app_id, interval, grace)
    call.record("app", after={"heartbeat_interval": interval, "heartbeat_grace": grace})
    return {"message": "Successfully set the heartbeat", "heartbeat": {"interval": interval, "grace": grace}}
