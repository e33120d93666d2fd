"""Seller API — Blacklists and whitelist, over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import blacklists
from licensegate.services import Services
from tests.helpers import Seller, create_seller

pytestmark = pytest.mark.anyio


async def entries(seller: Seller) -> list[tuple[str, str | None, str | None]]:
    body = await seller.ok("fetchallblacks")
    return [(e["type"], e["hwid"], e["ip"]) for e in body["blacklists"]]


async def whites(seller: Seller) -> list[str]:
    return [e["ip"] for e in (await seller.ok("fetchallwhites"))["whitelist"]]


async def stored(services: Services, seller: Seller) -> set[tuple[str, str]]:
    rows = await services.db.fetch_all("SELECT kind, value FROM blacklist WHERE app_id = ?", seller.app_id)
    return {(row["kind"], row["value"]) for row in rows}


async def other_app(services: Services, seller: Seller) -> Seller:
    return await create_seller(services, seller.http, owner="other-owner", name="other")


# --- black -------------------------------------------------------------------------------------


async def test_black_adds_an_ip_and_a_hwid_in_one_call(seller: Seller, clock: MovableClock) -> None:
    body = await seller.ok("black", ip="198.51.100.7", hwid="HW-1", reason="chargeback")
    assert body == {"success": True, "message": "Blacklist Addition Successful", "added": 2}
    listed = await seller.ok("fetchallblacks")
    assert listed["message"] == "Successfully retrieved blacklists"
    assert listed["count"] == 2
    assert listed["blacklists"] == [
        {"type": "ip", "hwid": None, "ip": "198.51.100.7", "reason": "chargeback", "created": clock.now()},
        {"type": "hwid", "hwid": "HW-1", "ip": None, "reason": "chargeback", "created": clock.now()},
    ]


async def test_black_adds_either_value_alone_without_a_reason(seller: Seller) -> None:
    assert (await seller.ok("black", hwid="HW-1"))["added"] == 1
    assert (await seller.ok("black", ip="2001:db8::1"))["added"] == 1
    body = await seller.ok("fetchallblacks")
    assert [(e["type"], e["reason"]) for e in body["blacklists"]] == [("hwid", None), ("ip", None)]


async def test_black_stores_addresses_and_ranges_canonically(seller: Seller, services: Services) -> None:
    await seller.ok("black", ip="2001:0DB8:0000::0001")
    await seller.ok("black", ip="::ffff:198.51.100.7")
    await seller.ok("black", ip="10.1.2.3/8")
    await seller.ok("black", ip="2001:db8:abcd:12::/48")
    await seller.ok("black", ip="203.0.113.9/32")
    assert await stored(services, seller) == {
        ("ip", "2001:db8::1"),
        ("ip", "198.51.100.7"),
        ("cidr", "10.0.0.0/8"),
        ("cidr", "2001:db8:abcd::/48"),
        ("ip", "203.0.113.9"),
    }
    assert [ip for _, _, ip in await entries(seller)] == [
        "2001:db8::1",
        "198.51.100.7",
        "10.0.0.0/8",
        "2001:db8:abcd::/48",
        "203.0.113.9",
    ]


async def test_black_with_an_existing_entry_is_not_an_error(seller: Seller) -> None:
    await seller.ok("black", ip="198.51.100.7", hwid="HW-1", reason="first")
    body = await seller.ok("black", ip="::ffff:198.51.100.7", hwid="HW-1", reason="second")
    assert body["added"] == 0
    assert (await seller.ok("black", ip="198.51.100.7", hwid="HW-2"))["added"] == 1
    listed = (await seller.ok("fetchallblacks"))["blacklists"]
    assert len(listed) == 3
    assert listed[0]["reason"] == "first"  # an existing entry keeps its reason


async def test_black_refusals(seller: Seller) -> None:
    await seller.fails("black", 400, "missing_parameter")
    await seller.fails("black", 400, "missing_parameter", reason="no value given")
    await seller.fails("black", 400, "invalid_ip", ip="not-an-ip", hwid="HW-1")
    await seller.fails("black", 400, "invalid_ip", ip="10.0.0.0/33")
    await seller.fails("black", 400, "invalid_ip", ip="1.2.3")
    await seller.fails("black", 400, "parameter_too_long", hwid="h" * 257)
    await seller.fails("black", 400, "parameter_too_long", hwid="HW-1", reason="r" * 257)
    await seller.fails("black", 400, "parameter_too_long", ip="1" * 65)
    assert await entries(seller) == []  # nothing half-added


async def test_black_entries_block_clients_of_this_application_only(
    seller: Seller, services: Services
) -> None:
    other = await other_app(services, seller)
    await seller.ok("black", ip="10.0.0.0/8", hwid="HW-1")
    db = services.db
    assert await blacklists.blocked(db, seller.app_id, hwids=["HW-1"], ip=None) == "hwid"
    assert await blacklists.blocked(db, seller.app_id, hwids=[], ip="10.200.0.1") == "ip"
    assert await blacklists.blocked(db, other.app_id, hwids=["HW-1"], ip="10.200.0.1") is None


# --- delblack ----------------------------------------------------------------------------------


async def test_delblack_removes_one_hwid_address_or_range(seller: Seller) -> None:
    await seller.ok("black", ip="198.51.100.7", hwid="HW-1")
    await seller.ok("black", ip="10.0.0.0/8", hwid="HW-2")
    body = await seller.ok("delblack", data="HW-1", blacktype="hwid")
    assert body == {"success": True, "message": "Successfully deleted blacklist!"}
    await seller.ok("delblack", data="::ffff:198.51.100.7", blacktype="ip")  # canonical match
    await seller.ok("delblack", data="10.9.9.9/8", blacktype="ip")  # the same range
    assert await entries(seller) == [("hwid", "HW-2", None)]


async def test_delblack_refusals(seller: Seller, services: Services) -> None:
    other = await other_app(services, seller)
    await other.ok("black", ip="198.51.100.7", hwid="HW-1")
    await seller.ok("black", hwid="198.51.100.8", ip="10.0.0.0/8")
    await seller.fails("delblack", 404, "blacklist_not_found", data="HW-1", blacktype="hwid")
    await seller.fails("delblack", 404, "blacklist_not_found", data="198.51.100.7", blacktype="ip")
    # The type is part of the entry: a HWID that looks like an IP is not an IP entry.
    await seller.fails("delblack", 404, "blacklist_not_found", data="198.51.100.8", blacktype="ip")
    await seller.fails("delblack", 404, "blacklist_not_found", data="10.0.0.0/8", blacktype="hwid")
    await seller.fails("delblack", 404, "blacklist_not_found", data="10.0.0.0/16", blacktype="ip")
    await seller.fails("delblack", 400, "invalid_blacklist_type", data="HW-1", blacktype="region")
    await seller.fails("delblack", 400, "invalid_ip", data="HW-1", blacktype="ip")
    await seller.fails("delblack", 400, "missing_parameter", data="HW-1")
    await seller.fails("delblack", 400, "missing_parameter", blacktype="hwid")
    await seller.fails("delblack", 400, "parameter_too_long", data="h" * 257, blacktype="hwid")
    assert len(await entries(other)) == 2


# --- delblacks, fetchallblacks -----------------------------------------------------------------


async def test_delblacks_removes_every_entry_of_the_application_only(
    seller: Seller, services: Services
) -> None:
    other = await other_app(services, seller)
    await other.ok("black", hwid="HW-theirs")
    await seller.ok("black", ip="10.0.0.0/8", hwid="HW-1")
    await seller.ok("black", ip="2001:db8::1")
    body = await seller.ok("delblacks")
    assert body == {"success": True, "message": "Successfully deleted all blacklists!", "deleted": 3}
    assert await entries(seller) == []
    assert await entries(other) == [("hwid", "HW-theirs", None)]
    assert (await seller.ok("delblacks"))["deleted"] == 0


async def test_fetchallblacks_pages_oldest_first_with_the_total(seller: Seller) -> None:
    for n in range(5):
        await seller.ok("black", hwid=f"HW-{n}")
    first = await seller.ok("fetchallblacks", limit="2")
    last = await seller.ok("fetchallblacks", limit="2", page="3")
    assert [e["hwid"] for e in first["blacklists"]] == ["HW-0", "HW-1"]
    assert [e["hwid"] for e in last["blacklists"]] == ["HW-4"]
    assert first["count"] == last["count"] == 5
    await seller.fails("fetchallblacks", 400, "number_out_of_range", limit="0")


async def test_fetchallblacks_of_an_empty_app_is_an_empty_list(seller: Seller) -> None:
    body = await seller.ok("fetchallblacks")
    assert (body["blacklists"], body["count"]) == ([], 0)


async def test_banuser_entries_show_in_fetchallblacks_and_block(seller: Seller, services: Services) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("addhwiduser", user="alice", hwid="HW-alice")
    # Raw: only a client login writes the last address, and this suite's client has one address.
    await services.db.execute(
        "UPDATE users SET last_ip = ? WHERE app_id = ? AND username = ?",
        "198.51.100.7",
        seller.app_id,
        "alice",
    )
    await seller.ok("banuser", user="alice", reason="sharing")
    listed = (await seller.ok("fetchallblacks"))["blacklists"]
    assert {(e["type"], e["hwid"] or e["ip"], e["reason"]) for e in listed} == {
        ("hwid", "HW-alice", "sharing"),
        ("ip", "198.51.100.7", "sharing"),
    }
    assert await blacklists.is_blacklisted_ip(services.db, seller.app_id, "198.51.100.7")
    await seller.ok("unbanuser", user="alice")
    assert await entries(seller) == []


# --- whitelist ---------------------------------------------------------------------------------


async def test_addwhite_adds_an_address_or_range_canonically(seller: Seller, clock: MovableClock) -> None:
    body = await seller.ok("addWhite", ip="::ffff:198.51.100.7")
    assert body == {"success": True, "message": "Successfully added whitelist!", "added": 1}
    await seller.ok("addWhite", ip="2001:DB8::5/32")
    listed = await seller.ok("fetchallwhites")
    assert listed["message"] == "Successfully retrieved whitelists"
    assert listed["count"] == 2
    assert listed["whitelist"] == [
        {"ip": "198.51.100.7", "created": clock.now()},
        {"ip": "2001:db8::/32", "created": clock.now()},
    ]


async def test_addwhite_with_an_existing_entry_is_not_an_error(seller: Seller) -> None:
    await seller.ok("addWhite", ip="198.51.100.7")
    assert (await seller.ok("addWhite", ip="198.51.100.7/32"))["added"] == 0
    assert await whites(seller) == ["198.51.100.7"]


async def test_addwhite_refusals(seller: Seller) -> None:
    await seller.fails("addWhite", 400, "missing_parameter")
    await seller.fails("addWhite", 400, "invalid_ip", ip="example.com")
    await seller.fails("addWhite", 400, "invalid_ip", ip="10.0.0.0/40")
    await seller.fails("addWhite", 400, "parameter_too_long", ip="1" * 65)


async def test_a_whitelisted_ip_bypasses_ip_entries_but_not_hwid_entries(
    seller: Seller, services: Services
) -> None:
    await seller.ok("black", ip="10.0.0.0/8", hwid="HW-1")
    await seller.ok("addWhite", ip="10.1.0.0/16")
    db = services.db
    assert await blacklists.blocked(db, seller.app_id, hwids=["HW-2"], ip="10.1.2.3") is None
    assert await blacklists.blocked(db, seller.app_id, hwids=["HW-1"], ip="10.1.2.3") == "hwid"
    assert await blacklists.blocked(db, seller.app_id, hwids=["HW-2"], ip="10.2.0.1") == "ip"


async def test_delwhite_removes_one_entry(seller: Seller) -> None:
    await seller.ok("addWhite", ip="198.51.100.7")
    await seller.ok("addWhite", ip="10.0.0.0/8")
    body = await seller.ok("delWhite", ip="::ffff:198.51.100.7")
    assert body == {"success": True, "message": "Successfully deleted whitelist!"}
    await seller.ok("delWhite", ip="10.1.1.1/8")
    assert await whites(seller) == []


async def test_delwhite_refusals(seller: Seller, services: Services) -> None:
    other = await other_app(services, seller)
    await other.ok("addWhite", ip="198.51.100.7")
    await seller.ok("addWhite", ip="10.0.0.0/8")
    await seller.fails("delWhite", 404, "whitelist_not_found", ip="198.51.100.7")
    await seller.fails("delWhite", 404, "whitelist_not_found", ip="10.0.0.1")  # inside, not the entry
    await seller.fails("delWhite", 400, "invalid_ip", ip="nope")
    await seller.fails("delWhite", 400, "missing_parameter")
    assert await whites(other) == ["198.51.100.7"]


@pytest.mark.parametrize("type_", ["delallwhites", "delAllWhites"])
async def test_delallwhites_removes_every_entry_of_the_application_only(
    seller: Seller, services: Services, type_: str
) -> None:
    other = await other_app(services, seller)
    await other.ok("addWhite", ip="198.51.100.7")
    await seller.ok("addWhite", ip="198.51.100.7")
    await seller.ok("addWhite", ip="2001:db8::/32")
    body = await seller.ok(type_)
    assert body == {"success": True, "message": "Successfully deleted all whitelists!", "deleted": 2}
    assert await whites(seller) == []
    assert await whites(other) == ["198.51.100.7"]


async def test_fetchallwhites_pages_with_the_total(seller: Seller) -> None:
    for n in range(3):
        await seller.ok("addWhite", ip=f"198.51.100.{n}")
    body = await seller.ok("fetchallwhites", limit="2", page="2")
    assert ([e["ip"] for e in body["whitelist"]], body["count"]) == (["198.51.100.2"], 3)
    empty = await seller.ok("fetchallwhites", page="9")
    assert (empty["whitelist"], empty["count"]) == ([], 3)
    await seller.fails("fetchallwhites", 400, "invalid_number", page="x")


# --- permissions and audit ---------------------------------------------------------------------


async def test_blacklist_operations_need_the_blacklists_area(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", permissions="users"))["sellerkey"]
    for type_, params in (
        ("black", {"hwid": "HW-1"}),
        ("fetchallblacks", {}),
        ("delblacks", {}),
        ("addWhite", {"ip": "198.51.100.7"}),
        ("fetchallwhites", {}),
    ):
        await seller.fails(type_, 403, "permission_denied", sellerkey=limited, **params)


async def test_blacklist_changes_are_recorded_in_the_audit_log(seller: Seller) -> None:
    await seller.ok("black", ip="10.1.2.3/8", hwid="HW-1", reason="abuse")
    await seller.ok("delblack", data="HW-1", blacktype="hwid")
    await seller.ok("addWhite", ip="198.51.100.7")
    await seller.ok("delWhite", ip="198.51.100.7")
    await seller.ok("delblacks")
    await seller.ok("delallwhites")
    logs: list[dict[str, Any]] = (await seller.ok("fetchauditlogs"))["logs"]
    assert [(e["action"], e["target"], e["before"], e["after"]) for e in reversed(logs)] == [
        (
            "black",
            "blacklist",
            None,
            {
                "entries": [{"type": "ip", "value": "10.0.0.0/8"}, {"type": "hwid", "value": "HW-1"}],
                "reason": "abuse",
            },
        ),
        ("delblack", "blacklist:hwid:HW-1", {"type": "hwid", "value": "HW-1", "reason": "abuse"}, None),
        ("addWhite", "whitelist:198.51.100.7", None, {"ip": "198.51.100.7"}),
        ("delWhite", "whitelist:198.51.100.7", {"ip": "198.51.100.7"}, None),
        ("delblacks", "blacklist:all", {"entries": 1}, None),
        ("delallwhites", "whitelist:all", {"entries": 0}, None),
    ]
