"""Seller operations name an existing end user by the client API's rule for names (issue 10 item
17): the NFKC form (fullwidth `ｋｉｍ` is `kim`) and, where the application compares usernames
case-insensitively, any case. A name spelt exactly as stored still names that user first; a name
that names nobody (in the caller's scope) is refused exactly as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from licensegate.services import Services
from tests.helpers import Seller, client_of

pytestmark = pytest.mark.anyio

Spell = Callable[[str], str]


def fullwidth(name: str) -> str:
    return "".join(chr(ord(ch) - 0x21 + 0xFF01) for ch in name)


def mixed_case(name: str) -> str:
    return "".join(ch.upper() if i % 2 else ch for i, ch in enumerate(name))


# (the application ignores case, how the seller spells the name)
SPELLINGS = [
    pytest.param(True, str.upper, id="upper-case"),
    pytest.param(True, mixed_case, id="mixed-case"),
    pytest.param(True, lambda name: fullwidth(name.upper()), id="fullwidth-upper-case"),
    pytest.param(False, fullwidth, id="fullwidth"),
]


async def register(seller: Seller, username: str) -> str:
    """A user made by a client's `register` with a new key (password `pw`); returns the key."""
    key: str = (await seller.ok("add", expiry=1))["key"]
    client = client_of(seller)
    await client.init()
    await client.ok("register", username=username, key=key, **{"pass": "pw"})
    return key


def naming_calls(name: str, key: str) -> list[tuple[str, dict[str, Any]]]:
    """Every seller operation that names an existing user, in an order that succeeds in turn on
    a user with a password `pw`, a running `default` grant and an unused key `key` of level 1."""
    return [
        ("userexists", {"user": name}),
        ("verifyuser", {"user": name, "pass": "pw"}),
        ("userdata", {"user": name}),
        ("getkey", {"user": name}),
        ("addhwiduser", {"user": name, "hwid": "HW-1"}),
        ("resetuser", {"user": name}),
        ("setcooldown", {"user": name, "cooldown": 60}),
        ("editemail", {"user": name, "email": "kim@example.com"}),
        ("unlockuser", {"user": name}),
        ("banuser", {"user": name, "reason": "refund abuse"}),
        ("unbanuser", {"user": name}),
        ("extend", {"user": name, "sub": "default", "expiry": 1}),
        ("subtract", {"user": name, "sub": "default", "seconds": 60}),
        ("pauseuser", {"username": name}),
        ("unpauseuser", {"user": name}),
        ("usersubs", {"user": name}),
        ("assignkey", {"user": name, "key": key}),
        ("setvar", {"user": name, "var": "v", "data": "1"}),
        ("getvar", {"user": name, "var": "v"}),
        ("edituservar", {"user": name, "var": "v", "data": "2"}),
        ("fetchalluservars", {"user": name}),
        ("deluservar", {"username": name, "var": "v"}),
        ("muteuser", {"user": name, "time": 60}),
        ("unmuteuser", {"user": name}),
        ("resetpw", {"user": name, "passwd": "pw2"}),
        ("delsub", {"user": name, "sub": "default"}),
        ("editusername", {"currentUsername": name, "newUsername": "kimmy"}),
    ]


async def targets(services: Services, seller: Seller) -> set[str]:
    rows = await services.db.fetch_all(
        "SELECT target FROM audit_log WHERE app_id = ? AND target IS NOT NULL", seller.app_id
    )
    return {row["target"] for row in rows}


