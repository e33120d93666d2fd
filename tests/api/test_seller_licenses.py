"""Seller API — License group, over HTTP (and `domain.licenses.redeem`, which makes keys used)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import licenses, users
from licensegate.domain.errors import NotFound
from licensegate.domain.permissions import Scope
from licensegate.services import Services
from licensegate.store import licenses as license_store
from tests.helpers import Seller, create_seller
from tests.helpers import make_user as make_user_holding

pytestmark = pytest.mark.anyio

DAY = 86400
DEFAULT_KEY = re.compile(r"[0-9a-zA-Z]{6}(-[0-9a-zA-Z]{6}){5}")


# --- helpers ----------------------------------------------------------------------------------


async def new_key(seller: Seller, **params: object) -> str:
    params.setdefault("expiry", 1)
    key: str = (await seller.ok("add", **params))["key"]
    return key


async def make_user(
    services: Services, app_id: int, username: str, hwids: Sequence[str] = (), last_ip: str | None = None
) -> int:
    """A user holding no grant (made as adduser makes one, its grant then taken away), with these
    HWIDs and last address."""
    db, now, scope = services.db, services.clock.now(), Scope(app_id)
    user_id = await make_user_holding(services, app_id, username)
    await users.remove_subscription(db, scope, username, "default")
    for hwid in hwids:
        await users.add_hwid(db, scope, username, hwid, now)
    if last_ip is not None:
        # Raw: only a client login writes the last address, and this suite's client has one address.
        await db.execute("UPDATE users SET last_ip = ? WHERE id = ?", last_ip, user_id)
    return user_id


async def try_redeem(services: Services, app_id: int, key: str, user_id: int) -> bool:
    async with services.db.transaction() as tx:
        row = await license_store.find(tx, app_id, key)
        assert row is not None
        return await licenses.redeem(tx, app_id, row, user_id, services.clock.now())


async def redeem(
    services: Services,
    app_id: int,
    key: str,
    username: str,
    hwids: Sequence[str] = (),
    last_ip: str | None = None,
) -> int:
    """Make `key` used by a new user (client redemption has its own operations); the user's id."""
    user_id = await make_user(services, app_id, username, hwids, last_ip)
    assert await try_redeem(services, app_id, key, user_id)
    return user_id


async def grants(services: Services, user_id: int) -> list[dict[str, object]]:
    return await services.db.fetch_all(
        "SELECT s.name, us.expires_at, us.key_id FROM user_subscriptions us "
        "JOIN subscriptions s ON s.id = us.subscription_id WHERE us.user_id = ? ORDER BY s.name",
        user_id,
    )


async def key_row(services: Services, app_id: int, key: str) -> Mapping[str, object] | None:
    return await license_store.find(services.db, app_id, key)


async def user_exists(services: Services, user_id: int) -> bool:
    count: int = await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE id = ?", user_id)
    return count == 1


async def all_keys(seller: Seller) -> list[str]:
    return [k["key"] for k in (await seller.ok("fetchallkeys"))["keys"]]


# --- add --------------------------------------------------------------------------------------


async def test_add_generates_one_key_with_the_default_mask(seller: Seller, services: Services) -> None:
    body = await seller.ok("add", expiry=30)
    assert set(body) == {"success", "message", "key", "keys"}
    assert body["message"] == "License Successfully Generated"
    assert body["keys"] == [body["key"]]
    assert DEFAULT_KEY.fullmatch(body["key"])
    row = await key_row(services, seller.app_id, body["key"])
    assert row is not None
    assert (row["duration"], row["level"], row["status"], row["note"]) == (30 * DAY, "1", "unused", None)
    assert (row["generated_by"], row["banned_reason"], row["used_at"]) == ("SellerAPI", None, None)


async def test_add_stores_fractional_days_as_rounded_seconds(seller: Seller, services: Services) -> None:
    key = await new_key(seller, expiry="0.0069444445")  # KeyAuth's "10 minutes" preset
    row = await key_row(services, seller.app_id, key)
    assert row is not None
    assert row["duration"] == 600


