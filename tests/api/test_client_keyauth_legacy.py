"""KeyAuth's API 1.2 (HMAC) and legacy 1.0 (hex + AES) libraries, as implemented independently in
`tests/keyauth_clients.py` from the protocol reference, against licensegate on SQLite and
PostgreSQL: every answer they check verifies, failures come back in their form, and the plain 1.0
dialect on the same path is unaffected."""

from __future__ import annotations

import httpx
import pytest

from licensegate.domain.apps import CreatedApp, create_application
from licensegate.services import Services
from licensegate.signing import verify
from tests.helpers import Seller
from tests.keyauth_clients import Hmac12Client, Legacy10Client

pytestmark = pytest.mark.anyio
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.fixture
async def created(services: Services) -> CreatedApp:
    return await create_application(
        services.db, services.secrets, owner="o", name="app", now=services.clock.now()
    )


@pytest.fixture
def seller(created: CreatedApp, client: httpx.AsyncClient) -> Seller:
    return Seller(
        http=client, key=created.sellerkey, ownerid=created.ownerid, app_id=created.app_id, name="app"
    )


async def test_an_api_1_2_library_runs_with_every_answer_signed(
    created: CreatedApp, seller: Seller, client: httpx.AsyncClient
) -> None:
    key = (await seller.ok("add", expiry="1"))["key"]
    await seller.ok("addvar", name="motd", data="hello", authed="1")
    lib = Hmac12Client(client, created.ownerid, "app", created.secret)
    init = await lib.init(ver="1.0")
    assert init["success"] is True
    assert (await lib.call("var", varid="motd"))["success"] is False  # not logged in yet: signed too
    login = await lib.call("license", key=key, hwid=HWID)
    assert (login["success"], login["code"]) == (True, 68)
    assert login["info"]["createdate"].isdigit()
    assert (await lib.call("var", varid="motd"))["message"] == "hello"
    assert (await lib.call("check"))["success"] is True
    refused = await lib.call("license", key="nope", hwid=HWID)
    assert lib.last_response is not None
    assert (lib.last_response.status_code, refused["success"]) == (200, False)
    assert (await lib.call("logout"))["success"] is True


async def test_an_api_1_2_library_with_the_wrong_secret_sees_tampering(
    created: CreatedApp, client: httpx.AsyncClient
) -> None:
    lib = Hmac12Client(client, created.ownerid, "app", "cd" * 32)
    with pytest.raises(AssertionError, match="signature checksum failed"):
        await lib.init()


async def test_a_legacy_1_0_library_runs_encrypted(
    created: CreatedApp, seller: Seller, client: httpx.AsyncClient, services: Services
) -> None:
    key = (await seller.ok("add", expiry="1"))["key"]
    await seller.ok("addvar", name="motd", data="h\u00e9llo", authed="1")
    lib = Legacy10Client(client, created.ownerid, "app", created.secret)
    init = await lib.init(ver="1.0")
    assert init["success"] is True
    assert not lib.last_raw.startswith(b"{")  # the answer itself is encrypted
    login = await lib.call("license", key=key, hwid=HWID)
    assert (login["success"], login["info"]["username"]) == (True, key)
    assert (await lib.call("var", varid="motd"))["message"] == "h\u00e9llo"
    wrong = await lib.call("license", key=key, hwid="another-machine-00000000001")
    assert (wrong["success"], wrong["error"]) == (False, "hwid_mismatch")
    # Every answer is signed, encrypted ones included (over the bytes sent).
    assert lib.last_headers is not None
    stamp = lib.last_headers["x-signature-timestamp"]
    assert verify(created.public_key, lib.last_headers["x-signature-ed25519"], stamp.encode() + lib.last_raw)


async def test_a_legacy_1_0_library_with_the_wrong_secret_cannot_start(
    created: CreatedApp, client: httpx.AsyncClient
) -> None:
    lib = Legacy10Client(client, created.ownerid, "app", "ef" * 32)
    answer = await lib.init()
    assert answer["plain"] is True
    assert (answer["success"], answer["error"]) == (False, "invalid_encryption")


async def test_legacy_requests_for_unknown_applications_get_plain_answers(
    created: CreatedApp, client: httpx.AsyncClient
) -> None:
    lib = Legacy10Client(client, created.ownerid, "nope", created.secret)
    answer = await lib.init()
    assert (answer["plain"], answer["error"]) == (True, "unknown_application")


async def test_the_plain_dialect_is_untouched_by_legacy_detection(
    created: CreatedApp, client: httpx.AsyncClient
) -> None:
    base = {"ownerid": created.ownerid, "name": "app"}
    unknown = await client.post("/api/1.0/", params={**base, "type": "6e6f7065"})  # hex of "nope"
    assert (unknown.status_code, unknown.json()["error"]) == (400, "unknown_type")
    init = await client.post("/api/1.0/", params={**base, "type": "init"})
    assert init.json()["success"] is True
