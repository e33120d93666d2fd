"""Seller API — Subscription: create, delete, edit, list, pause and unpause subscription definitions."""

from __future__ import annotations

from typing import Any

from licensegate.domain import subscriptions
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Subscription"
AREA: Area = "subscriptions"
NAME = Param("name", required=True, max_length=64, doc="subscription name")
LEVEL = Param("level", required=True, max_length=12, doc="the license level that grants this subscription")


@registry.operation(
    "addsub",
    group=GROUP,
    summary="Create Subscription",
    area=AREA,
    mutates=True,
    params=[NAME, LEVEL],
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Create a subscription. Keys of its level grant it when redeemed."""
    name, level = call.args.text("name"), call.args.text("level")
    await subscriptions.create(call.db, call.app_id, name=name, level=level, now=call.now())
    call.record(f"subscription:{name}", after={"name": name, "level": level})
    return {"message": "Successfully created subscription!"}


@registry.operation(
    "delappsub", group=GROUP, summary="Delete Subscription", area=AREA, mutates=True, params=[NAME]
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete a subscription; every user's grant of it is removed with it, and the client sessions
    of the users who held one end."""
    name = call.args.text("name")
    await subscriptions.delete(call.db, call.app_id, name)
    call.record(f"subscription:{name}", before={"name": name})
    return {"message": "Successfully deleted subscription!"}


@registry.operation(
    "editsub",
    group=GROUP,
    summary="Edit Subscription",
    area=AREA,
    mutates=True,
    params=[
        Param("sub", required=True, max_length=64, aliases=("name",), doc="the subscription to edit"),
        Param("level", max_length=12, doc="new level"),
        Param("newName", max_length=64, doc="new name"),
    ],
)
async def edit(call: SellerCall) -> dict[str, Any]:
    """Change a subscription's level and/or name."""
    name = call.args.text("sub")
    before, after = await subscriptions.edit(
        call.db, call.app_id, name, level=call.args.opt_text("level"), new_name=call.args.opt_text("newName")
    )
    call.record(f"subscription:{name}", before=before, after=after)
    return {"message": "Subscription successfully edited"}


@registry.operation(
    "fetchallsubs",
    group=GROUP,
    summary="Get Subscription List",
    area=AREA,
    returns={"subs": "[{id, name, level, paused (0/1), created_at}]"},
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """Every subscription of the application (an empty list when there are none)."""
    return {
        "message": "Successfully retrieved subscriptions",
        "subs": await subscriptions.list_all(call.db, call.app_id),
    }


SUBSCRIPTION = Param(
    "subscription", required=True, max_length=64, aliases=("sub", "name"), doc="subscription name"
)


@registry.operation(
    "pausesub",
    group=GROUP,
    summary="Pause Subscription",
    area=AREA,
    mutates=True,
    params=[SUBSCRIPTION],
)
async def pause(call: SellerCall) -> dict[str, Any]:
    """Stop access through this subscription and freeze its users' remaining time. The client
    sessions of the users holding a grant of it end (a new login decides on what they still hold)."""
    await subscriptions.pause(call.db, call.app_id, call.args.text("subscription"), call.now())
    call.record(f"subscription:{call.args.text('subscription')}", before={"paused": 0}, after={"paused": 1})
    return {"message": "Successfully paused subscription!"}


@registry.operation(
    "unpausesub",
    group=GROUP,
    summary="Unpause Subscription",
    area=AREA,
    mutates=True,
    params=[SUBSCRIPTION],
)
async def unpause(call: SellerCall) -> dict[str, Any]:
    """Restore access; each user's expiry moves forward by the length of the pause."""
    await subscriptions.unpause(call.db, call.app_id, call.args.text("subscription"), call.now())
    call.record(f"subscription:{call.args.text('subscription')}", before={"paused": 1}, after={"paused": 0})
    return {"message": "Successfully unpaused subscription!"}


@registry.operation(
    "countsubs",
    group=GROUP,
    summary="Count Active Subscriptions",
    area=AREA,
    params=[NAME],
    returns={"count": "number of active (unexpired, unpaused) grants of this subscription"},
)
async def count(call: SellerCall) -> dict[str, Any]:
    """How many users currently hold this subscription."""
    total = await subscriptions.count_active(call.db, call.app_id, call.args.text("name"), call.now())
    return {"message": "Subscription count found successfully", "count": total}