async def answer(seller: Seller, type_: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = await seller.call(type_, **params)
    body: dict[str, Any] = response.json()
    return response.status_code, body


@pytest.mark.parametrize(("case_insensitive", "spell"), SPELLINGS)
async def test_every_operation_naming_a_user_reaches_them_by_the_client_rule(
    seller: Seller, services: Services, case_insensitive: bool, spell: Spell
) -> None:
    key = await register(seller, "kim")
    if case_insensitive:
        await seller.ok("updatesettings", caseinsensitiveusernames=1)
    second = (await seller.ok("add", expiry=1))["key"]
    name = spell("kim")
    assert name != "kim"
    body = {type_: await seller.ok(type_, **params) for type_, params in naming_calls(name, second)}

    assert body["userexists"]["exists"] is True
    assert body["userdata"]["username"] == "kim"
    assert body["getkey"]["key"] == key
    assert body["addhwiduser"]["added"] == 1
    assert body["resetuser"]["removed"] == 1
    assert body["extend"]["updated"] == body["subtract"]["updated"] == 1
    assert body["pauseuser"]["paused"] == body["unpauseuser"]["unpaused"] == 1
    assert {grant["username"] for grant in body["usersubs"]["subscriptions"]} == {"kim"}
    assert body["getvar"]["response"] == "1"
    assert [(var["user"], var["data"]) for var in body["fetchalluservars"]["vars"]] == [("kim", "2")]
    assert body["delsub"]["deleted"] >= 1
    # The handlers saw the stored name: the audit log names the user as stored.
    found = await targets(services, seller)
    assert {"user:kim", "mute:kim"} <= found
    assert not any(name in target for target in found)

    await seller.ok("verifyuser", user="kimmy", **{"pass": "pw2"})  # resetpw and the rename took
    await seller.ok("deluser", user=spell("kimmy"))
    assert (await seller.ok("userexists", user="kimmy"))["exists"] is False


async def test_a_case_sensitive_application_refuses_another_case_as_before(seller: Seller) -> None:
    """`KIM` is not `kim` where case counts: every answer is the one for a name nobody has."""
    await register(seller, "kim")
    second = (await seller.ok("add", expiry=1))["key"]
    for (type_, asked), (_, nobody) in zip(
        [*naming_calls("KIM", second), ("deluser", {"user": "KIM"})],
        [*naming_calls("NOBODY", second), ("deluser", {"user": "NOBODY"})],
        strict=True,
    ):
        status, body = await answer(seller, type_, asked)
        expected_status, expected = await answer(seller, type_, nobody)
        expected["message"] = expected["message"].replace("NOBODY", "KIM")
        assert (status, body) == (expected_status, expected), type_
    data = await seller.ok("userdata", user="kim")
    assert (data["banned"], data["email"], data["hwids"]) == (None, None, [])
    assert (await seller.ok("usersubs", user="kim"))["count"] == 1


async def test_a_name_spelt_as_stored_names_that_user_first(seller: Seller, services: Services) -> None:
    """A row kept as a version before the normalisation stored it, beside a user of its NFKC form."""
    await seller.ok("adduser", user="placeholder", sub="default", expiry=1)
    await services.db.execute(
        "UPDATE users SET username = ?, username_key = ? WHERE username = 'placeholder'", "\uff41b", "\uff41b"
    )
    await seller.ok("adduser", user="ab", sub="default", expiry=1)
    await seller.ok("banuser", user="\uff41b")
    assert (await seller.ok("userdata", user="\uff41b"))["banned"] is not None
    assert (await seller.ok("userdata", user="ab"))["banned"] is None


async def test_all_still_means_every_user(seller: Seller) -> None:
    """Even beside a user named `All` where case does not count (it answers to `aLL`)."""
    await seller.ok("updatesettings", caseinsensitiveusernames=1)
    for name in ("All", "kim"):
        await seller.ok("adduser", user=name, sub="default", expiry=1)
    assert (await seller.ok("extend", user="all", sub="default", expiry=1))["updated"] == 2
    assert (await seller.ok("subtract", user="all", sub="default", seconds=60))["updated"] == 2
    assert (await seller.ok("setvar", user="all", var="v", data="1"))["updated"] == 2
    assert (await seller.ok("userdata", user="aLL"))["username"] == "All"
    assert (await seller.ok("extend", user="aLL", sub="default", expiry=1))["updated"] == 1


async def test_a_reseller_reaches_its_own_users_only_and_learns_nothing_of_others(seller: Seller) -> None:
    await seller.ok("updatesettings", caseinsensitiveusernames=1)
    res = await seller.ok("addAccount", role="Reseller", user="res", **{"pass": "pw"})
    await seller.ok("setbalance", username="res", day=5)
    reseller = Seller(seller.http, res["sellerkey"], seller.ownerid, seller.app_id, seller.name)
    await seller.ok("adduser", user="kim", sub="default", expiry=1)  # the owner's
    await reseller.ok("adduser", user="rob", sub="default", expiry=1)

    for type_ in ("banuser", "userdata", "deluser", "resetuser"):
        status, body = await answer(reseller, type_, {"user": "KIM"})
        expected_status, expected = await answer(reseller, type_, {"user": "NOBODY"})
        expected["message"] = expected["message"].replace("NOBODY", "KIM")
        assert (status, body) == (expected_status, expected), type_
        assert (status, body["error"]) == (404, "user_not_found")
        assert "kim" not in body["message"]
    assert (await reseller.ok("userexists", user="KIM"))["exists"] is False
    assert (await seller.ok("userdata", user="kim"))["banned"] is None

    await reseller.ok("banuser", user="ROB")
    assert (await reseller.ok("userdata", user="rOb"))["banned"] is not None
