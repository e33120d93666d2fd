"""Seller API — Log group, over HTTP: client logs and tamper reports. The client API writes
them; here they are written through the same store functions."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from licensegate.store import logs as client_logs
from licensegate.store import tamper as tamper_logs
from tests.helpers import Seller, create_seller

pytestmark = pytest.mark.anyio


async def log(
    services: Services,
    app_id: int,
    message: str,
    *,
    at: int,
    credential: str | None = "alice",
    pcuser: str | None = "DESKTOP\\alice",
    ip: str | None = "198.51.100.7",
) -> int:
    return await client_logs.insert(
        services.db, app_id, credential=credential, pcuser=pcuser, message=message, ip=ip, now=at
    )


async def tamper(
    services: Services,
    app_id: int,
    reason: str,
    *,
    at: int,
    credential: str | None = "alice",
    ip: str | None = "198.51.100.7",
    details: str | None = None,
) -> int:
    return await tamper_logs.insert(
        services.db,
        app_id,
        user_id=None,
        credential=credential,
        hwid="HW-1",
        ip=ip,
        reason=reason,
        details=details,
        now=at,
    )


async def messages(seller: Seller, **filters: str) -> list[str]:
    body = await seller.ok("fetchalllogs", **filters)
    return [entry["logdata"] for entry in body["logs"]]


async def other_app(services: Services, seller: Seller) -> Seller:
    return await create_seller(services, seller.http, owner="other-owner", name="other")


# --- fetchalllogs ------------------------------------------------------------------------------


async def test_fetchalllogs_lists_newest_first_with_every_field(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    first = await log(services, seller.app_id, "started", at=now - 20)
    second = await log(
        services, seller.app_id, "opened menu", at=now - 10, credential=None, pcuser=None, ip="2001:db8::1"
    )
    body = await seller.ok("fetchalllogs")
    assert body["message"] == "Successfully retrieved logs"
    assert body["count"] == 2
    assert body["logs"] == [
        {
            "id": str(second),
            "logdata": "opened menu",
            "credential": None,
            "pcuser": None,
            "ip": "2001:db8::1",
            "logdate": now - 10,
        },
        {
            "id": str(first),
            "logdata": "started",
            "credential": "alice",
            "pcuser": "DESKTOP\\alice",
            "ip": "198.51.100.7",
            "logdate": now - 20,
        },
    ]


async def test_fetchalllogs_orders_logs_of_the_same_second_by_arrival(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    for text in ("a", "b", "c"):
        await log(services, seller.app_id, text, at=clock.now())
    assert await messages(seller) == ["c", "b", "a"]


async def test_fetchalllogs_filters_by_user_ip_and_inclusive_time_range(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await log(services, seller.app_id, "alice-1", at=now - 30, credential="alice", ip="198.51.100.7")
    await log(services, seller.app_id, "bob-1", at=now - 20, credential="bob", ip="2001:db8::1")
    await log(services, seller.app_id, "alice-2", at=now - 10, credential="alice", ip="198.51.100.8")
    assert await messages(seller, user="alice") == ["alice-2", "alice-1"]
    assert await messages(seller, user="carol") == []
    assert await messages(seller, ip="198.51.100.7") == ["alice-1"]
    assert await messages(seller, ip="2001:DB8::0:1") == ["bob-1"]  # canonical comparison
    assert await messages(seller, ip="::ffff:198.51.100.8") == ["alice-2"]
    assert await messages(seller, **{"from": str(now - 20)}) == ["alice-2", "bob-1"]
    assert await messages(seller, to=str(now - 20)) == ["bob-1", "alice-1"]
    assert await messages(seller, **{"from": str(now - 20), "to": str(now - 20)}) == ["bob-1"]
    body = await seller.ok("fetchalllogs", user="alice", **{"from": str(now - 15)})
    assert (body["count"], [e["logdata"] for e in body["logs"]]) == (1, ["alice-2"])


async def test_fetchalllogs_and_fetchtamperlogs_search_their_text(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await log(services, seller.app_id, "Opened the Settings menu", at=now - 30)
    await log(services, seller.app_id, "crash in renderer", at=now - 20, pcuser="QA-Box\\Zo\u00eb")
    await log(services, seller.app_id, 'said "hi" 100%_done', at=now - 10)
    assert await messages(seller, search="settings") == ["Opened the Settings menu"]
    assert await messages(seller, search="qa-box") == ["crash in renderer"]  # the PC user too
    assert await messages(seller, search="zo\u00eb") == ["crash in renderer"]
    assert await messages(seller, search='"hi"') == ['said "hi" 100%_done']  # quotes, no syntax
    assert await messages(seller, search="0%_") == ['said "hi" 100%_done']  # LIKE's signs, literally
    assert await messages(seller, search="in") == ["crash in renderer", "Opened the Settings menu"]
    assert await messages(seller, search="nowhere") == []
    body = await seller.ok("fetchalllogs", search="e", user="alice", to=str(now - 20))
    assert body["count"] == 2
    await tamper(services, seller.app_id, "debugger attached", at=now - 5, details="x64dbg found")
    await tamper(services, seller.app_id, "hash mismatch", at=now - 4)
    reports = await seller.ok("fetchtamperlogs", search="X64DBG")
    assert [r["reason"] for r in reports["logs"]] == ["debugger attached"]
    assert (await seller.ok("fetchtamperlogs", search="hw-1"))["count"] == 2  # the HWID too


async def test_a_log_search_on_sqlite_is_answered_by_the_trigram_index(
    seller: Seller, services: Services
) -> None:
    if services.db.dialect != "sqlite":
        # PostgreSQL's trigram indexes are checked by tests/web/test_logs.py.
        assert (await seller.ok("fetchalllogs", search="abc"))["count"] == 0
        return
    await log(services, seller.app_id, "crash in renderer", at=0)
    table = client_logs.CLIENT_LOGS
    rare = await client_logs.planned(services.db, table, client_logs.LogFilter(search="renderer"))
    assert rare.rare
    where, args = rare.where(services.db, table, seller.app_id)
    plan = await services.db.fetch_all(f"EXPLAIN QUERY PLAN SELECT id FROM client_logs WHERE {where}", *args)
    assert any("client_logs_search VIRTUAL TABLE" in str(row["detail"]) for row in plan), plan
    assert any("rowid=?" in str(row["detail"]) for row in plan), plan  # rows fetched by id
    short = await client_logs.planned(services.db, table, client_logs.LogFilter(search="re"))
    assert not short.rare  # under three characters: no trigram to look up
    for n in range(client_logs.RARE + 1):
        await log(services, seller.app_id, f"renderer {n}", at=n)
    common = await client_logs.planned(services.db, table, client_logs.LogFilter(search="renderer"))
    assert not common.rare  # found soon enough newest first; sorting every match would not be
    body = await seller.ok("fetchalllogs", search="renderer", limit="2")
    assert [e["logdata"] for e in body["logs"]] == [
        f"renderer {client_logs.RARE}",
        f"renderer {client_logs.RARE - 1}",
    ]


async def test_fetchalllogs_pages_and_counts_every_page(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    for n in range(5):
        await log(services, seller.app_id, f"m{n}", at=clock.now() + n)
    first = await seller.ok("fetchalllogs", limit="2")
    last = await seller.ok("fetchalllogs", limit="2", page="3")
    assert [e["logdata"] for e in first["logs"]] == ["m4", "m3"]
    assert [e["logdata"] for e in last["logs"]] == ["m0"]
    assert first["count"] == last["count"] == 5


async def test_fetchalllogs_shows_only_the_callers_application(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    other = await other_app(services, seller)
    await log(services, other.app_id, "theirs", at=clock.now())
    body = await seller.ok("fetchalllogs")
    assert (body["logs"], body["count"]) == ([], 0)


async def test_fetchalllogs_refuses_bad_filters(seller: Seller) -> None:
    await seller.fails("fetchalllogs", 400, "invalid_ip", ip="not-an-ip")
    await seller.fails("fetchalllogs", 400, "invalid_number", **{"from": "yesterday"})
    await seller.fails("fetchalllogs", 400, "number_out_of_range", to="-1")
    await seller.fails("fetchalllogs", 400, "invalid_time_range", **{"from": "200", "to": "100"})
    await seller.fails("fetchalllogs", 400, "parameter_too_long", user="u" * 129)
    await seller.fails("fetchalllogs", 400, "number_out_of_range", page="0")


# --- dellogs, dellogsbyip ----------------------------------------------------------------------


async def test_dellogs_deletes_every_log_of_the_application_only(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    other = await other_app(services, seller)
    await log(services, seller.app_id, "a", at=clock.now())
    await log(services, seller.app_id, "b", at=clock.now())
    await log(services, other.app_id, "theirs", at=clock.now())
    body = await seller.ok("dellogs")
    assert body == {"success": True, "message": "Successfully deleted all logs!", "deleted": 2}
    assert await messages(seller) == []
    assert await messages(other) == ["theirs"]
    assert (await seller.ok("dellogs"))["deleted"] == 0


async def test_dellogsbyip_deletes_the_logs_of_one_address(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await log(services, seller.app_id, "v4", at=now, ip="198.51.100.7")
    await log(services, seller.app_id, "v6", at=now, ip="2001:db8::1")
    await log(services, seller.app_id, "keep", at=now, ip="198.51.100.8")
    body = await seller.ok("dellogsbyip", ip="::ffff:198.51.100.7")
    assert body == {"success": True, "message": "Successfully deleted logs by IP!", "deleted": 1}
    assert (await seller.ok("dellogsbyip", ip="2001:DB8::1"))["deleted"] == 1
    assert (await seller.ok("dellogsbyip", ip="203.0.113.1"))["deleted"] == 0
    assert await messages(seller) == ["keep"]


async def test_dellogsbyip_refuses_what_is_not_an_address(seller: Seller) -> None:
    await seller.fails("dellogsbyip", 400, "invalid_ip", ip="198.51.100.0/24")
    await seller.fails("dellogsbyip", 400, "invalid_ip", ip="localhost")
    await seller.fails("dellogsbyip", 400, "missing_parameter")


# --- fetchtamperlogs, deltamperlogs ------------------------------------------------------------


async def test_fetchtamperlogs_lists_newest_first_with_every_field(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    first = await tamper(services, seller.app_id, "hash_mismatch", at=now - 10, details="sha256 abc")
    second = await tamper(services, seller.app_id, "debugger", at=now, credential=None, ip=None)
    body = await seller.ok("fetchtamperlogs")
    assert body["message"] == "Successfully retrieved tamper logs"
    assert body["count"] == 2
    assert body["logs"] == [
        {
            "id": str(second),
            "reason": "debugger",
            "details": None,
            "credential": None,
            "hwid": "HW-1",
            "ip": None,
            "created": now,
        },
        {
            "id": str(first),
            "reason": "hash_mismatch",
            "details": "sha256 abc",
            "credential": "alice",
            "hwid": "HW-1",
            "ip": "198.51.100.7",
            "created": now - 10,
        },
    ]


async def test_fetchtamperlogs_filters_and_pages_like_fetchalllogs(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await tamper(services, seller.app_id, "r1", at=now - 30, credential="alice", ip="198.51.100.7")
    await tamper(services, seller.app_id, "r2", at=now - 20, credential="bob", ip="2001:db8::1")
    await tamper(services, seller.app_id, "r3", at=now - 10, credential="alice", ip="198.51.100.7")

    async def reasons(**filters: str) -> list[str]:
        return [entry["reason"] for entry in (await seller.ok("fetchtamperlogs", **filters))["logs"]]

    assert await reasons(user="alice") == ["r3", "r1"]
    assert await reasons(ip="2001:db8:0::1") == ["r2"]
    assert await reasons(**{"from": str(now - 20), "to": str(now - 11)}) == ["r2"]
    page = await seller.ok("fetchtamperlogs", limit="1", page="2")
    assert ([e["reason"] for e in page["logs"]], page["count"]) == (["r2"], 3)
    await seller.fails("fetchtamperlogs", 400, "invalid_ip", ip="1.2.3")
    await seller.fails("fetchtamperlogs", 400, "invalid_time_range", **{"from": "2", "to": "1"})


async def test_deltamperlogs_deletes_every_tamper_report_of_the_application_only(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    other = await other_app(services, seller)
    await tamper(services, seller.app_id, "r1", at=clock.now())
    await tamper(services, other.app_id, "theirs", at=clock.now())
    await log(services, seller.app_id, "a client log stays", at=clock.now())
    body = await seller.ok("deltamperlogs")
    assert body == {"success": True, "message": "Successfully deleted all tamper logs!", "deleted": 1}
    assert (await seller.ok("fetchtamperlogs"))["logs"] == []
    assert (await other.ok("fetchtamperlogs"))["count"] == 1
    assert await messages(seller) == ["a client log stays"]


# --- permissions and audit ---------------------------------------------------------------------


async def test_log_operations_need_the_logs_area(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", permissions="sessions"))["sellerkey"]
    for type_ in ("fetchalllogs", "dellogs", "fetchtamperlogs", "deltamperlogs"):
        await seller.fails(type_, 403, "permission_denied", sellerkey=limited)


async def test_deleting_logs_is_recorded_in_the_audit_log(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await log(services, seller.app_id, "a", at=clock.now(), ip="198.51.100.7")
    await log(services, seller.app_id, "b", at=clock.now(), ip="198.51.100.8")
    await seller.ok("dellogsbyip", ip="198.51.100.7")
    await seller.ok("dellogs")
    entries = (await seller.ok("fetchauditlogs"))["logs"]
    assert [(e["action"], e["target"], e["before"], e["after"]) for e in entries] == [
        ("dellogs", "logs:all", {"logs": 1}, None),
        ("dellogsbyip", "logs:ip:198.51.100.7", {"logs": 1}, None),
    ]
