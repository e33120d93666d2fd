"""Seller API — Users group, over HTTP."""

from __future__ import annotations

import re
from typing import Any

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import chat, users
from licensegate.domain.permissions import Scope
from licensegate.services import Services
from tests.helpers import Seller, client_of, user_id_of

pytestmark = pytest.mark.anyio

DAY = 86400


# --- helpers -----------------------------------------------------------------------------------


async def user_id(services: Services, seller: Seller, username: str) -> int:
    return await user_id_of(services, seller.app_id, username)


async def grants(services: Services, seller: Seller, username: str) -> list[dict[str, Any]]:
    """The user's grants, oldest first: (subscription name, expires_at, paused_at)."""
    return await services.db.fetch_all(
        "SELECT s.name, us.expires_at, us.paused_at FROM user_subscriptions us "
        "JOIN subscriptions s ON s.id = us.subscription_id WHERE us.user_id = ? ORDER BY us.id",
        await user_id(services, seller, username),
    )


async def expiries(services: Services, seller: Seller, username: str) -> list[int]:
    return [g["expires_at"] for g in await grants(services, seller, username)]


async def add_second_long_grant(services: Services, seller: Seller, username: str, sub: str) -> None:
    """A new grant of `sub` one second long (the user holds no running grant of it)."""
    now = services.clock.now()
    await users.extend(services.db, Scope(seller.app_id), username, sub, 1 / DAY, active_only=False, now=now)


async def set_last_ip(services: Services, seller: Seller, username: str, ip: str) -> None:
    # Raw: only a client login writes the last address, and this suite's client has one address.
    await services.db.execute(
        "UPDATE users SET last_ip = ? WHERE app_id = ? AND username = ?", ip, seller.app_id, username
    )


async def blacklist(services: Services, seller: Seller) -> set[tuple[str, str]]:
    rows = await services.db.fetch_all("SELECT kind, value FROM blacklist WHERE app_id = ?", seller.app_id)
    return {(row["kind"], row["value"]) for row in rows}


# --- adduser -----------------------------------------------------------------------------------


