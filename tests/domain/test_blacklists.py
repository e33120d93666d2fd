"""The blacklist check the client API runs at every login and registration, and the canonical
IP forms it relies on."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from typing import Any

import pytest

from licensegate.domain import blacklists
from licensegate.domain.apps import create_application
from licensegate.domain.errors import Invalid
from licensegate.services import Services
from licensegate.store.database import Executor, Row

# --- canonical forms (no database) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("198.51.100.7", "198.51.100.7"),
        (" 198.51.100.7 ", "198.51.100.7"),
        ("2001:DB8:0:0::1", "2001:db8::1"),
        ("[2001:db8::1]", "2001:db8::1"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        ("::FFFF:c633:6407", "198.51.100.7"),
        ("fe80::1%eth0", "fe80::1"),
    ],
)
def test_parse_ip_gives_the_canonical_text(given: str, canonical: str) -> None:
    assert blacklists.parse_ip(given) == canonical
    assert blacklists.canonical_ip(given) == canonical


@pytest.mark.parametrize("given", ["", "1.2.3", "256.1.1.1", "01.2.3.4", "host.example", "10.0.0.0/8", "::g"])
def test_parse_ip_refuses_what_is_not_one_address(given: str) -> None:
    with pytest.raises(Invalid) as refused:
        blacklists.parse_ip(given)
    assert refused.value.error == "invalid_ip"
    assert blacklists.canonical_ip(given) is None


@pytest.mark.parametrize(
    ("given", "kind", "value"),
    [
        ("10.0.0.0/8", "cidr", "10.0.0.0/8"),
        ("10.1.2.3/8", "cidr", "10.0.0.0/8"),  # host bits set: normalised, not refused
        ("10.0.0.0/255.0.0.0", "cidr", "10.0.0.0/8"),
        ("2001:DB8::5/32", "cidr", "2001:db8::/32"),
        ("::ffff:10.0.0.0/104", "cidr", "10.0.0.0/8"),
        ("198.51.100.7/32", "ip", "198.51.100.7"),  # a one-address range is the address
        ("2001:db8::1/128", "ip", "2001:db8::1"),
        ("::ffff:198.51.100.7", "ip", "198.51.100.7"),
        ("0.0.0.0/0", "cidr", "0.0.0.0/0"),
    ],
)
def test_parse_ip_or_range_normalises(given: str, kind: str, value: str) -> None:
    assert blacklists.parse_ip_or_range(given) == blacklists.IpEntry(kind, value)


@pytest.mark.parametrize("given", ["10.0.0.0/33", "10.0.0/8", "2001:db8::/129", "x/8", "/8", "1.2.3.4/-1"])
def test_parse_ip_or_range_refuses_a_bad_range(given: str) -> None:
    with pytest.raises(Invalid) as refused:
        blacklists.parse_ip_or_range(given)
    assert refused.value.error == "invalid_ip"


@pytest.mark.parametrize("ip", ["10.1.2.3", "0.0.0.0", "255.255.255.255", "2001:db8::1", "::1", "ffff::ffff"])
def test_containing_ranges_are_the_canonical_networks_of_every_shorter_prefix(ip: str) -> None:
    address = ipaddress.ip_address(ip)
    expected = tuple(
        str(ipaddress.ip_network((ip, prefix), strict=False)) for prefix in range(address.max_prefixlen)
    )
    assert blacklists.containing_ranges(ip) == expected


# --- the check, on both databases --------------------------------------------------------------


class CountingExecutor:
    """Passes every statement through to the database and remembers it."""

    def __init__(self, db: Executor) -> None:
        self.db = db
        self.dialect = db.dialect
        self.statements: list[tuple[str, tuple[Any, ...]]] = []

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        self.statements.append((sql, args))
        return await self.db.fetch_one(sql, *args)

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        self.statements.append((sql, args))
        return await self.db.fetch_all(sql, *args)

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        self.statements.append((sql, args))
        return await self.db.fetch_value(sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        self.statements.append((sql, args))
        return await self.db.execute(sql, *args)

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.statements.append((sql, ()))
        await self.db.execute_many(sql, rows)

    async def execute_long(self, sql: str, *args: Any) -> int:
        self.statements.append((sql, args))
        return await self.db.execute_long(sql, *args)


async def new_app(services: Services, name: str = "app") -> int:
    created = await create_application(services.db, services.secrets, owner=f"owner-{name}", name=name, now=1)
    return created.app_id


async def black(services: Services, app_id: int, *, ip: str | None = None, hwid: str | None = None) -> None:
    await blacklists.add(services.db, app_id, ip=ip, hwid=hwid, reason=None, now=1, added_by="test")


async def white(services: Services, app_id: int, ip: str) -> None:
    await blacklists.add_white(services.db, app_id, ip, 1)


async def check(
    services: Services, app_id: int, *, hwids: Sequence[str] = (), ip: str | None = None
) -> str | None:
    counting = CountingExecutor(services.db)
    result = await blacklists.blocked(counting, app_id, hwids=hwids, ip=ip)
    assert len(counting.statements) <= 3
    return result


@pytest.mark.anyio
async def test_nothing_blacklisted_blocks_nothing(services: Services) -> None:
    app = await new_app(services)
    assert await check(services, app, hwids=["H1"], ip="198.51.100.7") is None


@pytest.mark.anyio
async def test_a_blacklisted_hwid_blocks_among_several(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, hwid="H2")
    assert await check(services, app, hwids=["H1", "H2"], ip="198.51.100.7") == "hwid"
    assert await check(services, app, hwids=["H1"], ip="198.51.100.7") is None
    assert await check(services, app, hwids=["h2"]) is None  # exact, case-sensitive match only
    assert await check(services, app, hwids=["H"]) is None  # never a substring match


@pytest.mark.anyio
async def test_a_blacklisted_ipv4_address_blocks(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="198.51.100.7")
    assert await check(services, app, hwids=["H1"], ip="198.51.100.7") == "ip"
    assert await check(services, app, ip="198.51.100.8") is None
    assert await blacklists.is_blacklisted_ip(services.db, app, "198.51.100.7")


@pytest.mark.anyio
async def test_a_blacklisted_ipv6_address_blocks_whatever_its_spelling(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="2001:0DB8:0000::0001")
    assert await check(services, app, ip="2001:db8::1") == "ip"
    assert await check(services, app, ip="2001:DB8:0:0:0:0:0:1") == "ip"
    assert await check(services, app, ip="2001:db8::2") is None


@pytest.mark.anyio
async def test_an_ipv4_mapped_ipv6_address_counts_as_ipv4(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="::ffff:198.51.100.7")
    assert await check(services, app, ip="198.51.100.7") == "ip"
    assert await check(services, app, ip="::ffff:198.51.100.7") == "ip"
    await black(services, app, ip="10.0.0.0/8")
    assert await check(services, app, ip="::ffff:10.20.30.40") == "ip"


@pytest.mark.anyio
async def test_an_ipv4_range_blocks_its_addresses_only(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="10.1.2.3/16")  # stored as 10.1.0.0/16
    assert await check(services, app, ip="10.1.0.0") == "ip"
    assert await check(services, app, ip="10.1.255.255") == "ip"
    assert await check(services, app, ip="10.2.0.1") is None
    assert await check(services, app, ip="2001:db8::1") is None


@pytest.mark.anyio
async def test_an_ipv6_range_blocks_its_addresses_only(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="2001:db8:abcd::/48")
    assert await check(services, app, ip="2001:db8:abcd:1::99") == "ip"
    assert await check(services, app, ip="2001:db8:abce::1") is None
    assert await check(services, app, ip="10.0.0.1") is None


@pytest.mark.anyio
async def test_the_whole_address_space_range_blocks_everyone(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="0.0.0.0/0")
    assert await check(services, app, ip="203.0.113.1") == "ip"
    assert await check(services, app, ip="::1") is None  # an IPv4 range never holds IPv6


@pytest.mark.anyio
async def test_a_whitelisted_address_bypasses_address_and_range_entries(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="198.51.100.7")
    await black(services, app, ip="10.0.0.0/8")
    await white(services, app, "198.51.100.7")
    await white(services, app, "::ffff:10.0.0.5")
    assert await check(services, app, ip="198.51.100.7") is None
    assert await check(services, app, ip="10.0.0.5") is None
    assert await check(services, app, ip="10.0.0.6") == "ip"
    assert await blacklists.is_whitelisted(services.db, app, "10.0.0.5")


@pytest.mark.anyio
async def test_a_whitelisted_range_bypasses_ip_entries_inside_it(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, ip="10.0.0.0/8")
    await black(services, app, ip="2001:db8::1")
    await white(services, app, "10.5.0.0/16")
    await white(services, app, "2001:db8::/64")
    assert await check(services, app, ip="10.5.1.1") is None
    assert await check(services, app, ip="10.6.1.1") == "ip"
    assert await check(services, app, ip="2001:db8::1") is None


@pytest.mark.anyio
async def test_a_whitelisted_ip_with_a_blacklisted_hwid_is_still_blocked(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, hwid="H1")
    await black(services, app, ip="198.51.100.7")
    await white(services, app, "198.51.100.7")
    assert await check(services, app, hwids=["H1"], ip="198.51.100.7") == "hwid"
    assert await blacklists.is_blacklisted_hwid(services.db, app, "H1")


@pytest.mark.anyio
async def test_entries_of_another_application_do_not_apply(services: Services) -> None:
    app = await new_app(services, "one")
    other = await new_app(services, "two")
    await black(services, other, hwid="H1")
    await black(services, other, ip="10.0.0.0/8")
    await black(services, other, ip="198.51.100.7")
    assert await check(services, app, hwids=["H1"], ip="10.0.0.1") is None
    assert await check(services, app, ip="198.51.100.7") is None


@pytest.mark.anyio
async def test_an_unparseable_ip_is_ignored_and_nothing_to_check_costs_no_query(services: Services) -> None:
    app = await new_app(services)
    await black(services, app, hwid="H1")
    assert await check(services, app, hwids=["H1"], ip="not-an-ip") == "hwid"
    counting = CountingExecutor(services.db)
    assert await blacklists.blocked(counting, app, hwids=["", ""], ip="nonsense") is None
    assert await blacklists.blocked(counting, app, hwids=[], ip=None) is None
    assert counting.statements == []


@pytest.mark.anyio
async def test_the_check_uses_the_indexes_and_at_most_two_queries(services: Services) -> None:
    """With many exact entries, every statement of the check is an index search, never a scan
    (the plan is read on SQLite; PostgreSQL plans small tables with scans either way)."""
    app = await new_app(services)
    await services.db.execute_many(
        "INSERT INTO blacklist (app_id, kind, value, created_at) VALUES (?, ?, ?, ?)",
        [(app, "hwid", f"HW-{n}", 1) for n in range(3000)]
        + [(app, "ip", f"10.9.{n // 250}.{n % 250}", 1) for n in range(3000)],
    )
    await black(services, app, ip="10.0.0.0/8")
    await white(services, app, "10.9.0.0/16")
    counting = CountingExecutor(services.db)
    assert await blacklists.blocked(counting, app, hwids=["HW-x", "HW-y"], ip="10.9.1.1") is None
    assert len(counting.statements) == 2
    assert await blacklists.blocked(counting, app, hwids=["HW-7"], ip="2001:db8::1") == "hwid"
    assert len(counting.statements) == 3
    if services.db.dialect != "sqlite":
        return
    for sql, args in counting.statements:
        plan = await services.db.fetch_all(f"EXPLAIN QUERY PLAN {sql}", *args)
        details = [row["detail"] for row in plan]
        assert any(d.startswith("SEARCH") for d in details), details
        assert not any(d.startswith("SCAN") for d in details), details
