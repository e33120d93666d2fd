"""A worker's hint of the license keys it saw used (domain/usedkeys.py): on PostgreSQL a key seen
used skips the first use's statement and takes the plain read; a wrong hint changes no answer."""

from __future__ import annotations

from typing import Any

import pytest

from licensegate.domain.usedkeys import UsedKeys
from licensegate.services import Services
from licensegate.store import logins as login_store
from tests.helpers import Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


def test_the_set_is_bounded_and_holds_digests_only() -> None:
    used = UsedKeys(size=2)
    used.add(1, "KEY-A")
    used.add(1, "KEY-B")
    used.add(1, "KEY-B")  # once
    assert (1, "KEY-A") in used
    assert (1, "KEY-B") in used
    assert (2, "KEY-A") not in used  # another application's key of that text
    used.add(1, "KEY-C")  # the oldest goes
    assert (1, "KEY-A") not in used
    assert len(used) == 2
    assert all(len(digest) == 16 and b"KEY" not in digest for digest in used._seen)
    off = UsedKeys(size=0)
    off.add(1, "KEY-A")
    assert (1, "KEY-A") not in off


@pytest.fixture
def first_use_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys `store.logins.key_or_first_use` is called with."""
    calls: list[str] = []
    real = login_store.key_or_first_use

    async def counted(db: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["key"])
        return await real(db, **kwargs)

    monkeypatch.setattr(login_store, "key_or_first_use", counted)
    return calls


async def test_a_key_seen_used_takes_the_plain_read(
    services: Services, seller: Seller, first_use_statements: list[str]
) -> None:
    key = (await seller.ok("add", expiry=30, amount=1, level=1))["key"]
    first = client_of(seller)
    await first.init()
    await first.ok("license", key=key, hwid=HWID)  # its first use
    # Seen used once its first use made it so; SQLite, with one path, keeps no hint at all.
    assert ((seller.app_id, key) in services.used_keys) == (services.db.dialect == "postgresql")
    for _ in range(2):  # the program started again: a new session each time
        again = first.fresh()
        await again.init()
        body = await again.ok("license", key=key, hwid=HWID)
        assert body["info"]["username"] == key
    # On PostgreSQL the first use went through the one statement, the later logins did not.
    assert first_use_statements == ([key] if services.db.dialect == "postgresql" else [])
    assert len(services.used_keys) == (1 if services.db.dialect == "postgresql" else 0)


async def test_a_wrong_hint_still_redeems_the_key_once(
    services: Services, seller: Seller, first_use_statements: list[str]
) -> None:
    key = (await seller.ok("add", expiry=30, amount=1, level=1))["key"]
    services.used_keys.add(seller.app_id, key)  # seen "used", but it is not
    program = client_of(seller)
    await program.init()
    body = await program.ok("license", key=key, hwid=HWID)
    assert body["info"]["username"] == key
    assert first_use_statements.count(key) <= 1  # the plain path's first use, on PostgreSQL its statement
    users = await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE username = ?", key)
    assert users == 1
    other = program.fresh()
    await other.init()
    await other.ok("license", key=key, hwid=HWID)  # the same user logged in again
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE username = ?", key) == 1
    assert (seller.app_id, key) in services.used_keys
