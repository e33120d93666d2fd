"""Seller API — Reseller & Manager group over HTTP, and what the caller identity of a team
member's seller key may do."""

from __future__ import annotations

import re
from typing import Any

import pytest

from licensegate.domain import permissions
from licensegate.services import Services
from tests.helpers import Seller, create_seller

pytestmark = pytest.mark.anyio

EMPTY_BALANCE = {"day": 0, "week": 0, "month": 0, "three_month": 0, "six_month": 0, "year": 0, "lifetime": 0}
MANAGER_AREAS = [a for a in permissions.AREAS if a not in ("team", "sellerkeys")]


# --- helpers -----------------------------------------------------------------------------------


def acting_as(seller: Seller, key: str) -> Seller:
    """The same application, called with another seller key."""
    return Seller(http=seller.http, key=key, ownerid=seller.ownerid, app_id=seller.app_id, name=seller.name)


async def add_account(seller: Seller, role: str, user: str, **params: Any) -> Seller:
    params.setdefault("pass", "secret pw")
    body = await seller.ok("addAccount", role=role, user=user, **params)
    return acting_as(seller, body["sellerkey"])


async def account(services: Services, username: str) -> dict[str, Any]:
    row = await services.db.fetch_one(
        "SELECT a.id, a.username, a.email, a.password_hash, a.role, a.ownerid, a.parent_id, a.disabled, "
        "t.app_id, t.permissions, t.key_levels FROM accounts a "
        "LEFT JOIN team_members t ON t.account_id = a.id WHERE a.username = ?",
        username,
    )
    assert row is not None
    return row


async def owner_account_id(services: Services, seller: Seller) -> int:
    found: int = await services.db.fetch_value("SELECT account_id FROM apps WHERE id = ?", seller.app_id)
    return found


# --- addAccount ----------------------------------------------------------------------------------


async def test_addaccount_creates_a_reseller_with_a_working_key_and_an_empty_balance(
    seller: Seller, services: Services
) -> None:
    body = await seller.ok(
        "addAccount",
        role="Reseller",
        user="res",
        email="res@example.com",
        keylevels="1,2",
        **{"pass": " pw "},
    )
    assert set(body) == {"success", "message", "username", "role", "sellerkey"}
    assert body["message"] == "Successfully created account!"
    assert (body["username"], body["role"]) == ("res", "reseller")
    assert re.fullmatch(r"[0-9a-f]{32}", body["sellerkey"])

    row = await account(services, "res")
    assert (row["role"], row["email"], row["ownerid"], row["disabled"]) == (
        "reseller",
        "res@example.com",
        None,
        0,
    )
    assert row["parent_id"] == await owner_account_id(services, seller)
    assert (row["app_id"], row["key_levels"]) == (seller.app_id, "1,2")
    assert row["password_hash"].startswith("$argon2id$")
    assert services.passwords._hasher.verify(row["password_hash"], " pw ")  # not stripped

    reseller = acting_as(seller, body["sellerkey"])
    assert (await reseller.ok("setseller"))["permissions"] == ["licenses", "users"]
    keys = await services.db.fetch_all(
        "SELECT key_hash, account_id FROM seller_keys WHERE account_id IS NOT NULL"
    )
    assert [k["account_id"] for k in keys] == [row["id"]]
    assert body["sellerkey"] not in keys[0]["key_hash"]
    info = await seller.ok("getbalance", username="res")
    assert info["balance"] == EMPTY_BALANCE


async def test_addaccount_creates_a_manager_with_every_area_but_team_and_sellerkeys_by_default(
    seller: Seller, services: Services
) -> None:
    manager = await add_account(seller, "MANAGER", "boss")  # the role is case-insensitive
    assert (await account(services, "boss"))["role"] == "manager"
    assert (await manager.ok("setseller"))["permissions"] == MANAGER_AREAS
    managers = (await seller.ok("fetchmanagers"))["managers"]
    assert managers == [{"username": "boss", "permissions": MANAGER_AREAS}]
    await add_account(seller, "manager", "boss2", perms="all")
    assert (await seller.ok("fetchmanagers"))["managers"][1]["permissions"] == MANAGER_AREAS


