"""Security keys on the account page are named when added and renamed later; a bad name is
refused next to its row, and one account cannot rename another's key."""

from __future__ import annotations

import re

import pytest

from licensegate.services import Services
from licensegate.store import passkeys as store
from tests.web.pages import Dashboard, make_owner, text_of

pytestmark = pytest.mark.anyio


async def add_key(services: Services, account_id: int, name: str, credential: str) -> int:
    passkey_id = await store.insert(
        services.db,
        account_id=account_id,
        credential_id=credential,
        public_key="pk",
        sign_count=0,
        transports="usb",
        name=name,
        now=services.clock.now(),
    )
    assert passkey_id is not None
    return passkey_id


async def names(services: Services) -> list[str]:
    return [row["name"] for row in await services.db.fetch_all("SELECT name FROM passkeys ORDER BY id")]


async def test_a_key_is_renamed_and_a_bad_name_refused_beside_it(services: Services, dash: Dashboard) -> None:
    alice = await make_owner(services)
    bob = await make_owner(services, "bob")
    await dash.sign_in("alice")  # before the keys exist: they would ask for the second step
    mine = await add_key(services, alice.id, "Security key", "cred-a")
    theirs = await add_key(services, bob.id, "Bob's key", "cred-b")
    page = await dash.get("/dashboard/account")
    assert f'id="rename-{mine}"' in page.text
    # Every form of the page (two-step forms included) has ids of its own, so each label names its field.
    ids = re.findall(r'\sid="([^"]+)"', page.text)
    assert sorted({i for i in ids if ids.count(i) > 1}) == []
    assert 'for="key-remove-password"' in page.text
    assert "Bob's key" not in text_of(page.text)
    done = await dash.post(
        "/dashboard/account/passkeys/rename", {"passkey": str(mine), "name": " YubiKey 5 "}
    )
    assert "The security key is now called YubiKey 5." in text_of(done.text)
    assert await names(services) == ["YubiKey 5", "Bob's key"]
    empty = await dash.post("/dashboard/account/passkeys/rename", {"passkey": str(mine), "name": "  "})
    assert empty.status_code == 400
    assert re.search(rf'id="rename-{mine}-error">The key name must not be empty.<', empty.text)
    long = await dash.post("/dashboard/account/passkeys/rename", {"passkey": str(mine), "name": "x" * 100})
    assert long.status_code == 400
    other = await dash.post(
        "/dashboard/account/passkeys/rename", {"passkey": str(theirs), "name": "Mine now"}
    )
    assert other.status_code == 400
    junk = await dash.post("/dashboard/account/passkeys/rename", {"passkey": "abc", "name": "Mine now"})
    assert junk.status_code == 400
    assert await names(services) == ["YubiKey 5", "Bob's key"]
