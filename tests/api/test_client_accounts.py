"""Client API — register, Login and Upgrade Access."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
UPGRADE_STATUSES = {200, 400, 401, 403, 404, 429, 500}


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def new_key(seller: Seller, days: float = 30, level: str = "1") -> str:
    key: str = (await seller.ok("add", expiry=days, level=level))["key"]
    return key


def creds(username: str, password: str, **more: str) -> dict[str, str]:
    return {"username": username, "pass": password, **more}


# --- register -------------------------------------------------------------------------------


async def test_register_redeems_the_key_and_logs_in(
    app: Client, seller: Seller, services: Services, clock: MovableClock
) -> None:
    key = await new_key(seller)
    body = await app.ok(
        "register", key=key, hwid=HWID, email="Ann@Example.org", **creds("ann", "s3cret pass")
    )
    info = body["info"]
    assert info["username"] == "ann"
    assert info["subscriptions"][0]["subscription"] == "default"
    assert info["subscriptions"][0]["key"] == key
    assert info["hwid"] == HWID
    row = await services.db.fetch_one(
        "SELECT password_hash, email, email_lower FROM users WHERE username = 'ann'"
    )
    assert row is not None
    assert row["password_hash"].startswith("$argon2id$")
    assert (row["email"], row["email_lower"]) == ("Ann@Example.org", "ann@example.org")
    status = await seller.ok("info", key=key)
    assert (status["status"], status["usedby"]) == ("Used", "ann")


async def test_register_refusals(app: Client, seller: Seller, services: Services) -> None:
    key = await new_key(seller)
    await app.fails("register", 404, "key_not_found", key="nope", **creds("bob", "pw"))
    await app.ok("register", key=key, **creds("bob", "pw"))
    second = await new_key(seller)
    body = await app.fails("register", 409, "username_taken", key=second, **creds("bob", "pw"))
    assert body["message"] == "Username already taken, choose a different one"
    await app.fails("register", 403, "key_used", key=key, **creds("carl", "pw"))
    await seller.ok("ban", key=second, reason="refund")
    await app.fails("register", 403, "key_banned", key=second, **creds("carl", "pw"))
    await app.fails("register", 400, "username_not_allowed", key=key, **creds("all", "pw"))
    await seller.ok("updatesettings", minusernamelength=5)
    await app.fails("register", 400, "username_too_short", key=key, **creds("abc", "pw"))
    await app.fails("register", 400, "invalid_email", key=key, email="nope", **creds("carla", "pw"))
    await app.fails("register", 400, "missing_parameter", key=key, username="carla")


async def test_register_from_a_blacklisted_machine_is_refused(app: Client, seller: Seller) -> None:
    await seller.ok("black", hwid=HWID)
    key = await new_key(seller)
    await app.fails("register", 403, "blacklisted", key=key, hwid=HWID, **creds("dan", "pw"))
    assert (await seller.ok("info", key=key))["status"] == "Not Used"


# --- login ------------------------------------------------------------------------------------


async def registered(
    app: Client, seller: Seller, name: str = "erin", password: str = "pw1", **more: str
) -> str:
    key = await new_key(seller)
    await app.ok("register", key=key, **creds(name, password, **more))
    return key


async def test_login_with_username_and_password(app: Client, seller: Seller, clock: MovableClock) -> None:
    await registered(app, seller, hwid=HWID)
    clock.advance(60)
    other = app.fresh()
    await other.init()
    info = (await other.ok("login", hwid=HWID, **creds("erin", "pw1")))["info"]
    assert info["username"] == "erin"
    assert info["lastlogin"] == str(clock.now())
    assert info["subscriptions"][0]["timeleft"] == 30 * 86400 - 60


async def test_unknown_user_and_wrong_password_look_the_same(app: Client, seller: Seller) -> None:
    await registered(app, seller)
    wrong = await app.fails("login", 403, "invalid_credentials", **creds("erin", "nope"))
    unknown = await app.fails("login", 403, "invalid_credentials", **creds("nobody", "pw1"))
    assert wrong["message"] == unknown["message"] == "Invalid username or password."


async def test_a_user_created_without_password_sets_it_at_first_login(app: Client, seller: Seller) -> None:
    await seller.ok("adduser", user="fay", sub="default", expiry=3)
    await app.ok("login", **creds("fay", "chosen"))
    await app.fails("login", 403, "invalid_credentials", **creds("fay", "other"))
    await app.ok("login", **creds("fay", "chosen"))


async def test_login_refusals_follow_the_password_check(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await registered(app, seller, hwid=HWID)
    await seller.ok("banuser", user="erin", reason="spam")
    await app.fails("check", 403, "session_not_found")  # erin's sessions ended with the ban
    await app.init()
    # A wrong password never learns about the ban.
    await app.fails("login", 403, "invalid_credentials", hwid=HWID, **creds("erin", "bad"))
    await app.fails("login", 403, "user_banned", hwid=HWID, **creds("erin", "pw1"))


async def test_login_hwid_and_subscription_rules(app: Client, seller: Seller, clock: MovableClock) -> None:
    await registered(app, seller, hwid=HWID)
    await app.fails("login", 403, "hwid_mismatch", hwid="another-machine-000000", **creds("erin", "pw1"))
    await seller.ok("resetuser", user="erin")
    # The reset ended erin's sessions (the next online check decides, issue 21): a new one binds.
    await app.fails("check", 403, "session_not_found")
    await app.init()
    await app.ok("login", hwid="another-machine-000000", **creds("erin", "pw1"))
    clock.advance(31 * 86400)
    await app.init()
    await app.fails(
        "login", 403, "no_active_subscription", hwid="another-machine-000000", **creds("erin", "pw1")
    )


async def test_login_attempts_are_rate_limited_per_username_and_address(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", authratelimit=3)
    for _ in range(3):
        await app.fails("login", 403, "invalid_credentials", **creds("target", "guess"))
    response = await app.call("login", **creds("target", "guess"))
    assert (response.status_code, response.json()["error"]) == (429, "rate_limited")
    assert response.headers["Retry-After"]


# --- Upgrade Access ---------------------------------------------------------------------------


async def test_upgrade_grants_the_key_subscriptions_in_the_documented_shape(
    app: Client, seller: Seller, clock: MovableClock, services: Services
) -> None:
    await registered(app, seller, name="gus")
    await seller.ok("addsub", name="pro", level="2")
    await seller.ok("addsub", name="pro-tools", level="2")
    key = await new_key(seller, days=10, level="2")
    body = await app.ok("upgrade", username="gus", key=key)
    assert list(body) == ["success", "code", "message", "users", "entitlements", "nonce", "ownerid"]
    assert body["users"] == [{"name": "pro"}, {"name": "pro-tools"}]
    subs = (await seller.ok("usersubs", user="gus"))["subscriptions"]
    assert {s["subscription"]: int(s["expiry"]) for s in subs} == {
        "default": clock.now() + 30 * 86400,
        "pro": clock.now() + 10 * 86400,
        "pro-tools": clock.now() + 10 * 86400,
    }


async def test_upgrade_lengthens_a_running_subscription(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await registered(app, seller, name="hal")
    key = await new_key(seller, days=5)
    assert (await app.ok("upgrade", username="hal", key=key))["users"] == [{"name": "default"}]
    subs = (await seller.ok("usersubs", user="hal"))["subscriptions"]
    assert [int(s["expiry"]) for s in subs] == [clock.now() + 35 * 86400]


async def test_upgrade_refusals_and_their_statuses(app: Client, seller: Seller, services: Services) -> None:
    await registered(app, seller, name="ivy")
    key = await new_key(seller)
    await app.fails("upgrade", 404, "key_not_found", username="ivy", key="nope")
    await app.fails("upgrade", 404, "user_not_found", username="nobody", key=key)
    await app.ok("upgrade", username="ivy", key=key)
    await app.fails("upgrade", 403, "key_used", username="ivy", key=key)
    banned = await new_key(seller)
    await seller.ok("ban", key=banned, reason="fraud")
    await app.fails("upgrade", 403, "key_banned", username="ivy", key=banned)
    fresh = await new_key(seller)
    await seller.ok("banuser", user="ivy")
    await app.fails("check", 403, "session_not_found")  # ivy's sessions ended with the ban
    await app.init()
    await app.fails("upgrade", 403, "user_banned", username="ivy", key=fresh)
    await app.fails("upgrade", 400, "missing_parameter", username="ivy")
    await seller.ok("updatesettings", authratelimit=1)
    await app.fails("upgrade", 404, "key_not_found", username="zed", key="k")
    response = await app.call("upgrade", username="zed", key="k")
    assert (response.status_code, response.json()["error"]) == (429, "rate_limited")


async def test_upgrade_answers_only_its_documented_statuses(app: Client, seller: Seller) -> None:
    seen = {
        (await app.call("upgrade", **params)).status_code for params in ({}, {"username": "a", "key": "b"})
    }
    nobody = Client(app.http, app.ownerid, "wrong-name", app.sessionid)
    seen.add((await nobody.call("upgrade", username="a", key="b")).status_code)
    assert seen <= UPGRADE_STATUSES
    assert {400, 404, 401} <= seen