@pytest.mark.parametrize(
    ("perms", "granted"),
    [
        ("licenses,users", ["licenses", "users"]),
        (" Logs , files ", ["files", "logs"]),
        ("3", ["licenses", "users"]),
        ("2047", MANAGER_AREAS[:11]),  # KeyAuth's default bitmask: every page but Tokens
        ("4095", MANAGER_AREAS),
    ],
)
async def test_addaccount_takes_manager_permissions_as_names_or_bitmask(
    seller: Seller, perms: str, granted: list[str]
) -> None:
    manager = await add_account(seller, "Manager", "m", perms=perms)
    assert (await manager.ok("setseller"))["permissions"] == granted


@pytest.mark.parametrize(
    ("keylevels", "stored"),
    [("1, 2 ,3", ["1", "2", "3"]), ("1|2|", ["1", "2"]), ("2,2,1", ["2", "1"]), ("N/A", []), ("any", [])],
)
async def test_addaccount_reads_key_levels(seller: Seller, keylevels: str, stored: list[str]) -> None:
    await add_account(seller, "Reseller", "r", keylevels=keylevels)
    assert (await seller.ok("getbalance", username="r"))["key_levels"] == stored


async def test_addaccount_ignores_perms_for_resellers_and_keylevels_for_managers(
    seller: Seller, services: Services
) -> None:
    reseller = await add_account(seller, "Reseller", "r", perms="logs")
    assert (await reseller.ok("setseller"))["permissions"] == ["licenses", "users"]
    await add_account(seller, "Manager", "m", keylevels="5")
    assert (await account(services, "m"))["key_levels"] == ""


async def test_addaccount_refuses_a_taken_username_across_the_whole_service(
    seller: Seller, services: Services
) -> None:
    await add_account(seller, "Reseller", "taken")
    await seller.fails("addAccount", 409, "account_exists", role="Manager", user="taken", **{"pass": "x"})
    await seller.fails("addAccount", 409, "account_exists", role="Reseller", user="owner", **{"pass": "x"})
    other = await create_seller(services, seller.http, owner="someone", name="other")
    await other.fails("addAccount", 409, "account_exists", role="Reseller", user="taken", **{"pass": "x"})
    count = await services.db.fetch_value("SELECT COUNT(*) FROM accounts WHERE username = 'taken'")
    assert count == 1


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"user": "u", "pass": "p"}, "missing_parameter"),
        ({"role": "Reseller", "pass": "p"}, "missing_parameter"),
        ({"role": "Reseller", "user": "u"}, "missing_parameter"),
        ({"role": "Seller", "user": "u", "pass": "p"}, "invalid_role"),
        ({"role": "admin", "user": "u", "pass": "p"}, "invalid_role"),
        ({"role": "Reseller", "user": "u" * 65, "pass": "p"}, "parameter_too_long"),
        ({"role": "Reseller", "user": "a\x01b", "pass": "p"}, "invalid_name"),
        ({"role": "Reseller", "user": "u", "pass": "p", "email": "nope"}, "invalid_email"),
        ({"role": "Reseller", "user": "u", "pass": "p", "keylevels": "1," + "9" * 13}, "invalid_levels"),
        ({"role": "Manager", "user": "u", "pass": "p", "perms": "team"}, "invalid_permissions"),
        (
            {"role": "Manager", "user": "u", "pass": "p", "perms": "licenses,sellerkeys"},
            "invalid_permissions",
        ),
        ({"role": "Manager", "user": "u", "pass": "p", "perms": "8192"}, "invalid_permissions"),
        ({"role": "Manager", "user": "u", "pass": "p", "perms": "0"}, "invalid_permissions"),
        ({"role": "Manager", "user": "u", "pass": "p", "perms": "licenses,nope"}, "invalid_permissions"),
    ],
)
async def test_addaccount_refuses_bad_parameters(
    seller: Seller, services: Services, params: dict[str, str], error: str
) -> None:
    await seller.fails("addAccount", 400, error, **params)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM team_members") == 0


# --- deleteAccount -------------------------------------------------------------------------------


async def test_deleteaccount_removes_the_account_and_its_keys_but_not_what_it_created(
    seller: Seller, services: Services
) -> None:
    await seller.ok("addsub", name="month", level="1")
    reseller = await add_account(seller, "Reseller", "res")
    await seller.ok("setbalance", username="res", month=2)
    key = (await reseller.ok("add", expiry=30))["key"]
    await reseller.ok("adduser", user="customer", sub="default", expiry=30)
    extra = (await seller.ok("addaccountkey", user="res"))["sellerkey"]

    body = await seller.ok("deleteAccount", user="res")
    assert body["message"] == "Successfully deleted account!"
    await reseller.fails("setseller", 401, "unknown_seller_key")
    await seller.fails("setseller", 401, "unknown_seller_key", sellerkey=extra)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts WHERE username = 'res'") == 0
    assert await services.db.fetch_value("SELECT COUNT(*) FROM team_members") == 0
    made = await services.db.fetch_one(
        "SELECT generated_by, generated_by_account_id FROM license_keys WHERE key = ?", key
    )
    assert made == {"generated_by": "res", "generated_by_account_id": None}
    user = await services.db.fetch_one(
        "SELECT created_by, owner_account_id FROM users WHERE username = 'customer'"
    )
    assert user == {"created_by": "res", "owner_account_id": None}
    assert (await seller.ok("fetchteam"))["resellers"] == []


