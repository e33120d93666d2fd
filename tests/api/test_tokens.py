"""The token system: a token per license key and per user, made with them; `init` with token
validation on; the seller types that list, ban, unban, reset and delete tokens; on SQLite and
PostgreSQL, through the interface document's dialect and KeyAuth's."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


async def token_of(seller: Seller, assigned: str) -> dict[str, Any]:
    found = (await seller.ok("fetchalltokens", assigned=assigned))["tokens"]
    assert len(found) == 1, found
    token: dict[str, Any] = found[0]
    return token


async def test_keys_and_users_get_a_token_each(seller: Seller) -> None:
    keys = (await seller.ok("add", expiry="1", amount="3"))["keys"]
    await seller.ok("adduser", user="amy", expiry="1")
    listed = await seller.ok("fetchalltokens", tokentype="license")
    assert listed["count"] == 3
    assert sorted(t["assigned"] for t in listed["tokens"]) == sorted(keys)
    amy = await token_of(seller, "amy")
    assert (amy["type"], amy["banned"], amy["hash"], amy["status"]) == ("user", False, None, "Not Used")
    assert len(amy["token"]) == 32
    # A License Login's first use makes the key's user, with a token of its own.
    client = client_of(seller)
    await client.init()
    await client.ok("license", key=keys[0], hwid=HWID)
    assert (await seller.ok("fetchalltokens", tokentype="user"))["count"] == 2
    page = await seller.ok("fetchalltokens", limit="2", page="2")
    assert (page["count"], len(page["tokens"])) == (5, 2)


async def init_with(client: Client, **params: str) -> dict[str, Any]:
    response = await client.call("init", **params)
    body: dict[str, Any] = response.json()
    body["status"] = response.status_code
    return body


async def test_init_checks_the_token_when_validation_is_on(seller: Seller) -> None:
    await seller.ok("adduser", user="amy", expiry="1")
    token = (await token_of(seller, "amy"))["token"]
    client = client_of(seller)
    assert (await init_with(client))["success"] is True  # off: nothing asked
    await seller.ok("updatesettings", tokensystem="1")
    assert (await init_with(client))["error"] == "token_required"
    assert (await init_with(client, token=token))["error"] == "token_hash_required"
    unknown = await init_with(client, token="0" * 32, thash="abc")
    assert (unknown["status"], unknown["error"], unknown["message"]) == (
        403,
        "token_invalid",
        "Token Invalid",
    )
    assert (await init_with(client, token=token, thash="FILEHASH1"))["success"] is True  # binds
    assert (await token_of(seller, "amy"))["hash"] == "FILEHASH1"
    assert (await init_with(client, token=token, thash="FILEHASH1"))["success"] is True
    assert (await init_with(client, token=token, thash="OTHER"))["error"] == "token_hash_mismatch"
    await seller.ok("resettokenhash", token=token)
    assert (await init_with(client, token=token, thash="OTHER"))["success"] is True
    await seller.ok("bantoken", token=token, reason="chargeback")
    banned = await init_with(client, token=token, thash="OTHER")
    assert banned["error"] == "token_banned"
    assert "chargeback" in banned["message"]
    await seller.ok("unbantoken", token=token)
    assert (await init_with(client, token=token, thash="OTHER"))["success"] is True
    # A banned user bans its token too.
    await seller.ok("banuser", user="amy", reason="abuse")
    assert (await init_with(client, token=token, thash="OTHER"))["error"] == "token_banned"
    await seller.ok("deltoken", token=token)
    assert (await init_with(client, token=token, thash="OTHER"))["error"] == "token_invalid"


async def test_keyauth_dialects_refuse_with_200(seller: Seller) -> None:
    await seller.ok("updatesettings", tokensystem="1")
    response = await seller.http.post(
        "/api/1.3/",
        data={"type": "init", "ownerid": seller.ownerid, "name": seller.name, "token": "x", "thash": "y"},
    )
    assert (response.status_code, response.json()["message"]) == (200, "Token Invalid")


async def test_token_types_refuse_unknown_tokens_and_are_owner_scoped(seller: Seller) -> None:
    for type_ in ("unbantoken", "resettokenhash", "deltoken"):
        await seller.fails(type_, 404, "token_not_found", token="f" * 32)
    await seller.fails("bantoken", 404, "token_not_found", token="f" * 32, reason="x")
    await seller.fails("fetchalltokens", 400, "invalid_parameter", state="weird")
    limited = (await seller.ok("addsellerkey", permissions="licenses"))["sellerkey"]
    await seller.fails("fetchalltokens", 403, "permission_denied", sellerkey=limited)
