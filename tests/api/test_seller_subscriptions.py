"""Seller API — Subscription group, over HTTP."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.helpers import Seller, make_user

pytestmark = pytest.mark.anyio


async def test_new_application_has_the_default_subscription(seller: Seller) -> None:
    body = await seller.ok("fetchallsubs")
    assert [(s["name"], s["level"], s["paused"]) for s in body["subs"]] == [("default", "1", 0)]


async def test_addsub_creates_and_refuses_a_duplicate(seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="2")
    names = [s["name"] for s in (await seller.ok("fetchallsubs"))["subs"]]
    assert names == ["default", "gold"]
    await seller.fails("addsub", 409, "subscription_exists", name="gold", level="3")


async def test_addsub_requires_name_and_level(seller: Seller) -> None:
    await seller.fails("addsub", 400, "missing_parameter", name="gold")
    await seller.fails("addsub", 400, "missing_parameter", level="2")
    await seller.fails("addsub", 400, "parameter_too_long", name="x" * 65, level="1")


async def test_editsub_changes_level_and_name(seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("editsub", sub="gold", level="5", newName="platinum")
    subs = {s["name"]: s["level"] for s in (await seller.ok("fetchallsubs"))["subs"]}
    assert subs == {"default": "1", "platinum": "5"}
    # KeyAuth's Telegram bot sends `name` instead of `sub`.
    await seller.ok("editsub", name="platinum", level="6")
    await seller.fails("editsub", 404, "subscription_not_found", sub="nope", level="1")
    await seller.fails("editsub", 409, "subscription_exists", sub="platinum", newName="default")


async def test_delappsub_deletes_and_reports_unknown(seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("delappsub", name="gold")
    assert [s["name"] for s in (await seller.ok("fetchallsubs"))["subs"]] == ["default"]
    await seller.fails("delappsub", 404, "subscription_not_found", name="gold")


async def grant(services: Services, app_id: int, sub_name: str, username: str, seconds: int) -> int:
    """A user holding the subscription for `seconds` from now, as adduser makes one; its id."""
    return await make_user(services, app_id, username, sub=sub_name, days=seconds / 86400)


async def test_pausing_a_subscription_freezes_time_and_unpausing_gives_it_back(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    user_id = await grant(services, seller.app_id, "default", "alice", 1000)
    assert (await seller.ok("countsubs", name="default"))["count"] == 1

    await seller.ok("pausesub", subscription="default")
    assert (await seller.ok("fetchallsubs"))["subs"][0]["paused"] == 1
    assert (await seller.ok("countsubs", name="default"))["count"] == 0
    await seller.fails("pausesub", 409, "already_paused", subscription="default")

    clock.advance(400)
    await seller.ok("unpausesub", subscription="default")
    expires = await services.db.fetch_value(
        "SELECT expires_at FROM user_subscriptions WHERE user_id = ?", user_id
    )
    assert expires == start + 1400  # 1000 s were left when paused, and still are
    assert (await seller.ok("countsubs", name="default"))["count"] == 1
    await seller.fails("unpausesub", 409, "not_paused", subscription="default")


async def test_unpause_does_not_revive_grants_that_had_expired(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    user_id = await grant(services, seller.app_id, "default", "bob", 1)
    clock.advance(11)  # the grant ended 10 s ago
    await seller.ok("pausesub", sub="default")
    clock.advance(100)
    await seller.ok("unpausesub", name="default")
    expires = await services.db.fetch_value(
        "SELECT expires_at FROM user_subscriptions WHERE user_id = ?", user_id
    )
    assert expires == clock.now() - 110


async def test_pause_and_count_unknown_subscription(seller: Seller) -> None:
    await seller.fails("pausesub", 404, "subscription_not_found", subscription="ghost")
    await seller.fails("unpausesub", 404, "subscription_not_found", subscription="ghost")
    await seller.fails("countsubs", 404, "subscription_not_found", name="ghost")
    await seller.fails("pausesub", 400, "missing_parameter")


async def test_deleting_a_subscription_removes_users_grants(seller: Seller, services: Services) -> None:
    user_id = await grant(services, seller.app_id, "default", "carol", 50)
    await seller.ok("delappsub", name="default")
    left = await services.db.fetch_value("SELECT COUNT(*) FROM user_subscriptions WHERE user_id = ?", user_id)
    assert left == 0


async def test_subscription_changes_are_audited_with_before_and_after(seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("editsub", sub="gold", level="3")
    entries = (await seller.ok("fetchauditlogs"))["logs"]
    edit = next(e for e in entries if e["action"] == "editsub")
    assert (edit["target"], edit["before"], edit["after"]) == (
        "subscription:gold",
        {"name": "gold", "level": "2"},
        {"name": "gold", "level": "3"},
    )