async def test_deleteaccount_deletes_managers_too(seller: Seller) -> None:
    manager = await add_account(seller, "Manager", "boss")
    await seller.ok("deleteAccount", username="boss")  # `username` is accepted for `user`
    await manager.fails("setseller", 401, "unknown_seller_key")
    assert (await seller.ok("fetchmanagers"))["managers"] == []


async def test_deleteaccount_refuses_unknown_and_other_applications_accounts(
    seller: Seller, services: Services
) -> None:
    other = await create_seller(services, seller.http, owner="someone", name="other")
    theirs = await add_account(other, "Reseller", "theirs")
    await seller.fails("deleteAccount", 404, "account_not_found", user="theirs")
    await seller.fails("deleteAccount", 404, "account_not_found", user="ghost")
    await seller.fails("deleteAccount", 404, "account_not_found", user="owner")  # an owner is no team member
    await seller.fails("deleteAccount", 400, "missing_parameter")
    assert (await theirs.ok("setseller"))["permissions"] == ["licenses", "users"]


# --- fetchteam, fetchresellers, fetchmanagers ------------------------------------------------------


async def test_fetchteam_lists_resellers_and_managers_of_this_application_only(
    seller: Seller, services: Services
) -> None:
    assert (await seller.ok("fetchteam"))["resellers"] == []
    await add_account(seller, "Reseller", "r1", keylevels="1,2")
    await add_account(seller, "Manager", "m1", perms="licenses,logs")
    await add_account(seller, "Reseller", "r2")
    await seller.ok("setbalance", username="r2", day=3, lifetime=1)
    other = await create_seller(services, seller.http, owner="someone", name="other")
    await add_account(other, "Reseller", "elsewhere")

    body = await seller.ok("fetchteam")
    assert set(body) == {"success", "message", "resellers", "managers"}
    assert body["resellers"] == [
        {"username": "r1", "balance": EMPTY_BALANCE, "key_levels": ["1", "2"]},
        {"username": "r2", "balance": {**EMPTY_BALANCE, "day": 3, "lifetime": 1}, "key_levels": []},
    ]
    assert body["managers"] == [{"username": "m1", "permissions": ["licenses", "logs"]}]
    resellers = await seller.ok("fetchresellers")
    assert set(resellers) == {"success", "message", "resellers"}
    assert resellers["resellers"] == body["resellers"]
    managers = await seller.ok("fetchmanagers")
    assert set(managers) == {"success", "message", "managers"}
    assert managers["managers"] == body["managers"]


# --- getbalance ------------------------------------------------------------------------------------


async def test_getbalance_describes_one_reseller(seller: Seller) -> None:
    await add_account(seller, "Reseller", "res", email="r@example.com", keylevels="3")
    await seller.ok("setbalance", username="res", week=4)
    body = await seller.ok("getbalance", username="res")
    assert body == {
        "success": True,
        "message": "Successfully retrieved reseller",
        "username": "res",
        "email": "r@example.com",
        "balance": {**EMPTY_BALANCE, "week": 4},
        "key_levels": ["3"],
        "disabled": 0,
    }
    assert (await seller.ok("getbalance", user="res"))["username"] == "res"


async def test_getbalance_refuses_managers_and_unknown_names(seller: Seller) -> None:
    await add_account(seller, "Manager", "boss")
    await seller.fails("getbalance", 404, "reseller_not_found", username="boss")
    await seller.fails("getbalance", 404, "reseller_not_found", username="ghost")
    await seller.fails("getbalance", 400, "missing_parameter")


# --- setbalance ------------------------------------------------------------------------------------


