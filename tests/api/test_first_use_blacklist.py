"""Client API — the blacklist at a key's first use (on PostgreSQL asked inside the first use's one
statement, on SQLite before its transaction): a blacklisted client redeems nothing, and the
refusal comes before every other the first use could give."""

from __future__ import annotations

import pytest

from licensegate.services import Services
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.fixture
def app(seller: Seller) -> Client:
    return client_of(seller)


async def _fresh_key(seller: Seller, level: str = "1") -> str:
    key: str = (await seller.ok("add", expiry=30, level=level))["key"]
    return key


async def _unused(services: Services, key: str) -> bool:
    status = await services.db.fetch_value("SELECT status FROM license_keys WHERE key = ?", key)
    users = await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE username = ?", key)
    return bool(status == "unused" and users == 0)


async def test_a_blacklisted_hwid_redeems_nothing(app: Client, seller: Seller, services: Services) -> None:
    await seller.ok("black", hwid=HWID)
    key = await _fresh_key(seller)
    await app.init()
    body = await app.fails("license", 403, "blacklisted", key=key, hwid=HWID)
    assert body["message"] == "You've been blacklisted from our application"
    assert await _unused(services, key)
    await seller.ok("delblack", data=HWID, blacktype="hwid")
    await app.ok("license", key=key, hwid=HWID)
    assert not await _unused(services, key)


@pytest.mark.parametrize("listed", ["203.0.113.7", "203.0.113.0/24", "0.0.0.0/0"])
async def test_a_blacklisted_address_redeems_nothing_unless_whitelisted(
    app: Client, seller: Seller, services: Services, listed: str
) -> None:
    await seller.ok("black", ip=listed)
    key = await _fresh_key(seller)
    await app.init()
    await app.fails("license", 403, "blacklisted", key=key, hwid=HWID)
    assert await _unused(services, key)
    await seller.ok("addWhite", ip="203.0.113.0/28")  # a range holding the client's address
    await app.ok("license", key=key, hwid=HWID)
    assert not await _unused(services, key)


async def test_the_blacklist_refuses_before_a_level_without_subscription(app: Client, seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="7")
    key = await _fresh_key(seller, level="7")
    await seller.ok("delappsub", name="gold")
    await app.init()
    await app.fails("license", 403, "no_subscription_for_level", key=key, hwid=HWID)
    await seller.ok("black", hwid=HWID)
    await app.fails("license", 403, "blacklisted", key=key, hwid=HWID)


async def test_another_hwid_or_address_is_not_refused(app: Client, seller: Seller) -> None:
    await seller.ok("black", hwid="S-1-5-21-0000000000-0000000000-0000000000-1001")
    await seller.ok("black", ip="198.51.100.0/24")
    await app.init()
    await app.ok("license", key=await _fresh_key(seller), hwid=HWID)
