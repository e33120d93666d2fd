"""KeyAuth's API 1.3 (Ed25519), 1.2 (HMAC) and legacy 1.0 (hex + AES) libraries, as implemented
independently in `tests/keyauth_clients.py` from the protocol reference, against licensegate on
SQLite and PostgreSQL: every answer they check verifies, failures come back in their form (a
mistyped ownerid or name included), and the plain 1.0 dialect on the same path is unaffected."""

from __future__ import annotations

import httpx
import pytest

from licensegate.domain.apps import CreatedApp, create_application
from licensegate.services import Services
from licensegate.signing import verify
from tests.helpers import Seller, seller_of
from tests.keyauth_clients import Ed25519Client13, Hmac12Client, Legacy10Client, LibraryExit

pytestmark = pytest.mark.anyio
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.fixture
def seller(created: CreatedApp, client: httpx.AsyncClient) -> Seller:
    return seller_of(created, client)


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


async def test_legacy_requests_for_unknown_applications_are_what_the_libraries_call_so(
    created: CreatedApp, client: httpx.AsyncClient
) -> None:
    lib = Legacy10Client(client, created.ownerid, "nope", created.secret)
    with pytest.raises(LibraryExit, match=r"(?i)the application doesn't exist"):
        await lib.init()


async def test_a_legacy_1_0_library_reads_blacklists_dates_and_chat_as_keyauth_wrote_them(
    created: CreatedApp, seller: Seller, client: httpx.AsyncClient
) -> None:
    key = (await seller.ok("add", expiry="1"))["key"]
    await seller.ok("addchannel", name="general", delay="0")
    lib = Legacy10Client(client, created.ownerid, "app", created.secret)
    await lib.init(ver="1.0")
    # On a clean machine `success` is false: the 1.0 libraries read success as "blacklisted".
    clean = await lib.call("checkblacklist", hwid=HWID)
    assert (clean["success"], clean["blacklisted"]) == (False, False)
    login = await lib.call("license", key=key, hwid=HWID)
    assert login["info"]["createdate"].isdigit()
    assert login["info"]["lastlogin"].isdigit()
    assert (await lib.call("chatsend", channel="general", message="hi"))["success"] is True
    fetched = await lib.call("chatget", channel="general")
    assert (fetched["success"], [m["message"] for m in fetched["messages"]]) == (True, ["hi"])
    await seller.ok("black", hwid=HWID)
    assert (await lib.call("checkblacklist", hwid=HWID))["success"] is True


@pytest.mark.parametrize("typo", ["name", "ownerid"])
async def test_a_mistyped_application_is_reported_as_not_existing_by_1_3_and_1_2_libraries(
    created: CreatedApp, client: httpx.AsyncClient, services: Services, typo: str
) -> None:
    # The answer is signed with the key (and 1.2's HMAC with the secret) of the application the
    # program most likely meant, the only one it holds, so the library reads it.
    ownerid = created.ownerid if typo == "name" else created.ownerid[:-1] + "#"
    name = "ap" if typo == "name" else "app"
    await create_application(services.db, services.secrets, owner="p", name="other", now=0)
    ed = Ed25519Client13(client, ownerid, name, created.public_key)
    with pytest.raises(LibraryExit, match=r"(?i)the application doesn't exist"):
        await ed.init(ver="1.0")
    hm = Hmac12Client(client, ownerid, name, created.secret)
    with pytest.raises(LibraryExit, match=r"(?i)the application doesn't exist"):
        await hm.start(ver="1.0")


async def test_an_unrecognisable_application_is_signed_by_the_deployment(
    created: CreatedApp, client: httpx.AsyncClient, services: Services
) -> None:
    # Nothing near it: the deployment's key signs; a 1.2 library still finds its header and
    # reports a failed check (showing the answer) instead of crashing.
    deployment = (await services.signers.deployment(services.db, 0)).public_key
    ed = Ed25519Client13(client, "ZZZZZZZZZZ", "nothing-like-it", deployment)
    with pytest.raises(LibraryExit, match=r"(?i)the application doesn't exist"):
        await ed.init()
    hm = Hmac12Client(client, "ZZZZZZZZZZ", "nothing-like-it", created.secret)
    with pytest.raises(LibraryExit, match="Signature checksum failed"):
        await hm.start()


async def test_the_official_1_3_library_runs(
    created: CreatedApp, seller: Seller, client: httpx.AsyncClient
) -> None:
    key = (await seller.ok("add", expiry="1"))["key"]
    lib = Ed25519Client13(client, created.ownerid, "app", created.public_key)
    await lib.init(ver="1.0")
    login = await lib.json("license", key=key, hwid=HWID)
    assert (login["success"], login["code"], login["info"]["createdate"].isdigit()) == (True, 68, True)
    assert (await lib.json("checkblacklist", hwid=HWID))["success"] is False


async def test_the_plain_dialect_is_untouched_by_legacy_detection(
    created: CreatedApp, client: httpx.AsyncClient
) -> None:
    base = {"ownerid": created.ownerid, "name": "app"}
    unknown = await client.post("/api/1.0/", params={**base, "type": "6e6f7065"})  # hex of "nope"
    assert (unknown.status_code, unknown.json()["error"]) == (400, "unknown_type")
    init = await client.post("/api/1.0/", params={**base, "type": "init"})
    assert init.json()["success"] is True