async def test_adduser_creates_the_user_with_one_grant(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    body = await seller.ok("adduser", user="alice", sub="default", expiry="2", email="A@Example.com")
    assert body["message"] == "Successfully created user!"
    assert body["expires_at"] == clock.now() + 2 * DAY
    assert [(g["name"], g["expires_at"]) for g in await grants(services, seller, "alice")] == [
        ("default", clock.now() + 2 * DAY)
    ]
    row = await services.db.fetch_one(
        "SELECT email, email_lower, password_hash, hwid_lock, created_by, created_at FROM users "
        "WHERE app_id = ? AND username = ?",
        seller.app_id,
        "alice",
    )
    assert row == {
        "email": "A@Example.com",
        "email_lower": "a@example.com",
        "password_hash": None,
        "hwid_lock": 1,
        "created_by": "SellerAPI",
        "created_at": clock.now(),
    }


async def test_adduser_takes_fractional_days_and_defaults_to_the_default_subscription(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("adduser", user="bob", expiry="0.5", hwidAffected="0")
    assert [(g["name"], g["expires_at"]) for g in await grants(services, seller, "bob")] == [
        ("default", clock.now() + DAY // 2)
    ]
    lock = await services.db.fetch_value("SELECT hwid_lock FROM users WHERE username = ?", "bob")
    assert lock == 0


async def test_adduser_stores_an_argon2id_hash_of_the_unstripped_password(
    seller: Seller, services: Services
) -> None:
    await seller.ok("adduser", user="carol", expiry="1", **{"pass": " secret "})
    stored = await services.db.fetch_value("SELECT password_hash FROM users WHERE username = ?", "carol")
    assert stored.startswith("$argon2id$")
    await seller.ok("verifyuser", user="carol", **{"pass": " secret "})
    await seller.fails("verifyuser", 403, "password_mismatch", user="carol", **{"pass": "secret"})


async def test_adduser_refuses_the_reserved_name_all(seller: Seller) -> None:
    await seller.fails("adduser", 400, "username_not_allowed", user="all", expiry="1")
    await seller.fails("adduser", 400, "username_not_allowed", user="ALL", expiry="1")


async def test_adduser_refuses_an_existing_name_and_an_unknown_subscription(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.fails("adduser", 409, "user_exists", user="alice", expiry="1")
    await seller.fails("adduser", 404, "subscription_not_found", user="dave", sub="gold", expiry="1")


async def test_adduser_validates_its_parameters(seller: Seller) -> None:
    await seller.fails("adduser", 400, "missing_parameter", user="eve")
    await seller.fails("adduser", 400, "missing_parameter", expiry="1")
    await seller.fails("adduser", 400, "invalid_expiry", user="eve", expiry="0")
    await seller.fails("adduser", 400, "invalid_expiry", user="eve", expiry="-3")
    await seller.fails("adduser", 400, "invalid_number", user="eve", expiry="soon")
    await seller.fails("adduser", 400, "parameter_too_long", user="e" * 65, expiry="1")
    await seller.fails("adduser", 400, "invalid_email", user="eve", expiry="1", email="no-at-sign")
    await seller.fails("adduser", 400, "invalid_username", user="e\nve", expiry="1")
    await seller.fails("adduser", 400, "invalid_boolean", user="eve", expiry="1", hwidAffected="maybe")


# --- addhwiduser, resetuser, resetalluser, setcooldown -----------------------------------------


async def test_addhwiduser_adds_once_and_says_so(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    first = await seller.ok("addhwiduser", user="alice", hwid="AAAA-1111")
    assert (first["message"], first["added"]) == ("Added HWID", 1)
    assert (await seller.ok("addhwiduser", user="alice", hwid="AAAA-1111"))["added"] == 0
    await seller.ok("addhwiduser", user="alice", hwid="BBBB-2222")
    assert (await seller.ok("userdata", user="alice"))["hwids"] == ["AAAA-1111", "BBBB-2222"]


async def test_addhwiduser_refusals(seller: Seller) -> None:
    await seller.fails("addhwiduser", 404, "user_not_found", user="ghost", hwid="X")
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.fails("addhwiduser", 400, "missing_parameter", user="alice")
    await seller.fails("addhwiduser", 400, "parameter_too_long", user="alice", hwid="h" * 257)


async def test_resetuser_removes_every_hwid_and_records_the_reset(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("addhwiduser", user="alice", hwid="A")
    await seller.ok("addhwiduser", user="alice", hwid="B")
    body = await seller.ok("resetuser", user="alice")
    assert (body["message"], body["removed"]) == ("Successfully reset user!", 2)
    assert (await seller.ok("userdata", user="alice"))["hwids"] == []
    reset_at = await services.db.fetch_value("SELECT hwid_reset_at FROM users WHERE username = ?", "alice")
    assert reset_at == clock.now()
    await seller.fails("resetuser", 404, "user_not_found", user="ghost")


async def test_resetalluser_resets_every_user_that_held_hwids(seller: Seller) -> None:
    for name in ("a", "b", "c"):
        await seller.ok("adduser", user=name, expiry="1")
    await seller.ok("addhwiduser", user="a", hwid="H1")
    await seller.ok("addhwiduser", user="a", hwid="H2")
    await seller.ok("addhwiduser", user="b", hwid="H3")
    body = await seller.ok("resetalluser")
    assert (body["message"], body["updated"]) == ("Successfully reset all users!", 2)
    users = (await seller.ok("fetchallusers"))["users"]
    assert [u["hwids"] for u in users] == [[], [], []]
    assert (await seller.ok("resetalluser"))["updated"] == 0


async def test_setcooldown_overrides_the_users_reset_cooldown(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    assert (await seller.ok("userdata", user="alice"))["cooldown"] is None
    body = await seller.ok("setcooldown", user="alice", cooldown="3600")
    assert body["message"] == "Cooldown set successfully!"
    assert (await seller.ok("userdata", user="alice"))["cooldown"] == 3600
    await seller.ok("sethwidcool", user="alice", cooldown="0")  # the Telegram bot's name for it
    assert (await seller.ok("userdata", user="alice"))["cooldown"] == 0
    await seller.fails("setcooldown", 400, "number_out_of_range", user="alice", cooldown="-1")
    await seller.fails("setcooldown", 400, "invalid_number", user="alice", cooldown="1.5")
    await seller.fails("setcooldown", 404, "user_not_found", user="ghost", cooldown="10")


# --- deleting ----------------------------------------------------------------------------------


async def test_deluser_deletes_the_user_and_their_grants(seller: Seller, services: Services) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    uid = await user_id(services, seller, "alice")
    body = await seller.ok("deluser", user="alice")
    assert body["message"] == "Successfully deleted user!"
    assert (await seller.ok("userexists", user="alice"))["exists"] is False
    left = await services.db.fetch_value("SELECT COUNT(*) FROM user_subscriptions WHERE user_id = ?", uid)
    assert left == 0
    await seller.fails("deluser", 404, "user_not_found", user="alice")


async def test_delallusers_deletes_every_user_and_counts_them(seller: Seller) -> None:
    for name in ("a", "b", "c"):
        await seller.ok("adduser", user=name, expiry="1")
    body = await seller.ok("delallusers")
    assert (body["message"], body["deleted"]) == ("Successfully deleted all users!", 3)
    assert (await seller.ok("fetchallusers"))["count"] == 0
    assert (await seller.ok("delallusers"))["deleted"] == 0


async def test_delallusers_leaves_other_applications_alone(seller: Seller, services: Services) -> None:
    from tests.helpers import create_seller

    other = await create_seller(services, seller.http, owner="other", name="other-app")
    await other.ok("adduser", user="alice", expiry="1")
    await seller.ok("adduser", user="alice", expiry="1")
    assert (await seller.ok("delallusers"))["deleted"] == 1
    assert (await other.ok("userexists", user="alice"))["exists"] is True


async def test_delexpusers_keeps_running_and_paused_users(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("adduser", user="running", expiry="1")
    await seller.ok("adduser", user="expired", expiry="1")
    await seller.ok("adduser", user="paused", expiry="1")
    await seller.ok("adduser", user="nogrant", expiry="1")
    await seller.ok("delsub", user="nogrant", sub="default")
    await seller.ok("adduser", user="subpaused", sub="gold", expiry="1")
    await seller.ok("pauseuser", username="paused")
    await seller.ok("pausesub", subscription="gold")
    clock.advance(DAY // 2)
    await seller.ok("subtract", user="expired", sub="default", seconds=str(DAY))
    await seller.ok("extend", user="running", sub="default", expiry="1")
    clock.advance(DAY)  # everyone's wall-clock expiry has passed, except `running`
    body = await seller.ok("delexpusers")
    assert (body["message"], body["deleted"]) == ("Successfully deleted expired users!", 2)
    names = (await seller.ok("fetchallusernames"))["usernames"]
    assert names == ["running", "paused", "subpaused"]
    assert (await seller.ok("delexpusers"))["deleted"] == 0


# --- listing -----------------------------------------------------------------------------------


async def test_fetchallusers_lists_users_without_secrets(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("adduser", user="alice", expiry="1", email="a@example.com", **{"pass": "pw"})
    await seller.ok("adduser", user="bob", expiry="1")
    await seller.ok("addhwiduser", user="alice", hwid="H1")
    program = client_of(seller)
    await program.init()
    await program.ok("login", username="alice", hwid="H1", **{"pass": "pw"})
    await set_last_ip(services, seller, "alice", "198.51.100.4")
    await seller.ok("banuser", user="bob", reason="chargeback")
    body = await seller.ok("fetchallusers")
    assert body["message"] == "Successfully Retrieved Users"
    assert body["count"] == 2
    alice, bob = body["users"]
    assert set(alice) == {
        "id",
        "username",
        "email",
        "hwids",
        "ip",
        "createdate",
        "lastlogin",
        "banned",
        "created_by",
    }
    assert re.fullmatch(r"\d+", alice["id"])
    assert alice["username"] == "alice"
    assert alice["email"] == "a@example.com"
    assert alice["hwids"] == ["H1"]
    assert alice["ip"] == "198.51.100.4"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", alice["createdate"])
    assert alice["lastlogin"] == str(clock.now())
    assert alice["banned"] is None
    assert alice["created_by"] == "SellerAPI"
    assert (bob["username"], bob["banned"], bob["lastlogin"], bob["ip"]) == ("bob", "chargeback", None, None)
    assert "argon2" not in str(body)


async def test_fetchallusers_pages_in_id_order_and_counts_all(seller: Seller) -> None:
    for n in range(5):
        await seller.ok("adduser", user=f"user{n}", expiry="1")
        await seller.ok("addhwiduser", user=f"user{n}", hwid=f"H{n}")
    page2 = await seller.ok("fetchallusers", page="2", limit="2")
    assert page2["count"] == 5
    assert [(u["username"], u["hwids"]) for u in page2["users"]] == [("user2", ["H2"]), ("user3", ["H3"])]
    beyond = await seller.ok("fetchallusers", page="4", limit="2")
    assert (beyond["users"], beyond["count"]) == ([], 5)
    await seller.fails("fetchallusers", 400, "number_out_of_range", limit="0")
    await seller.fails("fetchallusers", 400, "number_out_of_range", page="0")


async def test_fetchallusers_is_empty_not_an_error_without_users(seller: Seller) -> None:
    body = await seller.ok("fetchallusers")
    assert (body["users"], body["count"]) == ([], 0)


async def test_fetchallusers_and_fetchallusernames_as_text(seller: Seller) -> None:
    for name in ("alice", "bob", "carol"):
        await seller.ok("adduser", user=name, expiry="1")
    response = await seller.call("fetchallusers", format="text")
    assert response.status_code == 200
    assert response.text == "alice\nbob\ncarol"
    response = await seller.call("fetchallusernames", format="text", limit="2")
    assert response.text == "alice\nbob"


async def test_fetchallusernames_lists_strings(seller: Seller) -> None:
    for name in ("alice", "bob", "carol"):
        await seller.ok("adduser", user=name, expiry="1")
    body = await seller.ok("fetchallusernames")
    assert body["message"] == "Successfully Retrieved Usernames"
    assert (body["usernames"], body["count"]) == (["alice", "bob", "carol"], 3)
    page = await seller.ok("fetchallusernames", page="2", limit="2")
    assert (page["usernames"], page["count"]) == (["carol"], 3)


# --- verifyuser, userexists, userdata ----------------------------------------------------------


async def test_verifyuser_without_password_checks_existence(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    body = await seller.ok("verifyuser", user="alice")
    assert body["message"] == "User Successfully Verified"
    await seller.fails("verifyuser", 404, "user_not_found", user="ghost")
    await seller.fails("verifyuser", 404, "user_not_found", user="ghost", **{"pass": "x"})


async def test_verifyuser_checks_the_password(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1", **{"pass": "right"})
    await seller.ok("adduser", user="bob", expiry="1")
    await seller.ok("verifyuser", user="alice", **{"pass": "right"})
    await seller.fails("verifyuser", 403, "password_mismatch", user="alice", **{"pass": "wrong"})
    await seller.fails("verifyuser", 403, "password_not_set", user="bob", **{"pass": "anything"})


async def test_userexists_always_answers(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    assert (await seller.ok("userexists", user="alice"))["exists"] is True
    body = await seller.ok("userexists", user="ghost")
    assert body["exists"] is False
    assert body["message"]
    await seller.fails("userexists", 400, "missing_parameter")


async def test_userdata_shows_running_subscriptions_only(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("adduser", user="alice", expiry="2", email="a@example.com", **{"pass": "pw"})
    await add_second_long_grant(services, seller, "alice", "gold")  # over before userdata is asked
    await set_last_ip(services, seller, "alice", "198.51.100.9")
    clock.advance(100)
    body = await seller.ok("userdata", user="alice")
    assert body["subscriptions"] == [
        {"subscription": "default", "expiry": str(clock.now() - 100 + 2 * DAY), "timeleft": 2 * DAY - 100}
    ]
    assert body["username"] == "alice"
    assert body["email"] == "a@example.com"
    assert body["ip"] == "198.51.100.9"
    assert body["hwids"] == []
    assert body["banned"] is None
    assert body["lastlogin"] is None
    assert body["hwid_lock"] == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", body["createdate"])
    assert "password" not in str(body)
    assert "argon2" not in str(body)
    await seller.ok("pauseuser", username="alice")
    assert (await seller.ok("getuserdata", user="alice"))["subscriptions"] == []
    await seller.fails("userdata", 404, "user_not_found", user="ghost")


# --- banuser, unbanuser ------------------------------------------------------------------------


async def test_banuser_blacklists_hwids_and_ip_and_unbanuser_lifts_them(
    seller: Seller, services: Services
) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("addhwiduser", user="alice", hwid="H1")
    await seller.ok("addhwiduser", user="alice", hwid="H2")
    await set_last_ip(services, seller, "alice", "198.51.100.7")
    body = await seller.ok("banuser", user="alice")
    assert body["message"] == "Successfully banned user!"
    assert (await seller.ok("userdata", user="alice"))["banned"] == "Banned by the application owner"
    assert await blacklist(services, seller) == {("hwid", "H1"), ("hwid", "H2"), ("ip", "198.51.100.7")}

    body = await seller.ok("unbanuser", user="alice")
    assert body["message"] == "Successfully unbanned user!"
    assert (await seller.ok("userdata", user="alice"))["banned"] is None
    assert await blacklist(services, seller) == set()
    await seller.fails("unbanuser", 409, "user_not_banned", user="alice")


async def test_banuser_with_a_reason_and_again_replaces_it(seller: Seller, services: Services) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("banuser", user="alice", reason="chargeback")
    assert (await seller.ok("userdata", user="alice"))["banned"] == "chargeback"
    await seller.ok("banuser", user="alice", reason="sharing")
    assert (await seller.ok("userdata", user="alice"))["banned"] == "sharing"
    assert await blacklist(services, seller) == set()  # no HWID or IP known yet


async def test_banuser_and_unbanuser_refusals(seller: Seller) -> None:
    await seller.fails("banuser", 404, "user_not_found", user="ghost")
    await seller.fails("unbanuser", 404, "user_not_found", user="ghost")
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.fails("banuser", 400, "parameter_too_long", user="alice", reason="r" * 257)
    await seller.fails("unbanuser", 409, "user_not_banned", user="alice")


# --- editusername ------------------------------------------------------------------------------


async def test_editusername_renames_and_carries_the_name_over(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    db = services.db
    await seller.ok("adduser", user="alice", expiry="1")  # with its user token, assigned to alice
    await seller.ok("adduser", user="bob", expiry="1")
    alice = await user_id(services, seller, "alice")
    bob = await user_id(services, seller, "bob")
    made = (await seller.ok("add", expiry=1, amount=2))["keys"]
    await seller.ok("assignkey", user="alice", key=made[0])
    await seller.ok("assignkey", user="bob", key=made[1])
    await seller.ok("addchannel", name="general")
    for author, author_id in (("alice", alice), ("bob", bob), ("alice", alice)):
        await chat.send_as_user(
            db, seller.app_id, "general", user_id=author_id, username=author, message="hi", now=clock.now()
        )

    body = await seller.ok("editusername", currentUsername="alice", newUsername="alicia")
    assert body["message"] == "Successfully changed username!"
    assert await user_id(services, seller, "alicia") == alice
    assert (await seller.ok("userexists", user="alice"))["exists"] is False
    keys = await db.fetch_all(
        "SELECT key, used_by FROM license_keys WHERE app_id = ? ORDER BY id", seller.app_id
    )
    assert [(k["key"], k["used_by"]) for k in keys] == [(made[0], "alicia"), (made[1], "bob")]
    authors = await chat.messages(db, seller.app_id, "general")
    assert [a["author"] for a in authors] == ["alicia", "bob", "alicia"]
    assert await db.fetch_value("SELECT assigned FROM tokens WHERE user_id = ?", alice) == "alicia"
    # The grants follow the user (they hang on its id).
    assert len(await grants(services, seller, "alicia")) == 1


async def test_editusername_accepts_user_for_the_current_name_and_a_no_change(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("editusername", user="alice", newUsername="alicia")
    await seller.ok("editusername", user="alicia", newUsername="alicia")
    assert (await seller.ok("fetchallusernames"))["usernames"] == ["alicia"]


async def test_editusername_refusals(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("adduser", user="bob", expiry="1")
    await seller.fails("editusername", 409, "user_exists", currentUsername="alice", newUsername="bob")
    await seller.fails(
        "editusername", 400, "username_not_allowed", currentUsername="alice", newUsername="all"
    )
    await seller.fails(
        "editusername", 400, "username_not_allowed", currentUsername="alice", newUsername="ALL"
    )
    await seller.fails("editusername", 404, "user_not_found", currentUsername="ghost", newUsername="x")
    await seller.fails("editusername", 400, "missing_parameter", currentUsername="alice")
    await seller.fails(
        "editusername", 400, "parameter_too_long", currentUsername="alice", newUsername="n" * 65
    )


# --- resetpw, editemail ------------------------------------------------------------------------


async def test_resetpw_sets_and_clears_the_password(seller: Seller, services: Services) -> None:
    await seller.ok("adduser", user="alice", expiry="1", **{"pass": "old"})
    body = await seller.ok("resetpw", user="alice", passwd=" new ")
    assert body["message"] == "Password reset successful"
    stored = await services.db.fetch_value("SELECT password_hash FROM users WHERE username = ?", "alice")
    assert stored.startswith("$argon2id$")
    await seller.ok("verifyuser", user="alice", **{"pass": " new "})
    await seller.fails("verifyuser", 403, "password_mismatch", user="alice", **{"pass": "old"})

    await seller.ok("resetpw", user="alice")  # no passwd: the next login sets it
    await seller.fails("verifyuser", 403, "password_not_set", user="alice", **{"pass": " new "})

    await seller.ok("changepw", user="alice", passwd="tg")  # the Telegram bot's name for it
    await seller.ok("verifyuser", user="alice", **{"pass": "tg"})
    await seller.fails("resetpw", 404, "user_not_found", user="ghost", passwd="x")


async def test_editemail_changes_the_address(seller: Seller, services: Services) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    body = await seller.ok("editemail", user="alice", email="Alice@Example.org")
    assert body["message"] == "Successfully changed email!"
    row = await services.db.fetch_one("SELECT email, email_lower FROM users WHERE username = ?", "alice")
    assert row == {"email": "Alice@Example.org", "email_lower": "alice@example.org"}


@pytest.mark.parametrize("email", ["plain", "@example.org", "alice@", "a@b@c", "al ice@example.org"])
async def test_editemail_refuses_what_is_not_an_address(seller: Seller, email: str) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.fails("editemail", 400, "invalid_email", user="alice", email=email)


async def test_editemail_other_refusals(seller: Seller) -> None:
    await seller.fails("editemail", 404, "user_not_found", user="ghost", email="g@example.org")
    await seller.fails("editemail", 400, "missing_parameter", user="ghost")
    await seller.fails("editemail", 400, "parameter_too_long", user="ghost", email="a@" + "b" * 253)


# --- extend, subtract --------------------------------------------------------------------------


async def test_extend_adds_days_to_a_running_grant(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    clock.advance(1000)
    body = await seller.ok("extend", user="alice", sub="default", expiry="2")
    assert (body["message"], body["updated"]) == ("Successfully extended user(s)!", 1)
    assert await expiries(services, seller, "alice") == [start + 3 * DAY]


async def test_extend_gives_a_new_grant_once_when_the_user_has_none_running(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    clock.advance(2 * DAY)  # the default grant has expired
    await seller.ok("extend", user="alice", sub="default", expiry="1")
    await seller.ok("extend", user="alice", sub="gold", expiry="0.5")
    now = clock.now()
    assert [(g["name"], g["expires_at"]) for g in await grants(services, seller, "alice")] == [
        ("default", start + DAY),  # the expired grant is left as it was
        ("default", now + DAY),  # not now + 2 days: the new grant gets the time once
        ("gold", now + DAY // 2),
    ]


async def test_extend_adds_to_a_paused_grant(seller: Seller, services: Services, clock: MovableClock) -> None:
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("pauseuser", username="alice")
    clock.advance(2 * DAY)  # past the wall-clock expiry, but paused time does not run out
    await seller.ok("extend", user="alice", sub="default", expiry="1")
    assert await expiries(services, seller, "alice") == [start + 2 * DAY]
    await seller.ok("unpauseuser", username="alice")
    assert await expiries(services, seller, "alice") == [start + 4 * DAY]  # two days left, as when paused + 1


async def test_extend_all_serves_every_user_without_doubling(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    await seller.ok("adduser", user="running", expiry="1")
    await seller.ok("adduser", user="expired", expiry="1")
    await seller.ok("subtract", user="expired", sub="default", seconds=str(DAY))
    clock.advance(10)
    body = await seller.ok("extend", user="all", sub="default", expiry="1")
    assert body["updated"] == 2
    assert await expiries(services, seller, "running") == [start + 2 * DAY]
    assert await expiries(services, seller, "expired") == [start, clock.now() + DAY]


async def test_extend_all_active_only_skips_users_without_time(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    await seller.ok("adduser", user="running", expiry="1")
    await seller.ok("adduser", user="expired", expiry="1")
    await seller.ok("subtract", user="expired", sub="default", seconds=str(DAY))
    body = await seller.ok("extend", user="ALL", sub="default", expiry="1", activeOnly="1")
    assert body["updated"] == 1
    assert await expiries(services, seller, "running") == [start + 2 * DAY]
    assert await expiries(services, seller, "expired") == [start]
    # For one user, activeOnly also means: no new grant.
    assert (await seller.ok("extend", user="expired", sub="default", expiry="1", activeOnly="1"))[
        "updated"
    ] == 0
    assert await expiries(services, seller, "expired") == [start]


async def test_extend_refusals(seller: Seller) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.fails("extend", 404, "user_not_found", user="ghost", sub="default", expiry="1")
    await seller.fails("extend", 404, "subscription_not_found", user="alice", sub="gold", expiry="1")
    await seller.fails("extend", 404, "subscription_not_found", user="all", sub="gold", expiry="1")
    await seller.fails("extend", 400, "invalid_expiry", user="alice", sub="default", expiry="0")
    await seller.fails("extend", 400, "missing_parameter", user="alice", sub="default")
    await seller.fails("extend", 400, "missing_parameter", user="alice", expiry="1")


async def test_subtract_takes_seconds_from_one_user_or_all(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("adduser", user="bob", expiry="2")
    body = await seller.ok("subtract", user="alice", sub="default", seconds="600")
    assert body["updated"] == 1
    assert body["message"]
    assert await expiries(services, seller, "alice") == [start + DAY - 600]
    assert (await seller.ok("subtract", user="all", sub="default", seconds="100"))["updated"] == 2
    assert await expiries(services, seller, "alice") == [start + DAY - 700]
    assert await expiries(services, seller, "bob") == [start + 2 * DAY - 100]


async def test_subtract_reduces_a_paused_grants_remaining_time(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("pauseuser", username="alice")
    clock.advance(500)
    await seller.ok("subtract", user="alice", sub="default", seconds="1000")
    await seller.ok("unpauseuser", username="alice")
    assert await expiries(services, seller, "alice") == [start + DAY - 1000 + 500]


async def test_subtract_refusals(seller: Seller, clock: MovableClock) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.fails("subtract", 404, "user_not_found", user="ghost", sub="default", seconds="1")
    await seller.fails("subtract", 404, "subscription_not_found", user="alice", sub="silver", seconds="1")
    await seller.fails("subtract", 404, "grant_not_found", user="alice", sub="gold", seconds="1")
    await seller.fails("subtract", 400, "number_out_of_range", user="alice", sub="default", seconds="0")
    await seller.fails("subtract", 400, "invalid_number", user="alice", sub="default", seconds="1.5")
    clock.advance(2 * DAY)
    await seller.fails("subtract", 404, "grant_not_found", user="alice", sub="default", seconds="1")
    assert (await seller.ok("subtract", user="all", sub="default", seconds="1"))["updated"] == 0


# --- pauseuser, unpauseuser --------------------------------------------------------------------


async def test_pausing_a_user_freezes_their_time_and_unpausing_gives_it_back(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("extend", user="alice", sub="gold", expiry="2")
    body = await seller.ok("pauseuser", username="alice")
    assert (body["message"], body["paused"]) == ("Successfully paused user!", 2)
    assert [g["paused_at"] for g in await grants(services, seller, "alice")] == [start, start]
    await seller.fails("pauseuser", 409, "nothing_to_pause", username="alice")

    clock.advance(3 * DAY)
    body = await seller.ok("unpauseuser", user="alice")  # `user` is accepted for `username`
    assert (body["message"], body["unpaused"]) == ("Successfully unpaused user!", 2)
    assert await expiries(services, seller, "alice") == [start + 4 * DAY, start + 5 * DAY]
    assert [g["paused_at"] for g in await grants(services, seller, "alice")] == [None, None]
    await seller.fails("unpauseuser", 409, "not_paused", username="alice")


async def test_pausing_leaves_expired_grants_alone(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("adduser", user="alice", expiry="1")
    clock.advance(2 * DAY)
    await seller.fails("pauseuser", 409, "nothing_to_pause", username="alice")
    await seller.fails("unpauseuser", 409, "not_paused", username="alice")


async def test_user_pause_and_subscription_pause_together_never_give_extra_time(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    await seller.ok("adduser", user="alice", expiry="1")
    await seller.ok("pauseuser", username="alice")  # frozen with 1 day left
    clock.advance(100)
    await seller.ok("pausesub", subscription="default")
    clock.advance(100)
    await seller.ok("unpauseuser", username="alice")  # still frozen by the subscription
    clock.advance(100)
    await seller.ok("unpausesub", subscription="default")
    assert await expiries(services, seller, "alice") == [clock.now() + DAY]
    assert clock.now() == start + 300


async def test_pause_refusals(seller: Seller) -> None:
    await seller.fails("pauseuser", 404, "user_not_found", username="ghost")
    await seller.fails("unpauseuser", 404, "user_not_found", username="ghost")
    await seller.fails("pauseuser", 400, "missing_parameter")


# --- delsub ------------------------------------------------------------------------------------


async def test_delsub_removes_every_grant_of_that_subscription(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("adduser", user="alice", expiry="1")
    await add_second_long_grant(services, seller, "alice", "gold")
    clock.advance(11)  # an expired one goes too
    await seller.ok("extend", user="alice", sub="gold", expiry="1")
    body = await seller.ok("delsub", user="alice", sub="gold")
    assert (body["message"], body["deleted"]) == ("Successfully deleted subscription!", 2)
    assert [g["name"] for g in await grants(services, seller, "alice")] == ["default"]
    await seller.fails("delsub", 404, "grant_not_found", user="alice", sub="gold")
    await seller.fails("delsub", 404, "user_not_found", user="ghost", sub="gold")
    await seller.fails("delsub", 404, "subscription_not_found", user="alice", sub="silver")


# --- permissions -------------------------------------------------------------------------------


async def test_a_seller_key_without_the_users_area_is_refused(seller: Seller) -> None:
    created = await seller.ok("addsellerkey", permissions="subscriptions")
    await seller.fails("fetchallusers", 403, "permission_denied", sellerkey=created["sellerkey"])
    await seller.fails("usersubs", 403, "permission_denied", sellerkey=created["sellerkey"])
