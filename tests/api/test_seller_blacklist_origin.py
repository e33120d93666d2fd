"""Blacklist entries remember where they came from (issue 10 item 3): a ban lifts only what that
ban added, an HWID or IP the owner blacklisted stays blacklisted, and a reseller (or any caller
without the `blacklists` area) cannot plant entries that lock out the owner's users."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from licensegate.services import Services
from licensegate.store import migrate
from tests.api.test_seller_reseller_scope import add_reseller
from tests.api.test_seller_team import add_account
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "HW-SHARED-0000000000"
OWNER_USER_HWID = "HW-OWNERS-CUSTOMER-00"


async def origins(seller: Seller) -> list[tuple[str, str | None, str | None]]:
    listed = (await seller.ok("fetchallblacks", origin="1"))["blacklists"]
    return [(e["hwid"] or e["ip"], e["ban_of"], e["added_by"]) for e in listed]


async def logged_in_client(seller: Seller, username: str, hwid: str) -> Client:
    client = client_of(seller)
    await client.init()
    await client.ok("login", username=username, hwid=hwid, **{"pass": "pw"})
    return client


async def test_a_reseller_ban_and_unban_leave_the_owners_entry(seller: Seller) -> None:
    await seller.ok("black", hwid=HWID, reason="known cracker")
    reseller = await add_reseller(seller)
    await seller.ok("setbalance", username="res", day=5)
    await reseller.ok("adduser", user="mine", sub="default", expiry=1)
    await reseller.ok("addhwiduser", user="mine", hwid=HWID)
    await reseller.ok("banuser", user="mine", reason="whatever")
    await reseller.ok("unbanuser", user="mine")
    assert await origins(seller) == [(HWID, None, "owner (seller key " + seller.key[:6] + ")")]
    client = client_of(seller)
    await client.init()
    await client.fails(
        "register",
        403,
        "blacklisted",
        username="new",
        key=(await seller.ok("add", expiry=1))["key"],
        hwid=HWID,
        **{"pass": "pw"},
    )


async def test_a_reseller_cannot_plant_entries_that_lock_out_the_owners_users(seller: Seller) -> None:
    await seller.ok("adduser", user="customer", sub="default", expiry=30, **{"pass": "pw"})
    await logged_in_client(seller, "customer", OWNER_USER_HWID)
    reseller = await add_reseller(seller)
    await seller.ok("setbalance", username="res", day=5)
    await reseller.ok("adduser", user="decoy", sub="default", expiry=1)
    await reseller.ok("addhwiduser", user="decoy", hwid=OWNER_USER_HWID)
    await reseller.ok("banuser", user="decoy", reason="planted")
    assert await origins(seller) == []
    await logged_in_client(seller, "customer", OWNER_USER_HWID)  # still welcome


async def test_a_manager_without_the_blacklists_area_bans_without_blacklisting(seller: Seller) -> None:
    await seller.ok("adduser", user="kim", sub="default", expiry=30)
    await seller.ok("addhwiduser", user="kim", hwid=HWID)
    users_only = await add_account(seller, "Manager", "mia", perms="users")
    await users_only.ok("banuser", user="kim")
    assert await origins(seller) == []
    both = await add_account(seller, "Manager", "max", perms="users,blacklists")
    await both.ok("banuser", user="kim", reason="again")
    assert await origins(seller) == [(HWID, "kim", "max")]
    await users_only.ok("unbanuser", user="kim")  # lifts the ban, not the entries
    assert await origins(seller) == [(HWID, "kim", "max")]


async def test_unbanning_lifts_only_what_that_users_bans_added(seller: Seller, services: Services) -> None:
    for name in ("ann", "bob"):
        await seller.ok("adduser", user=name, sub="default", expiry=30)
        await seller.ok("addhwiduser", user=name, hwid=HWID)
    # Raw: only a client login writes the last address, and this suite's client has one address.
    await services.db.execute(
        "UPDATE users SET last_ip = '198.51.100.9' WHERE app_id = ? AND username = 'ann'", seller.app_id
    )
    await seller.ok("black", hwid=HWID, reason="by hand")
    await seller.ok("banuser", user="ann", reason="sharing")
    await seller.ok("banuser", user="bob", reason="sharing")
    owner = "owner (seller key " + seller.key[:6] + ")"
    assert sorted(await origins(seller), key=str) == sorted(
        [(HWID, None, owner), (HWID, "ann", owner), ("198.51.100.9", "ann", owner), (HWID, "bob", owner)],
        key=str,
    )
    await seller.ok("unbanuser", user="ann")
    assert sorted(await origins(seller), key=str) == sorted(
        [(HWID, None, owner), (HWID, "bob", owner)], key=str
    )
    await seller.ok("unbanuser", user="bob")
    assert await origins(seller) == [(HWID, None, owner)]
    await seller.ok("delblack", data=HWID, blacktype="hwid")
    assert await origins(seller) == []


async def test_the_default_listing_keeps_its_shape(seller: Seller) -> None:
    await seller.ok("black", hwid=HWID)
    entry = (await seller.ok("fetchallblacks"))["blacklists"][0]
    assert set(entry) == {"type", "hwid", "ip", "reason", "created"}


async def test_a_client_ban_and_tamper_bans_say_so(seller: Seller) -> None:
    await seller.ok("adduser", user="kim", sub="default", expiry=30, **{"pass": "pw"})
    client = await logged_in_client(seller, "kim", OWNER_USER_HWID)
    await client.ok("ban", reason="debugger found")
    found = await origins(seller)
    assert (OWNER_USER_HWID, "kim", "client program") in found
    assert ("203.0.113.7", "kim", "client program") in found
    await seller.ok("deluser", user="kim")
    assert {ban_of for _value, ban_of, _by in await origins(seller)} == {"(deleted user)"}


# --- the migration attributes entries made by earlier bans --------------------------------------


def migration(name: str) -> ModuleType:
    path = migrate.MIGRATIONS_DIR / "versions" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_upgrade_attributes_earlier_ban_entries_to_their_bans(
    seller: Seller, services: Services
) -> None:
    await seller.ok("adduser", user="ann", sub="default", expiry=30)
    await seller.ok("addhwiduser", user="ann", hwid=HWID)
    db = services.db
    # Raw: rows as a version before revision 0004 stored them, for the migration's statement.
    await db.execute(
        "UPDATE users SET last_ip = '198.51.100.9', banned_reason = 'old ban' WHERE username = 'ann'"
    )
    # Entries as bans made them before revision 0004: no origin recorded.
    for kind, value, reason in (
        ("hwid", HWID, "old ban"),
        ("ip", "198.51.100.9", "old ban"),
        ("hwid", "HW-X", "by hand"),
    ):
        await db.execute(
            "INSERT INTO blacklist (app_id, kind, value, reason, created_at) VALUES (?, ?, ?, ?, 1)",
            seller.app_id,
            kind,
            value,
            reason,
        )
    await db.execute(migration("0004_blacklist_origin").ATTRIBUTE_TO_BANS)
    rows = await db.fetch_all(
        "SELECT b.value, u.username FROM blacklist b "
        "LEFT JOIN users u ON u.id = b.banned_user_id ORDER BY b.id"
    )
    assert [(r["value"], r["username"]) for r in rows] == [
        (HWID, "ann"),
        ("198.51.100.9", "ann"),
        ("HW-X", None),
    ]
    await seller.ok("unbanuser", user="ann")
    assert await origins(seller) == [("HW-X", None, None)]


async def test_a_ban_may_leave_a_shared_ip_off_the_blacklist(seller: Seller) -> None:
    await seller.ok("adduser", user="lee", sub="default", expiry=30, **{"pass": "pw"})
    await logged_in_client(seller, "lee", HWID)  # records lee's HWID and address
    await seller.ok("banuser", user="lee", reason="shared school network", blacklistIp="0")
    assert [entry for entry, _ban_of, _by in await origins(seller)] == [HWID]
    await seller.ok("unbanuser", user="lee")
    await seller.ok("banuser", user="lee", reason="now everything")
    assert len(await origins(seller)) == 2
