"""Seller API — Session group, over HTTP. Sessions are made by the client API; here they are
inserted directly."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.helpers import Seller, create_seller

pytestmark = pytest.mark.anyio

HOUR = 3600


async def add_session(
    services: Services,
    app_id: int,
    session_id: str,
    *,
    created: int,
    lifetime: int = HOUR,
    credential: str | None = None,
    validated: int = 0,
    ip: str | None = "198.51.100.7",
) -> None:
    # Raw: a session of a chosen age, address and credential (the client API writes its own).
    await services.db.execute(
        "INSERT INTO sessions (id, app_id, credential, validated, created_at, expires_at, ip) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        session_id,
        app_id,
        credential,
        validated,
        created,
        created + lifetime,
        ip,
    )


async def session_ids(services: Services, app_id: int) -> set[str]:
    rows = await services.db.fetch_all("SELECT id FROM sessions WHERE app_id = ?", app_id)
    return {row["id"] for row in rows}


async def other_app(services: Services, seller: Seller) -> Seller:
    return await create_seller(services, seller.http, owner="other-owner", name="other")


# --- fetchallsessions --------------------------------------------------------------------------


async def test_fetchallsessions_lists_unexpired_sessions_newest_first(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await add_session(services, seller.app_id, "s-old", created=now - 100, credential="alice", validated=1)
    await add_session(services, seller.app_id, "s-new", created=now - 10, ip="2001:db8::1")
    await add_session(services, seller.app_id, "s-expired", created=now - 2 * HOUR)
    body = await seller.ok("fetchallsessions")
    assert body["message"] == "Successfully retrieved sessions"
    assert body["count"] == 2
    assert body["sessions"] == [
        {
            "id": "s-new",
            "credential": None,
            "created": now - 10,
            "expiry": now - 10 + HOUR,
            "validated": 0,
            "ip": "2001:db8::1",
        },
        {
            "id": "s-old",
            "credential": "alice",
            "created": now - 100,
            "expiry": now - 100 + HOUR,
            "validated": 1,
            "ip": "198.51.100.7",
        },
    ]


async def test_fetchallsessions_with_all_includes_expired_ones(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await add_session(services, seller.app_id, "s-live", created=now - 10)
    await add_session(services, seller.app_id, "s-expired", created=now - 2 * HOUR)
    body = await seller.ok("fetchallsessions", all="1")
    assert body["count"] == 2
    assert [s["id"] for s in body["sessions"]] == ["s-live", "s-expired"]


async def test_a_session_counts_as_expired_at_its_expiry_second(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await add_session(services, seller.app_id, "s1", created=clock.now(), lifetime=60)
    clock.advance(59)
    assert (await seller.ok("fetchallsessions"))["count"] == 1
    clock.advance(1)
    assert (await seller.ok("fetchallsessions"))["count"] == 0


async def test_fetchallsessions_pages_and_counts_every_page(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    for n in range(5):
        await add_session(services, seller.app_id, f"s{n}", created=now - 100 + n)
    first = await seller.ok("fetchallsessions", limit="2")
    third = await seller.ok("fetchallsessions", limit="2", page="3")
    assert [s["id"] for s in first["sessions"]] == ["s4", "s3"]
    assert [s["id"] for s in third["sessions"]] == ["s0"]
    assert first["count"] == third["count"] == 5


async def test_fetchallsessions_of_an_empty_app_is_an_empty_list(seller: Seller) -> None:
    body = await seller.ok("fetchallsessions")
    assert (body["sessions"], body["count"]) == ([], 0)


async def test_fetchallsessions_refuses_bad_paging_and_flags(seller: Seller) -> None:
    await seller.fails("fetchallsessions", 400, "number_out_of_range", page="0")
    await seller.fails("fetchallsessions", 400, "number_out_of_range", limit="1001")
    await seller.fails("fetchallsessions", 400, "invalid_number", limit="ten")
    await seller.fails("fetchallsessions", 400, "invalid_boolean", all="maybe")


async def test_fetchallsessions_shows_only_the_callers_application(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    other = await other_app(services, seller)
    await add_session(services, other.app_id, "theirs", created=clock.now())
    assert (await seller.ok("fetchallsessions"))["sessions"] == []


# --- countsessions -----------------------------------------------------------------------------


async def test_countsessions_counts_unexpired_and_validated_sessions(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await add_session(services, seller.app_id, "a", created=now, credential="alice", validated=1)
    await add_session(services, seller.app_id, "b", created=now, credential="bob", validated=1)
    await add_session(services, seller.app_id, "c", created=now)
    await add_session(services, seller.app_id, "d", created=now - 2 * HOUR, credential="old", validated=1)
    body = await seller.ok("countsessions")
    assert body == {"success": True, "message": "Successfully counted sessions", "count": 3, "validated": 2}


async def test_countsessions_of_an_empty_app_is_zero(seller: Seller) -> None:
    body = await seller.ok("countsessions")
    assert (body["count"], body["validated"]) == (0, 0)


# --- kill --------------------------------------------------------------------------------------


async def test_kill_ends_one_session(seller: Seller, services: Services, clock: MovableClock) -> None:
    await add_session(services, seller.app_id, "s1", created=clock.now())
    await add_session(services, seller.app_id, "s2", created=clock.now())
    body = await seller.ok("kill", sessid="s1")
    assert body["message"] == "Successfully killed session!"
    assert await session_ids(services, seller.app_id) == {"s2"}


async def test_kill_accepts_sessionid_as_the_parameter_name(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await add_session(services, seller.app_id, "s1", created=clock.now())
    await seller.ok("kill", sessionid="s1")
    assert await session_ids(services, seller.app_id) == set()


async def test_kill_refuses_an_unknown_or_foreign_session(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    other = await other_app(services, seller)
    await add_session(services, other.app_id, "theirs", created=clock.now())
    await seller.fails("kill", 404, "session_not_found", sessid="nope")
    await seller.fails("kill", 404, "session_not_found", sessid="theirs")
    assert await session_ids(services, other.app_id) == {"theirs"}
    await seller.fails("kill", 400, "missing_parameter")
    await seller.fails("kill", 400, "parameter_too_long", sessid="x" * 65)


# --- killall -----------------------------------------------------------------------------------


async def test_killall_ends_every_session_of_the_application_only(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    other = await other_app(services, seller)
    for name in ("a", "b", "c"):
        await add_session(services, seller.app_id, name, created=clock.now() - 2 * HOUR * (name == "c"))
    await add_session(services, other.app_id, "theirs", created=clock.now())
    body = await seller.ok("killall")
    assert body == {"success": True, "message": "Successfully killed all sessions!", "deleted": 3}
    assert await session_ids(services, seller.app_id) == set()
    assert await session_ids(services, other.app_id) == {"theirs"}
    assert (await seller.ok("killall"))["deleted"] == 0


# --- killbyip ----------------------------------------------------------------------------------


async def test_killbyip_ends_the_sessions_of_one_address(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await add_session(services, seller.app_id, "a", created=now, ip="198.51.100.7")
    await add_session(services, seller.app_id, "b", created=now, ip="198.51.100.7")
    await add_session(services, seller.app_id, "c", created=now, ip="198.51.100.8")
    body = await seller.ok("killbyip", ip="198.51.100.7")
    assert body == {"success": True, "message": "Successfully killed sessions by IP!", "deleted": 2}
    assert await session_ids(services, seller.app_id) == {"c"}
    assert (await seller.ok("killbyip", ip="198.51.100.7"))["deleted"] == 0


async def test_killbyip_compares_canonical_forms(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    now = clock.now()
    await add_session(services, seller.app_id, "v6", created=now, ip="2001:db8::1")
    await add_session(services, seller.app_id, "v4", created=now, ip="198.51.100.7")
    assert (await seller.ok("killbyip", ip="2001:DB8:0:0:0:0:0:1"))["deleted"] == 1
    assert (await seller.ok("killbyip", ip="::ffff:198.51.100.7"))["deleted"] == 1
    assert await session_ids(services, seller.app_id) == set()


async def test_killbyip_refuses_what_is_not_an_address(seller: Seller) -> None:
    await seller.fails("killbyip", 400, "invalid_ip", ip="not-an-ip")
    await seller.fails("killbyip", 400, "invalid_ip", ip="10.0.0.0/8")
    await seller.fails("killbyip", 400, "missing_parameter")
    await seller.fails("killbyip", 400, "parameter_too_long", ip="1" * 65)


# --- permissions -------------------------------------------------------------------------------


async def test_session_operations_need_the_sessions_area(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", permissions="licenses"))["sellerkey"]
    for type_ in ("fetchallsessions", "countsessions", "killall"):
        await seller.fails(type_, 403, "permission_denied", sellerkey=limited)
    allowed = (await seller.ok("addsellerkey", permissions="sessions"))["sellerkey"]
    assert (await seller.call("countsessions", sellerkey=allowed)).status_code == 200


async def test_ending_sessions_is_recorded_in_the_audit_log_without_whole_session_ids(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    session_id = "0123456789abcdef0123456789abcdef"
    await add_session(
        services, seller.app_id, session_id, created=clock.now(), credential="alice", validated=1
    )
    await add_session(services, seller.app_id, "other", created=clock.now(), ip="2001:db8::1")
    await seller.ok("kill", sessid=session_id)
    await seller.ok("killbyip", ip="2001:db8::1")
    await seller.ok("killall")
    logs = (await seller.ok("fetchauditlogs"))["logs"]
    assert [(e["action"], e["target"], e["before"], e["after"]) for e in reversed(logs)] == [
        ("kill", "session:01234567", {"credential": "alice", "ip": "198.51.100.7", "validated": 1}, None),
        ("killbyip", "sessions:ip:2001:db8::1", {"sessions": 1}, None),
        ("killall", "sessions:all", {"sessions": 0}, None),
    ]
    assert session_id not in str(logs)