async def test_add_with_amount_mask_character_level_note_and_owner(
    seller: Seller, services: Services
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    body = await seller.ok(
        "add", expiry=7, amount=3, mask="GOLD-****", character=2, level="2", note=" vip ", owner="shop"
    )
    assert len(body["keys"]) == 3
    assert len(set(body["keys"])) == 3
    assert body["key"] == body["keys"][0]
    assert all(re.fullmatch(r"GOLD-[0-9A-Z]{4}", k) for k in body["keys"])
    exported = (await seller.ok("fetchallkeys"))["keys"]
    assert [(k["level"], k["note"], k["genby"], k["expires"]) for k in exported] == [
        ("2", " vip ", "shop", 7 * DAY)
    ] * 3
    lower = await new_key(seller, mask="****-****", character=3)
    assert re.fullmatch(r"[0-9a-z]{4}-[0-9a-z]{4}", lower)


async def test_add_text_format_gives_every_key_one_per_line(seller: Seller) -> None:
    response = await seller.call("add", expiry=1, amount=3, format="text")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    lines = response.text.split("\n")
    assert len(lines) == 3
    assert all(DEFAULT_KEY.fullmatch(line) for line in lines)  # nothing cut off the last key
    assert sorted(lines) == sorted(await all_keys(seller))


async def test_add_custom_key_once_and_only_alone(seller: Seller) -> None:
    body = await seller.ok("add", expiry=1, mask="MY-OWN-KEY")
    assert body["keys"] == ["MY-OWN-KEY"]
    await seller.fails("add", 409, "key_exists", expiry=1, mask="MY-OWN-KEY")
    await seller.fails("add", 400, "custom_key_amount", expiry=1, mask="OTHER-KEY", amount=2)
    assert await all_keys(seller) == ["MY-OWN-KEY"]


async def test_add_refuses_a_level_no_subscription_has(seller: Seller) -> None:
    await seller.fails("add", 404, "level_has_no_subscription", expiry=1, level="9")
    assert await all_keys(seller) == []


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({}, "missing_parameter"),
        ({"expiry": "abc"}, "invalid_number"),
        ({"expiry": 0}, "number_out_of_range"),
        ({"expiry": -1}, "number_out_of_range"),
        ({"expiry": "0.000001"}, "number_out_of_range"),  # rounds to 0 seconds
        ({"expiry": 100001}, "number_out_of_range"),
        ({"expiry": 1, "amount": 0}, "number_out_of_range"),
        ({"expiry": 1, "amount": 101}, "number_out_of_range"),
        ({"expiry": 1, "character": 4}, "number_out_of_range"),
        ({"expiry": 1, "mask": "has space*"}, "invalid_mask"),
        ({"expiry": 1, "mask": "a,b*"}, "invalid_mask"),
        ({"expiry": 1, "mask": "*" * 129}, "parameter_too_long"),
        ({"expiry": 1, "note": "n" * 257}, "parameter_too_long"),
        ({"expiry": 1, "owner": "o" * 65}, "parameter_too_long"),
        ({"expiry": 1, "level": "1" * 13}, "parameter_too_long"),
        ({"expiry": 1, "format": "xml"}, "invalid_parameter"),
    ],
)
async def test_add_refuses_bad_parameters(seller: Seller, params: dict[str, object], error: str) -> None:
    await seller.fails("add", 400, error, **params)


async def test_add_gives_up_when_the_mask_runs_out_of_keys_and_creates_none(seller: Seller) -> None:
    # One placeholder of upper case: only 36 different keys exist.
    await seller.fails("add", 409, "key_space_exhausted", expiry=1, mask="K*", character=2, amount=100)
    assert await all_keys(seller) == []


async def test_concurrent_add_calls_never_make_duplicates(seller: Seller, services: Services) -> None:
    # 1,296 possible keys, so the five calls collide with each other and must retry.
    bodies = await asyncio.gather(
        *(seller.ok("add", expiry=1, amount=20, mask="**", character=2) for _ in range(5))
    )
    made = [k for body in bodies for k in body["keys"]]
    assert len(made) == 100
    assert len(set(made)) == 100
    stored = await services.db.fetch_all("SELECT key FROM license_keys WHERE app_id = ?", seller.app_id)
    assert sorted(r["key"] for r in stored) == sorted(made)


