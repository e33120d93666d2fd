"""Seller API — Retrieve User Subscriptions (`usersubs`), whose shape the interface document fixes."""

from __future__ import annotations

import re
from typing import Any

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import subscriptions
from licensegate.services import Services
from tests.helpers import Seller

pytestmark = pytest.mark.anyio

DAY = 86400
ENTRY_KEYS = {"username", "subscription", "subscription_id", "expiry", "is_banned", "is_paused"}


def check_shape(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Exactly the document's shape: success, count and subscriptions, nothing else."""
    assert set(body) == {"success", "count", "subscriptions"}
    assert body["success"] is True
    assert type(body["count"]) is int
    entries: list[dict[str, Any]] = body["subscriptions"]
    assert isinstance(entries, list)
    for entry in entries:
        assert set(entry) == ENTRY_KEYS
        assert isinstance(entry["username"], str)
        assert isinstance(entry["subscription"], str)
        assert re.fullmatch(r"\d+", entry["subscription_id"])
        assert re.fullmatch(r"\d+", entry["expiry"])
        assert entry["is_banned"] in (0, 1)
        assert type(entry["is_banned"]) is int
        assert entry["is_paused"] in (0, 1)
        assert type(entry["is_paused"]) is int
    return entries


async def usersubs(seller: Seller, **params: Any) -> list[dict[str, Any]]:
    return check_shape(await seller.ok("usersubs", **params))


async def sub_id(services: Services, seller: Seller, name: str) -> str:
    return str((await subscriptions.get(services.db, seller.app_id, name))["id"])


async def test_usersubs_has_exactly_the_documented_shape(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    body = await seller.ok("usersubs")
    entries = check_shape(body)
    assert "message" not in body
    assert body["count"] == 1
    assert entries == [
        {
            "username": "alice",
            "subscription": "default",
            "subscription_id": await sub_id(services, seller, "default"),
            "expiry": str(clock.now() + DAY),
            "is_banned": 0,
            "is_paused": 0,
        }
    ]


async def test_usersubs_is_empty_without_grants(seller: Seller) -> None:
    body = await seller.ok("usersubs")
    check_shape(body)
    assert (body["count"], body["subscriptions"]) == (0, [])


async def test_usersubs_lists_every_grant_by_user_then_grant_including_expired(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("adduser", user="bob", expiry="1")
    await seller.ok("adduser", user="alice", sub="gold", expiry="2")
    await seller.ok("extend", user="bob", sub="gold", expiry="3")
    await seller.ok("extend", user="alice", sub="default", expiry="4")
    clock.advance(DAY + 1)  # bob's default grant has expired; it is still listed
    entries = await usersubs(seller)
    assert [(e["username"], e["subscription"], e["expiry"]) for e in entries] == [
        ("bob", "default", str(start + DAY)),
        ("bob", "gold", str(start + 3 * DAY)),
        ("alice", "gold", str(start + 2 * DAY)),
        ("alice", "default", str(start + 4 * DAY)),
    ]


async def test_usersubs_flags_banned_users(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("adduser", user="bob", expiry="1")
    await seller.ok("banuser", user="bob")
    entries = await usersubs(seller)
    assert [(e["username"], e["is_banned"]) for e in entries] == [("alice", 0), ("bob", 1)]
    await seller.ok("unbanuser", user="bob")
    assert [e["is_banned"] for e in await usersubs(seller)] == [0, 0]


async def test_a_paused_users_grant_shows_its_projected_expiry(seller: Seller, clock: MovableClock) -> None:
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("pauseuser", username="alice")
    clock.advance(500)
    (entry,) = await usersubs(seller)
    assert (entry["is_paused"], entry["expiry"]) == (1, str(start + DAY + 500))
    await seller.ok("unpauseuser", username="alice")
    (entry,) = await usersubs(seller)
    assert (entry["is_paused"], entry["expiry"]) == (0, str(start + DAY + 500))


async def test_a_paused_subscriptions_grants_show_as_paused(seller: Seller, clock: MovableClock) -> None:
    start = clock.now()
    await seller.ok("adduser", user="running", expiry="1")
    await seller.ok("adduser", user="expired", expiry="0.5")
    clock.advance(DAY // 2 + 10)  # `expired` ran out before the pause
    await seller.ok("pausesub", subscription="default")
    clock.advance(1000)
    entries = await usersubs(seller)
    assert [(e["username"], e["is_paused"], e["expiry"]) for e in entries] == [
        ("running", 1, str(start + DAY + 1000)),  # as if unpaused now
        ("expired", 1, str(start + DAY // 2)),  # an unpause gives it nothing back
    ]


async def test_usersubs_filters_by_user(seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("adduser", user="bob", expiry="1")
    await seller.ok("extend", user="bob", sub="gold", expiry="1")
    body = await seller.ok("usersubs", user="bob")
    entries = check_shape(body)
    assert body["count"] == 2
    assert [(e["username"], e["subscription"]) for e in entries] == [("bob", "default"), ("bob", "gold")]


async def test_usersubs_for_an_unknown_user_is_404(seller: Seller) -> None:
    await seller.fails("usersubs", 404, "user_not_found", user="ghost")


async def test_a_user_without_grants_has_an_empty_list(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("delsub", user="alice", sub="default")
    body = await seller.ok("usersubs", user="alice")
    check_shape(body)
    assert (body["count"], body["subscriptions"]) == (0, [])


async def test_count_is_the_total_before_paging(seller: Seller) -> None:
    for n in range(5):
        await seller.ok("adduser", user=f"user{n}", expiry="1")
    body = await seller.ok("usersubs", page="2", limit="2")
    entries = check_shape(body)
    assert body["count"] == 5
    assert [e["username"] for e in entries] == ["user2", "user3"]
    last = await seller.ok("usersubs", page="3", limit="2")
    assert (last["count"], [e["username"] for e in check_shape(last)]) == (5, ["user4"])
    beyond = await seller.ok("usersubs", page="9", limit="2")
    assert (beyond["count"], check_shape(beyond)) == (5, [])


async def test_paging_with_a_user_filter_counts_that_users_grants(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    for name in ("s1", "s2", "s3"):
        await seller.ok("addsub", name=name, level="9")
        await seller.ok("extend", user="alice", sub=name, expiry="1")
    body = await seller.ok("usersubs", user="alice", limit="3", page="2")
    assert body["count"] == 4
    assert [e["subscription"] for e in check_shape(body)] == ["s3"]


async def test_usersub_is_an_alias(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    body = await seller.ok("usersub")
    check_shape(body)
    assert body["count"] == 1


async def test_usersubs_covers_only_this_application(seller: Seller, services: Services) -> None:
    from tests.helpers import create_seller

    other = await create_seller(services, seller.http, owner="other", name="other-app")
    await other.ok("adduser", user="alice", expiry="1")
    body = await seller.ok("usersubs")
    assert (body["count"], body["subscriptions"]) == (0, [])


async def test_usersubs_parameter_refusals(seller: Seller) -> None:
    await seller.fails("usersubs", 400, "number_out_of_range", limit="0")
    await seller.fails("usersubs", 400, "number_out_of_range", limit="1001")
    await seller.fails("usersubs", 400, "invalid_number", page="two")
    await seller.fails("usersubs", 400, "parameter_too_long", user="u" * 65)


async def test_usersubs_needs_a_valid_seller_key(seller: Seller) -> None:
    await seller.fails("usersubs", 401, "unknown_seller_key", sellerkey="0" * 32)
    await seller.fails("usersubs", 401, "missing_seller_key", sellerkey="")


async def test_usersubs_declares_exactly_the_documents_statuses() -> None:
    from licensegate.operations.seller import registry

    op = registry.get("usersubs")
    assert op is not None
    assert op.statuses == frozenset({200, 400, 401, 403, 404, 429, 500})
    assert registry.get("usersub") is op