async def test_setbalance_adds_to_each_bucket_given(seller: Seller) -> None:
    await add_account(seller, "Reseller", "res")
    body = await seller.ok(
        "setbalance", username="res", day=1, week=2, month=3, threemonth=4, sixmonth=5, year=6, lifetime=7
    )
    full = {"day": 1, "week": 2, "month": 3, "three_month": 4, "six_month": 5, "year": 6, "lifetime": 7}
    assert body == {
        "success": True,
        "message": "Balance Successfully Added",
        "username": "res",
        "balance": full,
    }
    body = await seller.ok("setbalance", username="res", month=10, day=-1)
    assert body["balance"] == {**full, "month": 13, "day": 0}
    # KeyAuth's older names of the operation.
    assert (await seller.ok("balance", username="res", year=1))["balance"]["year"] == 7
    assert (await seller.ok("addbalance", user="res", year=1))["balance"]["year"] == 8


async def test_setbalance_below_zero_in_any_bucket_changes_nothing(seller: Seller) -> None:
    await add_account(seller, "Reseller", "res")
    await seller.ok("setbalance", username="res", day=5, week=1)
    await seller.fails("setbalance", 409, "insufficient_balance", username="res", day=10, week=-2)
    assert (await seller.ok("getbalance", username="res"))["balance"] == {
        **EMPTY_BALANCE,
        "day": 5,
        "week": 1,
    }


async def test_setbalance_refuses_a_bucket_above_the_ceiling(seller: Seller) -> None:
    await add_account(seller, "Reseller", "res")
    await seller.ok("setbalance", username="res", lifetime=1_000_000_000)
    await seller.fails("setbalance", 409, "balance_too_large", username="res", lifetime=1, day=1)
    assert (await seller.ok("getbalance", username="res"))["balance"]["day"] == 0


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"username": "res"}, "missing_parameter"),
        ({"day": 1}, "missing_parameter"),
        ({"username": "res", "day": "one"}, "invalid_number"),
        ({"username": "res", "day": "1.5"}, "invalid_number"),
        ({"username": "res", "month": 1_000_000_001}, "number_out_of_range"),
        ({"username": "res", "month": -1_000_000_001}, "number_out_of_range"),
    ],
)
async def test_setbalance_refuses_bad_parameters(seller: Seller, params: dict[str, Any], error: str) -> None:
    await add_account(seller, "Reseller", "res")
    await seller.fails("setbalance", 400, error, **params)


async def test_setbalance_refuses_managers_and_unknown_names(seller: Seller) -> None:
    await add_account(seller, "Manager", "boss")
    await seller.fails("setbalance", 404, "reseller_not_found", username="boss", day=1)
    await seller.fails("setbalance", 404, "reseller_not_found", username="ghost", day=1)


# --- editreseller and editmanager -------------------------------------------------------------------


async def test_editreseller_changes_levels_email_and_password(seller: Seller, services: Services) -> None:
    await add_account(seller, "Reseller", "res", keylevels="1")
    old_hash = (await account(services, "res"))["password_hash"]
    body = await seller.ok(
        "editreseller", username="res", keylevels="2|3", email="new@example.com", **{"pass": "n"}
    )
    assert body["message"] == "Successfully edited reseller!"
    row = await account(services, "res")
    assert (row["key_levels"], row["email"]) == ("2,3", "new@example.com")
    assert row["password_hash"] != old_hash
    assert services.passwords._hasher.verify(row["password_hash"], "n")
    await seller.ok("editreseller", username="res", keylevels="N/A")
    assert (await seller.ok("getbalance", username="res"))["key_levels"] == []


async def test_disabling_an_account_stops_its_keys_until_enabled_again(seller: Seller) -> None:
    reseller = await add_account(seller, "Reseller", "res")
    manager = await add_account(seller, "Manager", "boss")
    await seller.ok("editreseller", username="res", disabled=1)
    await seller.ok("editmanager", username="boss", disabled="true")
    assert (await seller.ok("getbalance", username="res"))["disabled"] == 1
    await reseller.fails("fetchallkeys", 403, "account_disabled")
    await manager.fails("setseller", 403, "account_disabled")
    await seller.ok("editreseller", username="res", disabled=0)
    await reseller.ok("fetchallkeys")


@pytest.mark.parametrize(
    ("params", "status", "error"),
    [
        ({"username": "res"}, 400, "missing_parameter"),
        ({"keylevels": "1"}, 400, "missing_parameter"),
        ({"username": "res", "email": "bad"}, 400, "invalid_email"),
        ({"username": "res", "keylevels": "x" * 13}, 400, "invalid_levels"),
        ({"username": "res", "disabled": "maybe"}, 400, "invalid_boolean"),
        ({"username": "boss", "keylevels": "1"}, 404, "reseller_not_found"),
        ({"username": "ghost", "keylevels": "1"}, 404, "reseller_not_found"),
    ],
)
async def test_editreseller_refusals(seller: Seller, params: dict[str, Any], status: int, error: str) -> None:
    await add_account(seller, "Reseller", "res")
    await add_account(seller, "Manager", "boss")
    await seller.fails("editreseller", status, error, **params)