async def test_concurrent_custom_keys_are_created_once(seller: Seller) -> None:
    responses = await asyncio.gather(*(seller.call("add", expiry=1, mask="THE-KEY") for _ in range(6)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 409, 409, 409, 409, 409]
    assert {r.json().get("error") for r in responses if r.status_code == 409} == {"key_exists"}
    assert await all_keys(seller) == ["THE-KEY"]


async def test_license_operations_need_the_licenses_permission(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", permissions="users"))["sellerkey"]
    response = await seller.call("add", sellerkey=limited, expiry=1)
    assert (response.status_code, response.json()["error"]) == (403, "permission_denied")


# --- redeem (domain) --------------------------------------------------------------------------


async def test_redeem_grants_every_subscription_of_the_level_once(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="extra", level="1")
    await seller.ok("addsub", name="other", level="2")
    key = await new_key(seller, expiry=2)
    user_id = await redeem(services, seller.app_id, key, "alice")
    row = await key_row(services, seller.app_id, key)
    assert row is not None
    assert (row["status"], row["used_by"], row["used_by_user_id"], row["used_at"]) == (
        "used",
        "alice",
        user_id,
        clock.now(),
    )
    expires = clock.now() + 2 * DAY
    assert await grants(services, user_id) == [
        {"name": "default", "expires_at": expires, "key_id": row["id"]},
        {"name": "extra", "expires_at": expires, "key_id": row["id"]},
    ]
    second = await make_user(services, seller.app_id, "bob")
    assert not await try_redeem(services, seller.app_id, key, second)
    assert await grants(services, second) == []


async def test_redeem_refuses_a_banned_key(seller: Seller, services: Services) -> None:
    key = await new_key(seller)
    await seller.ok("ban", key=key, reason="fraud")
    user_id = await make_user(services, seller.app_id, "carol")
    assert not await try_redeem(services, seller.app_id, key, user_id)
    assert await grants(services, user_id) == []


async def test_concurrent_redemptions_of_one_key_grant_once(seller: Seller, services: Services) -> None:
    key = await new_key(seller)
    users = [await make_user(services, seller.app_id, f"user{i}") for i in range(4)]
    results = await asyncio.gather(*(try_redeem(services, seller.app_id, key, u) for u in users))
    assert sorted(results) == [False, False, False, True]
    total = await services.db.fetch_value("SELECT COUNT(*) FROM user_subscriptions")
    assert total == 1


async def test_redeem_refuses_when_the_level_lost_its_subscriptions(
    seller: Seller, services: Services
) -> None:
    key = await new_key(seller)
    user_id = await make_user(services, seller.app_id, "dave")
    await seller.ok("delappsub", name="default")
    with pytest.raises(NotFound) as caught:
        await try_redeem(services, seller.app_id, key, user_id)
    assert caught.value.error == "level_has_no_subscription"
    row = await key_row(services, seller.app_id, key)
    assert row is not None
    assert row["status"] == "unused"  # the transaction rolled back


async def test_redeem_during_a_subscription_pause_keeps_the_full_duration(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await new_key(seller, expiry=1)
    await seller.ok("pausesub", subscription="default")
    clock.advance(500)
    user_id = await redeem(services, seller.app_id, key, "erin")
    clock.advance(300)
    await seller.ok("unpausesub", subscription="default")
    assert (await grants(services, user_id))[0]["expires_at"] == clock.now() + DAY


# --- verify, info, setnote --------------------------------------------------------------------


async def test_verify_finds_a_key_and_refuses_an_unknown_one(seller: Seller) -> None:
    key = await new_key(seller)
    assert (await seller.ok("verify", key=key))["message"] == "Key Successfully Verified"
    await seller.fails("verify", 404, "key_not_found", key="NOPE")
    await seller.fails("verify", 400, "missing_parameter")
    await seller.fails("verify", 400, "parameter_too_long", key="k" * 129)


async def test_info_of_an_unused_key(seller: Seller, clock: MovableClock) -> None:
    key = await new_key(seller, expiry=3, note="n1")
    body = await seller.ok("info", key=key)
    assert body == {
        "success": True,
        "message": "Successfully retrieved license information",
        "key": key,
        "duration": 3 * DAY,
        "hwid": [],
        "note": "n1",
        "status": "Not Used",
        "level": "1",
        "createdby": "SellerAPI",
        "usedby": None,
        "usedon": None,
        "creationdate": clock.now(),
        "banned": None,
    }


async def test_info_of_a_used_key_lists_the_users_hwids(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await new_key(seller)
    clock.advance(60)
    await redeem(services, seller.app_id, key, "frank", hwids=["AAA-1", "BBB-2"])
    body = await seller.ok("info", key=key)
    assert (body["status"], body["usedby"], body["usedon"], body["hwid"]) == (
        "Used",
        "frank",
        clock.now(),
        ["AAA-1", "BBB-2"],
    )
    await seller.ok("ban", key=key, reason="chargeback")
    body = await seller.ok("info", key=key)
    assert (body["status"], body["banned"]) == ("Banned", "chargeback")
    await seller.fails("info", 404, "key_not_found", key="missing")
    await seller.fails("info", 400, "missing_parameter")


async def test_setnote_replaces_the_note(seller: Seller) -> None:
    key = await new_key(seller, note="old")
    assert (await seller.ok("setnote", key=key, note="new note"))["message"] == "Successfully set note"
    assert (await seller.ok("info", key=key))["note"] == "new note"
    await seller.fails("setnote", 404, "key_not_found", key="missing", note="x")
    await seller.fails("setnote", 400, "missing_parameter", key=key)
    await seller.fails("setnote", 400, "parameter_too_long", key=key, note="x" * 257)


async def test_setduration_changes_an_unused_keys_duration_only(seller: Seller, services: Services) -> None:
    key = await new_key(seller, expiry=3)
    body = await seller.ok("setduration", key=key, expiry=0.5)
    assert (body["message"], body["duration"]) == ("Successfully set license duration!", DAY // 2)
    assert (await seller.ok("info", key=key))["duration"] == DAY // 2
    await seller.fails("setduration", 404, "key_not_found", key="missing", expiry=1)
    await seller.fails("setduration", 400, "number_out_of_range", key=key, expiry=0)
    await seller.fails("setduration", 400, "missing_parameter", key=key)
    await redeem(services, seller.app_id, key, "ulla")
    await seller.fails("setduration", 409, "key_used_duration", key=key, expiry=9)


# --- del / delmultiple ------------------------------------------------------------------------


async def test_del_deletes_an_unused_key(seller: Seller) -> None:
    key = await new_key(seller)
    other = await new_key(seller)
    assert (await seller.ok("del", key=key))["message"] == "Successfully deleted license!"
    assert await all_keys(seller) == [other]
    await seller.fails("del", 404, "key_not_found", key=key)
    await seller.fails("del", 400, "missing_parameter")
    await seller.fails("del", 400, "invalid_boolean", key=other, userToo="maybe")


async def test_del_removes_the_grants_the_key_made_but_keeps_the_user(
    seller: Seller, services: Services
) -> None:
    key = await new_key(seller)
    other = await new_key(seller)
    user_id = await redeem(services, seller.app_id, key, "gina")
    # The same user redeemed a second key; its grant must survive.
    async with services.db.transaction() as tx:
        row = await license_store.find(tx, seller.app_id, other)
        assert row is not None
        assert await licenses.redeem(tx, seller.app_id, row, user_id, services.clock.now())
    assert len(await grants(services, user_id)) == 2
    await seller.ok("del", key=key, userToo=0)
    assert await user_exists(services, user_id)
    left = await grants(services, user_id)
    assert len(left) == 1
    assert left[0]["key_id"] == row["id"]


async def test_del_with_userToo_deletes_the_user(seller: Seller, services: Services) -> None:
    key = await new_key(seller)
    user_id = await redeem(services, seller.app_id, key, "hank")
    await seller.ok("del", key=key, userToo=1)
    assert not await user_exists(services, user_id)
    assert await all_keys(seller) == []


async def test_del_with_userToo_on_an_unused_key_deletes_only_the_key(
    seller: Seller, services: Services
) -> None:
    key = await new_key(seller)
    bystander = await make_user(services, seller.app_id, "iris")
    await seller.ok("del", key=key, userToo=1)
    assert await all_keys(seller) == []
    assert await user_exists(services, bystander)


async def test_delmultiple_deletes_keys_separated_by_commas_and_spaces(
    seller: Seller, services: Services
) -> None:
    keys = [await new_key(seller) for _ in range(4)]
    used_by = await redeem(services, seller.app_id, keys[0], "jack")
    body = await seller.ok("delmultiple", key=f"{keys[0]}, {keys[1]}\n{keys[2]},{keys[0]}")
    assert body == {"success": True, "message": "Successfully deleted licenses!", "deleted": 3}
    assert await all_keys(seller) == [keys[3]]
    assert await user_exists(services, used_by)
    assert await grants(services, used_by) == []


async def test_delmultiple_with_userToo_deletes_the_users(seller: Seller, services: Services) -> None:
    keys = [await new_key(seller) for _ in range(3)]
    first = await redeem(services, seller.app_id, keys[0], "kate")
    second = await redeem(services, seller.app_id, keys[1], "liam")
    body = await seller.ok("delmultiple", key=" ".join(keys), userToo=1)
    assert body["deleted"] == 3
    assert not await user_exists(services, first)
    assert not await user_exists(services, second)


async def test_delmultiple_is_all_or_nothing(seller: Seller) -> None:
    keys = [await new_key(seller) for _ in range(2)]
    body = await seller.fails("delmultiple", 404, "key_not_found", key=f"{keys[0]},GHOST-1, GHOST-2")
    assert "GHOST-1" in body["message"]
    assert "GHOST-2" in body["message"]
    assert keys[0] not in body["message"]
    assert sorted(await all_keys(seller)) == sorted(keys)


async def test_delmultiple_limits(seller: Seller) -> None:
    await seller.fails("delmultiple", 400, "missing_parameter")
    await seller.fails("delmultiple", 400, "missing_parameter", key=", ,")
    many = ",".join(f"K{i}" for i in range(101))
    await seller.fails("delmultiple", 400, "too_many_keys", key=many)


# --- bulk deletes -----------------------------------------------------------------------------


async def used_unused_banned(seller: Seller, services: Services) -> tuple[str, str, str, int]:
    """One unused key, one used key (redeemed by a user) and one banned unused key."""
    unused = await new_key(seller, mask="UNUSED-****")
    used = await new_key(seller, mask="USED-****")
    banned = await new_key(seller, mask="BANNED-****")
    user_id = await redeem(services, seller.app_id, used, "mona")
    await seller.ok("ban", key=banned, reason="leaked")
    return unused, used, banned, user_id


async def test_delunused_deletes_only_unused_unbanned_keys(seller: Seller, services: Services) -> None:
    _unused, used, banned, _ = await used_unused_banned(seller, services)
    body = await seller.ok("delunused")
    assert body == {"success": True, "message": "Deleted All Unused Keys!", "deleted": 1}
    assert sorted(await all_keys(seller)) == sorted([used, banned])
    assert (await seller.ok("delunused"))["deleted"] == 0


async def test_delused_deletes_used_keys_and_users_keep_their_time(
    seller: Seller, services: Services
) -> None:
    unused, _used, banned, user_id = await used_unused_banned(seller, services)
    body = await seller.ok("delused")
    assert body == {"success": True, "message": "Deleted All Used Keys!", "deleted": 1}
    assert sorted(await all_keys(seller)) == sorted([unused, banned])
    kept = await grants(services, user_id)
    assert len(kept) == 1
    assert kept[0]["key_id"] is None
    assert (await seller.ok("delused"))["deleted"] == 0


async def test_delalllicenses_deletes_every_key(seller: Seller, services: Services) -> None:
    _, _, _, user_id = await used_unused_banned(seller, services)
    body = await seller.ok("delalllicenses")
    assert body == {"success": True, "message": "Deleted All Keys!", "deleted": 3}
    assert await all_keys(seller) == []
    assert len(await grants(services, user_id)) == 1
    assert (await seller.ok("delalllicenses"))["deleted"] == 0


async def test_delsubkeys_deletes_the_keys_of_the_subscriptions_level(
    seller: Seller, services: Services
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    keep = await new_key(seller, level="1")
    await new_key(seller, level="2")  # unused
    used = await new_key(seller, level="2")
    await redeem(services, seller.app_id, used, "nina")
    body = await seller.ok("delsubkeys", sub="gold", unusedOnly=1)
    assert body["deleted"] == 1
    assert body["message"]
    assert sorted(await all_keys(seller)) == sorted([keep, used])
    assert (await seller.ok("delsubkeys", sub="gold"))["deleted"] == 1
    assert await all_keys(seller) == [keep]
    assert (await seller.ok("delsubkeys", subscription="gold"))["deleted"] == 0


async def test_delsubkeys_refusals(seller: Seller) -> None:
    await seller.fails("delsubkeys", 404, "subscription_not_found", sub="ghost")
    await seller.fails("delsubkeys", 400, "missing_parameter")
    await seller.fails("delsubkeys", 400, "invalid_boolean", sub="default", unusedOnly="2")


# --- export -----------------------------------------------------------------------------------


async def test_fetchallkeys_lists_every_key_with_its_fields(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    unused, used, banned, _ = await used_unused_banned(seller, services)
    body = await seller.ok("fetchallkeys")
    assert body["message"] == "Successfully Retrieved Licenses"
    assert body["count"] == 3
    entries = {k["key"]: k for k in body["keys"]}
    assert [k["key"] for k in body["keys"]] == [unused, used, banned]
    first = entries[unused]
    assert set(first) == {
        "id",
        "key",
        "note",
        "expires",
        "status",
        "level",
        "genby",
        "gendate",
        "usedon",
        "usedby",
        "banned",
    }
    assert first["id"].isdigit()
    assert (first["status"], first["expires"], first["gendate"], first["usedby"]) == (
        "Not Used",
        DAY,
        clock.now(),
        None,
    )
    assert (entries[used]["status"], entries[used]["usedby"], entries[used]["usedon"]) == (
        "Used",
        "mona",
        clock.now(),
    )
    assert (entries[banned]["status"], entries[banned]["banned"]) == ("Banned", "leaked")


async def test_fetchallkeys_status_filters(seller: Seller, services: Services) -> None:
    unused, used, banned, _ = await used_unused_banned(seller, services)
    for status, expected in (("unused", unused), ("used", used), ("banned", banned)):
        body = await seller.ok("fetchallkeys", status=status)
        assert ([k["key"] for k in body["keys"]], body["count"]) == ([expected], 1)
    await seller.fails("fetchallkeys", 400, "invalid_parameter", status="paused")
    assert [k["key"] for k in (await seller.ok("exportunused"))["keys"]] == [unused]
    assert [k["key"] for k in (await seller.ok("exportused"))["keys"]] == [used]


async def test_fetchallkeys_paging(seller: Seller) -> None:
    made = (await seller.ok("add", expiry=1, amount=5))["keys"]
    page = await seller.ok("fetchallkeys", page=2, limit=2)
    assert ([k["key"] for k in page["keys"]], page["count"]) == (made[2:4], 5)
    assert [k["key"] for k in (await seller.ok("fetchallkeys", limit=3))["keys"]] == made[:3]
    assert (await seller.ok("fetchallkeys", page=9, limit=2))["keys"] == []
    assert [k["key"] for k in (await seller.ok("exportunused", page=3, limit=2))["keys"]] == made[4:]
    await seller.fails("fetchallkeys", 400, "number_out_of_range", limit=0)
    await seller.fails("fetchallkeys", 400, "number_out_of_range", page=0)
    await seller.fails("exportused", 400, "invalid_number", page="x")


async def test_export_without_paging_returns_everything(seller: Seller) -> None:
    for _ in range(2):
        await seller.ok("add", expiry=1, amount=100)
    body = await seller.ok("fetchallkeys")
    assert (len(body["keys"]), body["count"]) == (200, 200)
    assert len((await seller.ok("exportunused"))["keys"]) == 200


async def test_export_text_format_is_one_key_per_line(seller: Seller, services: Services) -> None:
    unused, used, banned, _ = await used_unused_banned(seller, services)
    for type_, params, expected in (
        ("fetchallkeys", {}, [unused, used, banned]),
        ("fetchallkeys", {"status": "banned"}, [banned]),
        ("exportunused", {}, [unused]),
        ("exportused", {}, [used]),
    ):
        response = await seller.call(type_, format="text", **params)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        assert response.text.split("\n") == expected


async def test_exports_of_nothing_are_empty_successes(seller: Seller) -> None:
    for type_ in ("fetchallkeys", "exportunused", "exportused", "fetchusedkeys"):
        body = await seller.ok(type_)
        assert (body["keys"], body["count"]) == ([], 0)
    response = await seller.call("exportused", format="text")
    assert (response.status_code, response.text) == (200, "")


async def test_fetchusedkeys_lists_redemptions_latest_first(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    keys = [await new_key(seller, note=f"n{i}") for i in range(3)]
    await new_key(seller)  # never used
    times = []
    for i, key in enumerate(keys):
        clock.advance(10)
        times.append(clock.now())
        await redeem(services, seller.app_id, key, f"user{i}")
    await seller.ok("ban", key=keys[0], reason="banned keys were still used")
    body = await seller.ok("fetchusedkeys")
    assert body["count"] == 3
    assert body["keys"] == [
        {"key": keys[i], "usedby": f"user{i}", "usedon": times[i], "level": "1", "note": f"n{i}"}
        for i in (2, 1, 0)
    ]
    page = await seller.ok("fetchusedkeys", page=2, limit=2)
    assert ([k["key"] for k in page["keys"]], page["count"]) == ([keys[0]], 3)
    await seller.fails("fetchusedkeys", 400, "number_out_of_range", limit=1001)


# --- addtime ----------------------------------------------------------------------------------


async def test_addtime_without_a_key_lengthens_every_unused_key(seller: Seller, services: Services) -> None:
    unused = await new_key(seller, expiry=1)
    used = await new_key(seller, expiry=1)
    user_id = await redeem(services, seller.app_id, used, "olga")
    before = await grants(services, user_id)
    body = await seller.ok("addtime", time="1.5")
    assert body == {"success": True, "message": "Added time to unused licenses!", "updated": 1}
    assert (await seller.ok("info", key=unused))["duration"] == DAY + 129600
    assert (await seller.ok("info", key=used))["duration"] == DAY
    assert await grants(services, user_id) == before


async def test_addtime_with_nothing_to_extend_succeeds_with_zero(seller: Seller) -> None:
    assert (await seller.ok("addtime", time=1))["updated"] == 0


async def test_addtime_on_one_unused_key(seller: Seller) -> None:
    key = await new_key(seller, expiry=1)
    other = await new_key(seller, expiry=1)
    body = await seller.ok("addtime", time=2, key=key)
    assert body == {"success": True, "message": "Added time to license!", "updated": 1}
    assert (await seller.ok("info", key=key))["duration"] == 3 * DAY
    assert (await seller.ok("info", key=other))["duration"] == DAY


async def test_addtime_on_a_used_key_extends_its_grants(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="extra", level="1")
    key = await new_key(seller, expiry=1)
    user_id = await redeem(services, seller.app_id, key, "pete")
    body = await seller.ok("addtime", time=1, key=key)
    assert body["updated"] == 2
    assert [g["expires_at"] for g in await grants(services, user_id)] == [clock.now() + 2 * DAY] * 2
    assert (await seller.ok("info", key=key))["duration"] == DAY


async def test_addtime_refusals(seller: Seller) -> None:
    await seller.fails("addtime", 404, "key_not_found", time=1, key="missing")
    await seller.fails("addtime", 400, "missing_parameter")
    await seller.fails("addtime", 400, "number_out_of_range", time=0)
    await seller.fails("addtime", 400, "number_out_of_range", time=-2)
    await seller.fails("addtime", 400, "number_out_of_range", time=100001)
    await seller.fails("addtime", 400, "invalid_number", time="soon")


# --- changekeysub -----------------------------------------------------------------------------


async def test_changekeysub_by_subscription_or_level(seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("addsub", name="silver", level="3")
    key = await new_key(seller)
    body = await seller.ok("changekeysub", key=key, sub="gold")
    assert body == {"success": True, "message": "Successfully changed license subscription!", "level": "2"}
    assert (await seller.ok("info", key=key))["level"] == "2"
    assert (await seller.ok("changekeysub", key=key, level="3"))["level"] == "3"
    assert (await seller.ok("info", key=key))["level"] == "3"


async def test_changekeysub_refusals(seller: Seller, services: Services) -> None:
    key = await new_key(seller)
    await seller.fails("changekeysub", 400, "sub_or_level", key=key)
    await seller.fails("changekeysub", 400, "sub_or_level", key=key, sub="default", level="1")
    await seller.fails("changekeysub", 400, "missing_parameter", sub="default")
    await seller.fails("changekeysub", 404, "key_not_found", key="missing", sub="default")
    await seller.fails("changekeysub", 404, "subscription_not_found", key=key, sub="ghost")
    await seller.fails("changekeysub", 404, "level_has_no_subscription", key=key, level="7")
    used = await new_key(seller)
    await redeem(services, seller.app_id, used, "quinn")
    await seller.fails("changekeysub", 409, "key_already_used", key=used, sub="default")
    assert (await seller.ok("info", key=key))["level"] == "1"


# --- ban / unban ------------------------------------------------------------------------------


async def test_ban_and_unban_an_unused_key(seller: Seller) -> None:
    key = await new_key(seller)
    assert (await seller.ok("ban", key=key, reason="leaked"))["message"] == "Successfully banned license!"
    assert (await seller.ok("info", key=key))["banned"] == "leaked"
    await seller.ok("ban", key=key, reason="leaked twice")  # a new reason replaces the old one
    assert (await seller.ok("info", key=key))["banned"] == "leaked twice"
    assert (await seller.ok("unban", key=key))["message"] == "Successfully unbanned license!"
    info = await seller.ok("info", key=key)
    assert (info["status"], info["banned"]) == ("Not Used", None)


async def test_ban_with_userToo_bans_and_blacklists_the_user_and_unban_lifts_both(
    seller: Seller, services: Services
) -> None:
    key = await new_key(seller)
    user_id = await redeem(services, seller.app_id, key, "rita", hwids=["HW-1"], last_ip="198.51.100.4")
    await seller.ok("ban", key=key, reason="cheating", userToo=1)
    banned = await services.db.fetch_value("SELECT banned_reason FROM users WHERE id = ?", user_id)
    assert banned == "cheating"
    blacklist = await services.db.fetch_all(
        "SELECT kind, value FROM blacklist WHERE app_id = ? ORDER BY kind", seller.app_id
    )
    assert blacklist == [{"kind": "hwid", "value": "HW-1"}, {"kind": "ip", "value": "198.51.100.4"}]
    await seller.ok("unban", key=key)
    assert await services.db.fetch_value("SELECT banned_reason FROM users WHERE id = ?", user_id) is None
    assert await services.db.fetch_value("SELECT COUNT(*) FROM blacklist") == 0
    info = await seller.ok("info", key=key)
    assert (info["status"], info["banned"]) == ("Used", None)


async def test_ban_without_userToo_leaves_the_user_alone(seller: Seller, services: Services) -> None:
    key = await new_key(seller)
    user_id = await redeem(services, seller.app_id, key, "sam", hwids=["HW-2"])
    await seller.ok("ban", key=key, reason="refund", userToo=0)
    assert await services.db.fetch_value("SELECT banned_reason FROM users WHERE id = ?", user_id) is None
    assert await services.db.fetch_value("SELECT COUNT(*) FROM blacklist") == 0


async def test_ban_and_unban_refusals(seller: Seller) -> None:
    key = await new_key(seller)
    await seller.fails("ban", 404, "key_not_found", key="missing", reason="x")
    await seller.fails("ban", 400, "missing_parameter", key=key)
    await seller.fails("ban", 400, "parameter_too_long", key=key, reason="r" * 257)
    await seller.fails("unban", 409, "key_not_banned", key=key)
    await seller.fails("unban", 404, "key_not_found", key="missing")
    await seller.fails("unban", 400, "missing_parameter")


# --- isolation --------------------------------------------------------------------------------


async def test_keys_of_another_application_are_invisible(seller: Seller, services: Services) -> None:
    other = await create_seller(services, seller.http, owner="someone", name="other")
    key = await new_key(other, mask="SHARED-KEY")
    await seller.fails("verify", 404, "key_not_found", key=key)
    await seller.fails("del", 404, "key_not_found", key=key)
    assert (await seller.ok("add", expiry=1, mask="SHARED-KEY"))["key"] == "SHARED-KEY"
    assert (await seller.ok("delalllicenses"))["deleted"] == 1
    assert await all_keys(other) == ["SHARED-KEY"]
