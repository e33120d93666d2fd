"""A reseller's view of the License and Users groups: only the keys and users it created, key
levels it may sell, and balance spent for every bit of time it gives (atomically, also under
concurrent calls)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from licensegate.clock import MovableClock
from licensegate.domain.permissions import Scope
from licensegate.services import Services
from tests.helpers import Seller, make_user

pytestmark = pytest.mark.anyio

DAY = 86400


# --- helpers -----------------------------------------------------------------------------------


def acting_as(seller: Seller, key: str) -> Seller:
    return Seller(http=seller.http, key=key, ownerid=seller.ownerid, app_id=seller.app_id, name=seller.name)


async def add_reseller(seller: Seller, name: str = "res", **params: Any) -> Seller:
    body = await seller.ok("addAccount", role="Reseller", user=name, **{"pass": "pw"}, **params)
    return acting_as(seller, body["sellerkey"])


async def balance(seller: Seller, name: str = "res") -> dict[str, int]:
    found: dict[str, int] = (await seller.ok("getbalance", username=name))["balance"]
    return found


async def key_count(services: Services, seller: Seller) -> int:
    found: int = await services.db.fetch_value(
        "SELECT COUNT(*) FROM license_keys WHERE app_id = ?", seller.app_id
    )
    return found


async def usernames(services: Services, seller: Seller) -> list[str]:
    rows = await services.db.fetch_all(
        "SELECT username FROM users WHERE app_id = ? ORDER BY id", seller.app_id
    )
    return [row["username"] for row in rows]


async def account_id(services: Services, username: str) -> int:
    found: int = await services.db.fetch_value("SELECT id FROM accounts WHERE username = ?", username)
    return found


async def redeem(services: Services, seller: Seller, key: str, username: str) -> None:
    """Make the key used by a new user owned by nobody (client redemption, and `activate`, give
    the user to the key's reseller)."""
    from licensegate.domain import licenses

    user_id = await make_user(services, seller.app_id, username)
    async with services.db.transaction() as tx:
        row = await licenses.get(tx, Scope(seller.app_id), key)
        assert await licenses.redeem(tx, seller.app_id, row, user_id, services.clock.now())


@pytest.fixture
async def team(seller: Seller) -> tuple[Seller, Seller]:
    """`res` (level 1 only, a generous balance) and `other` (another reseller of the app)."""
    res = await add_reseller(seller, "res", keylevels="1")
    other = await add_reseller(seller, "other")
    for name in ("res", "other"):
        await seller.ok("setbalance", username=name, day=50, month=50, lifetime=5)
    return res, other


# --- License: add --------------------------------------------------------------------------------


async def test_reseller_add_spends_balance_and_records_the_reseller(
    seller: Seller, services: Services, team: tuple[Seller, Seller]
) -> None:
    res, _ = team
    body = await res.ok("add", expiry=30, amount=3, owner="someone else")
    assert len(body["keys"]) == 3
    assert (await balance(seller))["month"] == 47
    rows = await services.db.fetch_all(
        "SELECT generated_by, generated_by_account_id FROM license_keys WHERE app_id = ?", seller.app_id
    )
    assert rows == [{"generated_by": "res", "generated_by_account_id": await account_id(services, "res")}] * 3
    await res.ok("add", expiry=1)
    await res.ok("add", expiry=3650)
    await res.ok("add", expiry=100000)
    assert await balance(seller) == {
        "day": 49,
        "week": 0,
        "month": 47,
        "three_month": 0,
        "six_month": 0,
        "year": 0,
        "lifetime": 3,
    }


@pytest.mark.parametrize(
    ("days", "bucket"),
    [
        (1, "day"),
        (7, "week"),
        (30, "month"),
        (90, "three_month"),
        (180, "six_month"),
        (365, "year"),
        (3650, "lifetime"),
        (5000, "lifetime"),
    ],
)
async def test_each_sold_duration_spends_its_own_bucket(seller: Seller, days: int, bucket: str) -> None:
    res = await add_reseller(seller)
    await seller.ok("setbalance", username="res", **{bucket.replace("_", ""): 1})
    await res.ok("add", expiry=days)
    assert sum((await balance(seller)).values()) == 0


@pytest.mark.parametrize("days", [2, 0.5, 29.9, 364, 3649])
async def test_reseller_add_refuses_durations_its_balance_does_not_sell(
    seller: Seller, services: Services, team: tuple[Seller, Seller], days: float
) -> None:
    res, _ = team
    await res.fails("add", 400, "duration_not_sold", expiry=days)
    assert await key_count(services, seller) == 0


async def test_reseller_cannot_set_a_keys_duration(team: tuple[Seller, Seller]) -> None:
    res, _ = team
    key = (await res.ok("add", expiry=1, level="1"))["key"]
    await res.fails("setduration", 403, "duration_paid", key=key, expiry=365)
    assert (await res.ok("info", key=key))["duration"] == 86400


async def test_reseller_add_refuses_levels_it_may_not_sell(
    seller: Seller, services: Services, team: tuple[Seller, Seller]
) -> None:
    res, other = team
    await seller.ok("addsub", name="gold", level="2")
    await res.fails("add", 403, "level_not_allowed", expiry=30, level="2")
    assert await key_count(services, seller) == 0
    await other.ok("add", expiry=30, level="2")  # no levels listed: any level
    assert (await balance(seller, "res"))["month"] == 50


async def test_reseller_add_refuses_more_keys_than_the_balance_pays_for(
    seller: Seller, services: Services
) -> None:
    res = await add_reseller(seller)
    await seller.ok("setbalance", username="res", week=2)
    await res.fails("add", 403, "insufficient_balance", expiry=7, amount=3)
    await res.fails("add", 403, "insufficient_balance", expiry=30)
    assert await key_count(services, seller) == 0
    await res.ok("add", expiry=7, amount=2)
    await res.fails("add", 403, "insufficient_balance", expiry=7)
    assert await key_count(services, seller) == 2
    assert (await balance(seller))["week"] == 0


async def test_a_failed_generation_spends_nothing(
    seller: Seller, services: Services, team: tuple[Seller, Seller]
) -> None:
    res, _ = team
    await res.ok("add", expiry=30, mask="FIXED")
    await res.fails("add", 409, "key_exists", expiry=30, mask="FIXED")
    assert (await balance(seller))["month"] == 49


@pytest.mark.parametrize("flavour", ["one reseller", "two resellers"])
async def test_concurrent_generation_never_spends_more_than_the_balance(
    seller: Seller, services: Services, flavour: str
) -> None:
    res = await add_reseller(seller)
    await seller.ok("setbalance", username="res", month=10)
    # Twelve calls of one key: whatever the order, the ten units always end up spent.
    amounts = [1] * 12 + [2] * 7 + [3] * 6
    random.Random(7).shuffle(amounts)
    callers = (
        [res]
        if flavour == "one reseller"
        else [res, acting_as(seller, (await seller.ok("addaccountkey", user="res"))["sellerkey"])]
    )
    responses = await asyncio.gather(
        *(callers[i % len(callers)].call("add", expiry=30, amount=n) for i, n in enumerate(amounts))
    )
    outcomes = {(r.status_code, r.json().get("error")) for r in responses}
    assert outcomes <= {(200, None), (403, "insufficient_balance")}
    made = sum(len(r.json()["keys"]) for r in responses if r.status_code == 200)
    assert made == 10
    assert await key_count(services, seller) == 10
    assert (await balance(seller))["month"] == 0
    assert (await res.ok("fetchallkeys"))["count"] == 10


async def test_concurrent_top_ups_and_spending_keep_the_balance_exact(
    seller: Seller, services: Services
) -> None:
    res = await add_reseller(seller)
    await seller.ok("setbalance", username="res", day=5)
    calls = [res.call("add", expiry=1) for _ in range(20)] + [
        seller.call("setbalance", username="res", day=1) for _ in range(5)
    ]
    responses = await asyncio.gather(*calls)
    made = sum(1 for r in responses[:20] if r.status_code == 200)
    assert all(r.status_code == 200 for r in responses[20:])
    assert made == await key_count(services, seller)
    assert (await balance(seller))["day"] == 10 - made >= 0


async def test_deleting_a_reseller_while_it_spends_leaves_no_faults(
    seller: Seller, services: Services
) -> None:
    res = await add_reseller(seller)
    await seller.ok("setbalance", username="res", month=1000)
    await res.ok("adduser", user="first", sub="default", expiry=30)
    calls = []
    for i in range(6):
        calls += [
            res.call("add", expiry=30, amount=2),
            res.call("adduser", user=f"u{i}", sub="default", expiry=30),
            res.call("extend", user="all", sub="default", expiry=30),
            res.call("addtime", time=30),
        ]
    calls.insert(13, seller.call("deleteAccount", user="res"))
    responses = await asyncio.gather(*calls)
    outcomes = {(r.status_code, r.json().get("error")) for r in responses}
    # Calls after the deletion find no key; none fails with a deadlock or any other fault.
    assert outcomes <= {(200, None), (401, "unknown_seller_key")}, outcomes
    assert await services.db.fetch_value("SELECT COUNT(*) FROM team_members") == 0


# --- License: everything else sees only the reseller's own keys -------------------------------------


@pytest.fixture
async def keys(seller: Seller, team: tuple[Seller, Seller]) -> dict[str, str]:
    """One unused key each from the owner, `res` and `other`."""
    res, other = team
    return {
        "owner": (await seller.ok("add", expiry=30))["key"],
        "res": (await res.ok("add", expiry=30))["key"],
        "other": (await other.ok("add", expiry=30))["key"],
    }


KEY_OPERATIONS: list[tuple[str, dict[str, Any]]] = [
    ("verify", {}),
    ("info", {}),
    ("del", {}),
    ("del", {"userToo": 1}),
    ("setnote", {"note": "mine now"}),
    ("ban", {"reason": "no"}),
    ("unban", {}),
    ("changekeysub", {"sub": "default"}),
    ("addtime", {"time": 30}),
]


@pytest.mark.parametrize(("operation", "params"), KEY_OPERATIONS)
async def test_another_creators_key_is_not_found_for_a_reseller(
    seller: Seller,
    services: Services,
    team: tuple[Seller, Seller],
    keys: dict[str, str],
    operation: str,
    params: dict[str, Any],
) -> None:
    res, _ = team
    await seller.ok("ban", key=keys["owner"], reason="owner's ban")
    await seller.ok("ban", key=keys["other"], reason="other's ban")
    before = (await seller.ok("fetchallkeys"))["keys"]
    for owner in ("owner", "other"):
        await res.fails(operation, 404, "key_not_found", key=keys[owner], **params)
    assert (await seller.ok("fetchallkeys"))["keys"] == before
    assert (await balance(seller))["month"] == 49


async def test_a_reseller_acts_on_its_own_key(
    seller: Seller, services: Services, team: tuple[Seller, Seller], keys: dict[str, str]
) -> None:
    res, _ = team
    mine = keys["res"]
    await res.ok("verify", key=mine)
    await res.ok("setnote", key=mine, note="sold")
    assert (await res.ok("info", key=mine))["note"] == "sold"
    await res.ok("changekeysub", key=mine, sub="default")
    await res.ok("ban", key=mine, reason="chargeback")
    await res.ok("unban", key=mine)
    assert (await res.ok("addtime", key=mine, time=30))["updated"] == 1
    assert (await res.ok("info", key=mine))["duration"] == 60 * DAY
    await res.ok("del", key=mine)
    assert (await res.ok("fetchallkeys"))["count"] == 0


async def test_a_reseller_may_not_move_a_key_to_a_level_it_does_not_sell(
    seller: Seller, team: tuple[Seller, Seller], keys: dict[str, str]
) -> None:
    res, _ = team
    await seller.ok("addsub", name="gold", level="2")
    await res.fails("changekeysub", 403, "level_not_allowed", key=keys["res"], sub="gold")
    await res.fails("changekeysub", 403, "level_not_allowed", key=keys["res"], level="2")
    assert (await res.ok("info", key=keys["res"]))["level"] == "1"


async def test_addtime_charges_the_reseller_per_key_lengthened(
    seller: Seller, services: Services, team: tuple[Seller, Seller], keys: dict[str, str]
) -> None:
    res, _ = team
    await res.ok("add", expiry=1, amount=2)
    # Without a key: every unused key of its own (three), one day unit each.
    assert (await res.ok("addtime", time=1))["updated"] == 3
    assert (await balance(seller))["day"] == 50 - 2 - 3
    durations = {k["key"]: k["expires"] for k in (await seller.ok("fetchallkeys"))["keys"]}
    assert durations[keys["owner"]] == durations[keys["other"]] == 30 * DAY
    assert durations[keys["res"]] == 31 * DAY
    await res.fails("addtime", 400, "duration_not_sold", time=2)
    await res.fails("addtime", 400, "duration_not_sold", key=keys["res"], time=2)


async def test_addtime_refuses_all_when_the_balance_covers_only_some(
    seller: Seller, services: Services
) -> None:
    res = await add_reseller(seller)
    await seller.ok("setbalance", username="res", week=3)
    await res.ok("add", expiry=7, amount=2)
    await res.fails("addtime", 403, "insufficient_balance", time=7)
    assert [k["expires"] for k in (await res.ok("fetchallkeys"))["keys"]] == [7 * DAY, 7 * DAY]
    assert (await balance(seller))["week"] == 1
    key = (await res.ok("fetchallkeys"))["keys"][0]["key"]
    await res.ok("addtime", key=key, time=7)
    await res.fails("addtime", 403, "insufficient_balance", key=key, time=7)
    assert (await res.ok("info", key=key))["duration"] == 14 * DAY


async def test_addtime_on_a_used_key_extends_its_grants_and_charges_once(
    seller: Seller, services: Services, team: tuple[Seller, Seller], keys: dict[str, str]
) -> None:
    res, _ = team
    await redeem(services, seller, keys["res"], "buyer")
    assert (await res.ok("addtime", key=keys["res"], time=30))["updated"] == 1
    assert (await balance(seller))["month"] == 48


async def test_a_reseller_lists_and_exports_only_its_own_keys(
    seller: Seller, services: Services, team: tuple[Seller, Seller], keys: dict[str, str]
) -> None:
    res, _ = team
    used = (await res.ok("add", expiry=30))["key"]
    await redeem(services, seller, used, "buyer")
    await redeem(services, seller, keys["other"], "their-buyer")
    body = await res.ok("fetchallkeys")
    assert (body["count"], sorted(k["key"] for k in body["keys"])) == (2, sorted([keys["res"], used]))
    assert [k["key"] for k in (await res.ok("fetchallkeys", status="used"))["keys"]] == [used]
    assert [k["key"] for k in (await res.ok("exportunused"))["keys"]] == [keys["res"]]
    assert [k["key"] for k in (await res.ok("exportused"))["keys"]] == [used]
    assert (await res.ok("fetchallkeys", page=1, limit=1))["count"] == 2
    fetched = await res.ok("fetchusedkeys")
    assert (fetched["count"], [k["key"] for k in fetched["keys"]]) == (1, [used])
    text = await res.call("fetchallkeys", format="text")
    assert sorted(text.text.split("\n")) == sorted([keys["res"], used])
    assert (await seller.ok("fetchallkeys"))["count"] == 4  # the owner still sees everything


async def test_delmultiple_by_a_reseller_is_all_or_nothing_over_its_own_keys(
    seller: Seller, services: Services, team: tuple[Seller, Seller], keys: dict[str, str]
) -> None:
    res, _ = team
    second = (await res.ok("add", expiry=30))["key"]
    await res.fails("delmultiple", 404, "key_not_found", key=f"{keys['res']},{keys['other']}")
    assert await key_count(services, seller) == 4
    assert (await res.ok("delmultiple", key=f"{keys['res']} {second}"))["deleted"] == 2
    assert await key_count(services, seller) == 2


@pytest.mark.parametrize(
    ("operation", "params"),
    [("delunused", {}), ("delused", {}), ("delalllicenses", {}), ("delsubkeys", {"sub": "default"})],
)
async def test_bulk_deletes_by_a_reseller_delete_only_its_own_keys(
    seller: Seller,
    services: Services,
    team: tuple[Seller, Seller],
    keys: dict[str, str],
    operation: str,
    params: dict[str, Any],
) -> None:
    res, other = team
    for caller, name in ((seller, "owner-buyer"), (res, "res-buyer"), (other, "other-buyer")):
        await redeem(services, seller, (await caller.ok("add", expiry=30))["key"], name)
    body = await res.ok(operation, **params)
    expected = 2 if operation in ("delalllicenses", "delsubkeys") else 1
    assert body["deleted"] == expected
    assert await key_count(services, seller) == 6 - expected
    assert (await other.ok("fetchallkeys"))["count"] == 2
    assert (await seller.ok("fetchallkeys"))["count"] == 6 - expected


async def test_user_too_acts_only_on_the_resellers_own_users(
    seller: Seller, services: Services, team: tuple[Seller, Seller], keys: dict[str, str]
) -> None:
    res, _ = team
    # A key of its own redeemed by somebody else's user: the key goes, the user stays.
    await redeem(services, seller, keys["res"], "not-theirs")
    await res.ok("ban", key=keys["res"], reason="fraud", userToo=1)
    banned = await services.db.fetch_value("SELECT banned_reason FROM users WHERE username = 'not-theirs'")
    assert banned is None
    await res.ok("del", key=keys["res"], userToo=1)
    assert "not-theirs" in await usernames(services, seller)
    # Its own user goes with its key.
    await res.ok("adduser", user="own", sub="default", expiry=30)
    key = (await res.ok("add", expiry=30))["key"]
    await res.ok("assignkey", user="own", key=key)
    await res.ok("ban", key=key, reason="fraud", userToo=1)
    assert await services.db.fetch_value("SELECT banned_reason FROM users WHERE username = 'own'") == "fraud"
    await res.ok("unban", key=key)
    assert await services.db.fetch_value("SELECT banned_reason FROM users WHERE username = 'own'") is None
    await res.ok("del", key=key, userToo=1)
    assert "own" not in await usernames(services, seller)


# --- Users ----------------------------------------------------------------------------------------


@pytest.fixture
async def people(seller: Seller, team: tuple[Seller, Seller]) -> None:
    """Users `mine` (res's), `theirs` (other's) and `owners` (the owner's), each with 30 days."""
    res, other = team
    await res.ok("adduser", user="mine", sub="default", expiry=30)
    await other.ok("adduser", user="theirs", sub="default", expiry=30)
    await seller.ok("adduser", user="owners", sub="default", expiry=30)


async def test_reseller_adduser_owns_the_user_and_spends_balance(
    seller: Seller, services: Services, team: tuple[Seller, Seller], people: None
) -> None:
    row = await services.db.fetch_one(
        "SELECT created_by, owner_account_id FROM users WHERE username = 'mine'"
    )
    assert row == {"created_by": "res", "owner_account_id": await account_id(services, "res")}
    owners = await services.db.fetch_one(
        "SELECT created_by, owner_account_id FROM users WHERE username = 'owners'"
    )
    assert owners == {"created_by": "SellerAPI", "owner_account_id": None}
    assert (await balance(seller))["month"] == 49
    assert (await seller.ok("userdata", user="mine"))["created_by"] == "res"


async def test_reseller_adduser_refusals_create_nothing(
    seller: Seller, services: Services, team: tuple[Seller, Seller]
) -> None:
    res, _ = team
    await seller.ok("addsub", name="gold", level="2")
    await res.fails("adduser", 403, "level_not_allowed", user="u", sub="gold", expiry=30)
    await res.fails("adduser", 400, "duration_not_sold", user="u", sub="default", expiry=3)
    await res.fails("adduser", 403, "insufficient_balance", user="u", sub="default", expiry=365)
    assert await usernames(services, seller) == []
    assert await balance(seller) == {
        "day": 50,
        "week": 0,
        "month": 50,
        "three_month": 0,
        "six_month": 0,
        "year": 0,
        "lifetime": 5,
    }


USER_OPERATIONS: list[tuple[str, dict[str, Any]]] = [
    ("addhwiduser", {"user": "{u}", "hwid": "HW"}),
    ("deluser", {"user": "{u}"}),
    ("verifyuser", {"user": "{u}"}),
    ("userdata", {"user": "{u}"}),
    ("banuser", {"user": "{u}"}),
    ("unbanuser", {"user": "{u}"}),
    ("editusername", {"currentUsername": "{u}", "newUsername": "renamed"}),
    ("resetpw", {"user": "{u}", "passwd": "new"}),
    ("editemail", {"user": "{u}", "email": "x@example.com"}),
    ("extend", {"user": "{u}", "sub": "default", "expiry": 30}),
    ("subtract", {"user": "{u}", "sub": "default", "seconds": 60}),
    ("pauseuser", {"username": "{u}"}),
    ("unpauseuser", {"username": "{u}"}),
    ("resetuser", {"user": "{u}"}),
    ("setcooldown", {"user": "{u}", "cooldown": 10}),
    ("delsub", {"user": "{u}", "sub": "default"}),
    ("usersubs", {"user": "{u}"}),
]


@pytest.mark.parametrize(("operation", "params"), USER_OPERATIONS)
async def test_another_creators_user_is_not_found_for_a_reseller(
    seller: Seller,
    services: Services,
    team: tuple[Seller, Seller],
    people: None,
    operation: str,
    params: dict[str, Any],
) -> None:
    res, _ = team
    await seller.ok("banuser", user="theirs")
    await seller.ok("banuser", user="owners")
    await seller.ok("pauseuser", username="theirs")
    snapshot = await seller.ok("usersubs")
    for name in ("theirs", "owners"):
        filled = {k: v.format(u=name) if isinstance(v, str) else v for k, v in params.items()}
        await res.fails(operation, 404, "user_not_found", **filled)
    assert await seller.ok("usersubs") == snapshot
    assert await usernames(services, seller) == ["mine", "theirs", "owners"]
    assert (await balance(seller))["month"] == 49


async def test_userexists_says_no_for_another_creators_user(
    team: tuple[Seller, Seller], people: None
) -> None:
    res, _ = team
    assert (await res.ok("userexists", user="mine"))["exists"] is True
    assert (await res.ok("userexists", user="theirs"))["exists"] is False


async def test_a_reseller_manages_its_own_user(
    seller: Seller, services: Services, team: tuple[Seller, Seller], people: None
) -> None:
    res, _ = team
    await res.ok("addhwiduser", user="mine", hwid="HW")
    await res.ok("verifyuser", user="mine")
    assert (await res.ok("userdata", user="mine"))["hwids"] == ["HW"]
    await res.ok("banuser", user="mine")
    await res.ok("unbanuser", user="mine")
    await res.ok("resetpw", user="mine", passwd="pw")
    await res.ok("editemail", user="mine", email="m@example.com")
    await res.ok("pauseuser", username="mine")
    await res.ok("unpauseuser", username="mine")
    await res.ok("resetuser", user="mine")
    await res.ok("setcooldown", user="mine", cooldown=5)
    await res.ok("subtract", user="mine", sub="default", seconds=60)
    await res.ok("editusername", currentUsername="mine", newUsername="mine2")
    assert (await res.ok("usersubs", user="mine2"))["count"] == 1
    await res.ok("delsub", user="mine2", sub="default")
    await res.ok("deluser", user="mine2")
    assert await usernames(services, seller) == ["theirs", "owners"]


async def test_a_reseller_cannot_take_a_name_another_user_has(
    team: tuple[Seller, Seller], people: None
) -> None:
    res, _ = team
    # Usernames are unique per application, so the clash is reported (the other user is untouched).
    await res.fails("editusername", 409, "user_exists", currentUsername="mine", newUsername="theirs")
    await res.fails("adduser", 409, "user_exists", user="owners", sub="default", expiry=30)


async def test_extend_charges_the_reseller_per_user_served(
    seller: Seller, services: Services, team: tuple[Seller, Seller], people: None
) -> None:
    res, _ = team
    await res.ok("adduser", user="mine2", sub="default", expiry=30)
    assert (await balance(seller))["month"] == 48
    assert (await res.ok("extend", user="all", sub="default", expiry=30))["updated"] == 2
    assert (await balance(seller))["month"] == 46
    assert (await res.ok("extend", user="mine", sub="default", expiry=1))["updated"] == 1
    assert (await balance(seller))["day"] == 49
    await res.fails("extend", 400, "duration_not_sold", user="mine", sub="default", expiry=2)
    await seller.ok("addsub", name="gold", level="2")
    await res.fails("extend", 403, "level_not_allowed", user="mine", sub="gold", expiry=30)
    # Other creators' users kept their 30 days.
    subs = {s["username"]: int(s["expiry"]) for s in (await seller.ok("usersubs"))["subscriptions"]}
    assert subs["theirs"] == subs["owners"] == services.clock.now() + 30 * DAY
    assert subs["mine"] == services.clock.now() + 61 * DAY


async def test_extend_refuses_all_when_the_balance_covers_only_some_users(
    seller: Seller, services: Services
) -> None:
    res = await add_reseller(seller)
    await seller.ok("setbalance", username="res", year=3)
    await res.ok("adduser", user="a", sub="default", expiry=365)
    await res.ok("adduser", user="b", sub="default", expiry=365)
    await res.fails("extend", 403, "insufficient_balance", user="all", sub="default", expiry=365)
    expiries = {s["expiry"] for s in (await res.ok("usersubs"))["subscriptions"]}
    assert expiries == {str(services.clock.now() + 365 * DAY)}
    assert (await balance(seller))["year"] == 1


async def test_bulk_user_operations_of_a_reseller_act_on_its_own_users(
    seller: Seller, services: Services, team: tuple[Seller, Seller], people: None
) -> None:
    res, _ = team
    for name in ("mine", "theirs", "owners"):
        await seller.ok("addhwiduser", user=name, hwid=f"HW-{name}")
    assert (await res.ok("resetalluser"))["updated"] == 1
    assert (await seller.ok("userdata", user="theirs"))["hwids"] == ["HW-theirs"]
    assert (await res.ok("subtract", user="all", sub="default", seconds=DAY))["updated"] == 1
    listed = await res.ok("fetchallusers")
    assert (listed["count"], [u["username"] for u in listed["users"]]) == (1, ["mine"])
    names = await res.ok("fetchallusernames")
    assert (names["count"], names["usernames"]) == (1, ["mine"])
    subs = await res.ok("usersubs")
    assert (subs["count"], [s["username"] for s in subs["subscriptions"]]) == (1, ["mine"])
    assert (await seller.ok("usersubs"))["count"] == 3


async def test_delexpusers_and_delallusers_of_a_reseller_delete_only_its_own_users(
    seller: Seller, services: Services, clock: MovableClock, team: tuple[Seller, Seller], people: None
) -> None:
    res, _ = team
    clock.advance(31 * DAY)  # everyone's time has run out
    assert (await res.ok("delexpusers"))["deleted"] == 1
    assert await usernames(services, seller) == ["theirs", "owners"]
    await res.ok("adduser", user="fresh", sub="default", expiry=30)
    assert (await res.ok("delallusers"))["deleted"] == 1
    assert await usernames(services, seller) == ["theirs", "owners"]


async def test_owner_and_manager_see_every_user_and_key(
    seller: Seller, team: tuple[Seller, Seller], people: None, keys: dict[str, str]
) -> None:
    body = await seller.ok("addAccount", role="Manager", user="boss", **{"pass": "pw"})
    manager = acting_as(seller, body["sellerkey"])
    for caller in (seller, manager):
        assert (await caller.ok("fetchallusers"))["count"] == 3
        assert (await caller.ok("fetchallkeys"))["count"] == 3
        await caller.ok("userdata", user="theirs")
        await caller.ok("info", key=keys["res"])