async def test_editmanager_changes_permissions_at_once(seller: Seller, services: Services) -> None:
    manager = await add_account(seller, "Manager", "boss", perms="licenses")
    await manager.ok("fetchallkeys")
    await manager.fails("fetchallsubs", 403, "permission_denied")
    body = await seller.ok("editmanager", username="boss", perms="subscriptions", email="b@example.com")
    assert body["message"] == "Successfully edited manager!"
    await manager.ok("fetchallsubs")
    await manager.fails("fetchallkeys", 403, "permission_denied")
    assert (await account(services, "boss"))["email"] == "b@example.com"
    await seller.ok("editmanager", username="boss", **{"pass": "other"})
    assert services.passwords._hasher.verify((await account(services, "boss"))["password_hash"], "other")


@pytest.mark.parametrize(
    ("params", "status", "error"),
    [
        ({"username": "boss"}, 400, "missing_parameter"),
        ({"username": "boss", "perms": "team"}, 400, "invalid_permissions"),
        ({"username": "boss", "perms": "sellerkeys"}, 400, "invalid_permissions"),
        ({"username": "boss", "perms": "nope"}, 400, "invalid_permissions"),
        ({"username": "boss", "email": "bad"}, 400, "invalid_email"),
        ({"username": "res", "perms": "logs"}, 404, "manager_not_found"),
        ({"username": "ghost", "perms": "logs"}, 404, "manager_not_found"),
    ],
)
async def test_editmanager_refusals(seller: Seller, params: dict[str, Any], status: int, error: str) -> None:
    await add_account(seller, "Reseller", "res")
    await add_account(seller, "Manager", "boss")
    await seller.fails("editmanager", status, error, **params)


# --- addaccountkey ---------------------------------------------------------------------------------


async def test_addaccountkey_issues_another_key_acting_as_the_account(
    seller: Seller, services: Services
) -> None:
    await add_account(seller, "Reseller", "res")
    body = await seller.ok("addaccountkey", user="res", name="shop bot")
    assert set(body) == {"success", "message", "sellerkey"}
    second = acting_as(seller, body["sellerkey"])
    assert (await second.ok("setseller"))["permissions"] == ["licenses", "users"]
    names = [k["name"] for k in (await seller.ok("fetchallsellerkeys"))["keys"]]
    assert names == ["initial", "res", "shop bot"]
    res_id = (await account(services, "res"))["id"]
    assert await services.db.fetch_value("SELECT COUNT(*) FROM seller_keys WHERE account_id = ?", res_id) == 2


async def test_addaccountkey_refuses_unknown_and_other_applications_accounts(
    seller: Seller, services: Services
) -> None:
    other = await create_seller(services, seller.http, owner="someone", name="other")
    await add_account(other, "Manager", "theirs")
    await seller.fails("addaccountkey", 404, "account_not_found", user="theirs")
    await seller.fails("addaccountkey", 404, "account_not_found", user="ghost")
    await seller.fails("addaccountkey", 400, "missing_parameter")
    await seller.fails("addaccountkey", 400, "parameter_too_long", user="res", name="n" * 65)


# --- the caller identity of team keys ----------------------------------------------------------------

TEAM_OPERATIONS: list[tuple[str, dict[str, Any]]] = [
    ("addAccount", {"role": "Reseller", "user": "x", "pass": "p"}),
    ("deleteAccount", {"user": "x"}),
    ("fetchteam", {}),
    ("fetchresellers", {}),
    ("fetchmanagers", {}),
    ("getbalance", {"username": "x"}),
    ("setbalance", {"username": "x", "day": 1}),
    ("editreseller", {"username": "x", "email": "a@b.c"}),
    ("editmanager", {"username": "x", "email": "a@b.c"}),
    ("addaccountkey", {"user": "x"}),
]


@pytest.mark.parametrize(("operation", "params"), TEAM_OPERATIONS)
async def test_team_operations_are_for_the_owner_only(
    seller: Seller, operation: str, params: dict[str, Any]
) -> None:
    manager = await add_account(seller, "Manager", "boss", perms="all")
    reseller = await add_account(seller, "Reseller", "res")
    limited = acting_as(seller, (await seller.ok("addsellerkey", permissions="licenses,users"))["sellerkey"])
    for caller in (manager, reseller, limited):
        await caller.fails(operation, 403, "permission_denied", **params)


async def test_a_manager_never_manages_seller_keys(seller: Seller) -> None:
    manager = await add_account(seller, "Manager", "boss")
    await manager.fails("addsellerkey", 403, "permission_denied")
    await manager.fails("fetchallsellerkeys", 403, "permission_denied")
    await manager.fails("delsellerkey", 403, "permission_denied", id=1)


async def test_a_manager_uses_the_areas_it_was_given(seller: Seller) -> None:
    manager = await add_account(seller, "Manager", "boss", perms="licenses,variables")
    await manager.ok("add", expiry=1)
    await manager.ok("fetchallvars")
    await manager.fails("fetchallusers", 403, "permission_denied")
    await manager.fails("addsub", 403, "permission_denied", name="gold", level="2")


async def test_a_managers_keys_have_no_scope_and_record_the_manager(
    seller: Seller, services: Services
) -> None:
    manager = await add_account(seller, "Manager", "boss")
    owner_key = (await seller.ok("add", expiry=1))["key"]
    manager_key = (await manager.ok("add", expiry=1, owner="bot"))["key"]
    assert (await manager.ok("fetchallkeys"))["count"] == 2
    await manager.ok("del", key=owner_key)
    made = await services.db.fetch_one(
        "SELECT generated_by, generated_by_account_id FROM license_keys WHERE key = ?", manager_key
    )
    assert made == {"generated_by": "bot", "generated_by_account_id": (await account(services, "boss"))["id"]}


async def test_a_reseller_is_limited_to_licenses_and_users(seller: Seller) -> None:
    reseller = await add_account(seller, "Reseller", "res")
    await reseller.ok("fetchallkeys")
    await reseller.ok("fetchallusers")
    for operation in ("fetchallsubs", "fetchallvars", "fetchteam", "fetchallsellerkeys"):
        await reseller.fails(operation, 403, "permission_denied")


async def test_a_team_key_outside_its_application_is_refused(seller: Seller, services: Services) -> None:
    # Keys are issued per application, so this cannot happen through the API; the check holds anyway.
    reseller = await add_account(seller, "Reseller", "res")
    other = await create_seller(services, seller.http, owner="someone", name="other")
    await services.db.execute(
        "UPDATE team_members SET app_id = ? WHERE account_id = ?",
        other.app_id,
        (await account(services, "res"))["id"],
    )
    await reseller.fails("setseller", 403, "account_not_in_team")


# --- the audit log -----------------------------------------------------------------------------------


async def test_team_changes_are_audited_without_secrets(seller: Seller) -> None:
    await add_account(seller, "Reseller", "res", keylevels="1", **{"pass": "hunter2"})
    reseller = acting_as(seller, (await seller.ok("addaccountkey", user="res"))["sellerkey"])
    await seller.ok("setbalance", username="res", month=5, day=2)
    await seller.ok("editreseller", username="res", keylevels="2", **{"pass": "hunter3"})
    await seller.ok("addsub", name="gold", level="2")
    await reseller.ok("add", expiry=30, level="2")
    await seller.ok("deleteAccount", user="res")

    logs = (await seller.ok("fetchauditlogs"))["logs"]
    entries = {entry["action"]: entry for entry in logs}
    created = entries["addAccount"]
    assert (created["target"], created["before"]) == ("account:res", None)
    assert created["after"] == {"role": "reseller", "email": None, "key_levels": ["1"]}
    assert entries["setbalance"]["before"] == {"balance": EMPTY_BALANCE}
    assert entries["setbalance"]["after"] == {"balance": {**EMPTY_BALANCE, "month": 5, "day": 2}}
    edited = entries["editreseller"]
    assert (edited["before"]["key_levels"], edited["after"]["key_levels"]) == ("1", "2")
    assert edited["after"]["password_changed"] is True
    assert entries["addaccountkey"]["after"]["sellerkey_prefix"] == reseller.key[:6]
    assert entries["add"]["actor"] == "res"  # what a reseller does is recorded under its name
    assert (entries["deleteAccount"]["target"], entries["deleteAccount"]["after"]) == ("account:res", None)
    text = str(logs)
    assert "hunter" not in text
    assert reseller.key not in text
