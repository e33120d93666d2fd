"""Client API — License Login (`type=license`): its exact shape, its only statuses (200, 400,
401, 403, 500), first use versus later use, HWID lock, bans, blacklist, pauses, rate limit."""

from __future__ import annotations

import re

import pytest

from licensegate import ids
from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
OTHER_HWID = "S-1-5-21-9999999999-8888888888-7777777777-1001"
LICENSE_STATUSES = {200, 400, 401, 403, 500}


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def new_key(seller: Seller, days: float = 30, level: str = "1") -> str:
    key: str = (await seller.ok("add", expiry=days, level=level))["key"]
    return key


async def test_first_use_creates_the_user_and_answers_the_documented_shape(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="extra", level="1")  # a level-1 key grants both subscriptions
    key = await new_key(seller, days=30)
    body = await app.ok("license", key=key, hwid=HWID)
    assert list(body) == ["success", "code", "message", "info", "entitlements", "credits", "nonce", "ownerid"]
    assert body["message"] == "Logged in!"
    info = body["info"]
    assert set(info) == {"username", "subscriptions", "ip", "hwid", "createdate", "lastlogin"}
    assert info["username"] == key
    assert info["ip"] == "203.0.113.7"
    assert info["hwid"] == HWID
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", info["createdate"])
    assert info["lastlogin"] == str(clock.now())
    expiry = clock.now() + 30 * 86400
    assert info["subscriptions"] == [
        {"subscription": "default", "key": key, "expiry": str(expiry), "timeleft": 30 * 86400},
        {"subscription": "extra", "key": key, "expiry": str(expiry), "timeleft": 30 * 86400},
    ]
    assert isinstance(info["subscriptions"][0]["timeleft"], int)


async def test_later_uses_log_the_same_user_in(
    app: Client, seller: Seller, clock: MovableClock, services: Services
) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    clock.advance(3600)
    again = app.fresh()
    await again.init()
    info = (await again.ok("license", key=key, hwid=HWID))["info"]
    assert info["subscriptions"][0]["timeleft"] == 30 * 86400 - 3600
    assert info["lastlogin"] == str(clock.now())
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 1
    session = await services.db.fetch_one(
        "SELECT validated, credential FROM sessions WHERE id = ?", ids.digest(again.sessionid)
    )
    assert session == {"validated": 1, "credential": key}


async def test_client_details_are_recorded_with_the_session(
    app: Client, seller: Seller, services: Services
) -> None:
    key = await new_key(seller)
    await app.ok(
        "license",
        key=key,
        hwid=HWID,
        os="Windows 11",
        architecture="x64",
        device="DESKTOP-1",
        cpu_cores="8",
        ram="16 GB",
        version="2.4.1",
        token="t0k",
    )
    row = await services.db.fetch_one(
        "SELECT hwid, os, architecture, device, cpu_cores, ram, client_version FROM sessions WHERE id = ?",
        ids.digest(app.sessionid),
    )
    assert row == {
        "hwid": HWID,
        "os": "Windows 11",
        "architecture": "x64",
        "device": "DESKTOP-1",
        "cpu_cores": "8",
        "ram": "16 GB",
        "client_version": "2.4.1",
    }


async def test_unknown_key_is_403_never_404(app: Client) -> None:
    body = await app.fails("license", 403, "key_not_found", key="NOPE-NOPE")
    assert body["message"] == "Invalid license key"


async def test_missing_key_is_400_and_bad_credentials_401(app: Client, seller: Seller) -> None:
    assert (await app.fails("license", 400, "missing_parameter"))["param"] == "key"
    stranger = Client(app.http, app.ownerid, "other-app", app.sessionid)
    await stranger.fails("license", 401, "unknown_application", key="x")
    nobody = Client(app.http, app.ownerid, app.name)
    await nobody.fails("license", 401, "missing_session", key="x")


async def test_session_problems_are_403(app: Client, seller: Seller, clock: MovableClock) -> None:
    key = await new_key(seller)
    ghost = Client(app.http, app.ownerid, app.name, "f" * 32)
    await ghost.fails("license", 403, "session_not_found", key=key)
    clock.advance(21600)
    await app.fails("license", 403, "session_expired", key=key)


async def test_a_session_of_another_application_is_refused(
    app: Client, seller: Seller, services: Services
) -> None:
    from tests.helpers import create_seller

    other = client_of(await create_seller(services, seller.http, owner="someone", name="other"))
    await other.init()
    key = await new_key(seller)
    borrowed = Client(app.http, app.ownerid, app.name, other.sessionid)
    await borrowed.fails("license", 403, "session_not_found", key=key)


async def test_hwid_lock_binds_the_first_hwid_and_refuses_others(app: Client, seller: Seller) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    body = await app.fails("license", 403, "hwid_mismatch", key=key, hwid=OTHER_HWID)
    assert body["message"] == "HWID doesn't match. Ask for a HWID reset"
    # Exact matching: a part of the bound HWID is not the HWID.
    await app.fails("license", 403, "hwid_mismatch", key=key, hwid=HWID[:-1])
    # Once bound, a login that sends no HWID is refused too.
    await app.fails("license", 403, "hwid_mismatch", key=key)
    await app.ok("license", key=key, hwid=HWID)


async def test_more_hwids_only_as_the_application_allows(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", maxhwids=2)
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    await app.ok("license", key=key, hwid=OTHER_HWID)
    await app.fails("license", 403, "hwid_mismatch", key=key, hwid="a-third-machine-id-0000")
    await app.ok("license", key=key, hwid=HWID)


async def test_hwid_lock_off_accepts_any_machine(app: Client, seller: Seller, services: Services) -> None:
    await seller.ok("updatesettings", hwidcheck=0)
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    await app.ok("license", key=key, hwid=OTHER_HWID)
    await app.ok("license", key=key)


async def test_hwid_length_and_presence_rules(app: Client, seller: Seller, services: Services) -> None:
    await seller.ok("updatesettings", minhwid=20, forcehwid=1)
    key = await new_key(seller)
    body = await app.fails("license", 400, "hwid_too_short", key=key, hwid="short")
    assert "20" in body["message"]
    await app.fails("license", 403, "hwid_required", key=key)
    await app.ok("license", key=key, hwid=HWID)


async def test_banned_key_is_refused_even_after_its_user_exists(app: Client, seller: Seller) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    await seller.ok("ban", key=key, reason="chargeback")
    await app.fails("check", 403, "session_not_found")  # the key's sessions ended with the ban
    await app.init()
    body = await app.fails("license", 403, "key_banned", key=key, hwid=HWID)
    assert "chargeback" in body["message"]
    unused = await new_key(seller)
    await seller.ok("ban", key=unused, reason="leaked")
    await app.fails("license", 403, "key_banned", key=unused, hwid=HWID)


async def test_banned_user_is_refused(app: Client, seller: Seller) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    await seller.ok("banuser", user=key, reason="abuse")
    await app.fails("check", 403, "session_not_found")  # the user's sessions ended with the ban
    await app.init()
    body = await app.fails("license", 403, "user_banned", key=key, hwid=HWID)
    assert body["message"] == "The user is banned: abuse"


async def test_blacklisted_hwid_or_ip_is_refused_at_every_login(app: Client, seller: Seller) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    await seller.ok("black", hwid=HWID)
    body = await app.fails("license", 403, "blacklisted", key=key, hwid=HWID)
    assert body["message"] == "You've been blacklisted from our application"
    await seller.ok("delblack", data=HWID, blacktype="hwid")
    await seller.ok("black", ip="203.0.113.0/24")
    await app.fails("license", 403, "blacklisted", key=key, hwid=HWID)
    fresh = await new_key(seller)
    await app.fails("license", 403, "blacklisted", key=fresh, hwid=OTHER_HWID)
    await seller.ok("addWhite", ip="203.0.113.7")
    await app.ok("license", key=key, hwid=HWID)


async def test_expired_and_paused_subscriptions(app: Client, seller: Seller, clock: MovableClock) -> None:
    key = await new_key(seller, days=1)
    await app.ok("license", key=key, hwid=HWID)
    await seller.ok("pauseuser", username=key)
    await app.fails("check", 403, "session_not_found")  # the pause ended the session
    await app.init()
    body = await app.fails("license", 403, "subscription_paused", key=key, hwid=HWID)
    assert body["message"] == "Your subscription is paused and can't be used right now"
    await seller.ok("unpauseuser", username=key)
    await app.ok("license", key=key, hwid=HWID)
    await seller.ok("pausesub", subscription="default")
    await app.fails("check", 403, "session_not_found")
    await app.init()
    await app.fails("license", 403, "subscription_paused", key=key, hwid=HWID)
    await seller.ok("unpausesub", subscription="default")
    clock.advance(86400)
    await app.init()  # the session has expired as well
    body = await app.fails("license", 403, "no_active_subscription", key=key, hwid=HWID)
    assert body["message"] == "No active subscription(s) found"


async def test_a_key_whose_user_was_deleted_is_used(app: Client, seller: Seller) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    await seller.ok("deluser", user=key)
    await app.fails("license", 403, "session_not_found", key=key, hwid=HWID)  # its sessions went too
    await app.init()
    await app.fails("license", 403, "key_used", key=key, hwid=HWID)


async def test_a_key_of_a_level_without_subscription_is_refused(app: Client, seller: Seller) -> None:
    await seller.ok("addsub", name="gold", level="5")
    key = await new_key(seller, level="5")
    await seller.ok("delappsub", name="gold")
    await app.fails("license", 403, "no_subscription_for_level", key=key, hwid=HWID)


async def test_a_throttled_attempt_is_403_rate_limited_with_retry_after(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", authratelimit=2)
    await app.fails("license", 403, "key_not_found", key="guess-1")
    await app.fails("license", 403, "key_not_found", key="guess-1")
    response = await app.call("license", key="guess-1")
    assert response.status_code == 403  # the document lists no 429 for License Login
    assert response.json()["error"] == "rate_limited"
    assert int(response.headers["Retry-After"]) > 0
    await app.fails("license", 403, "key_not_found", key="guess-2")  # per key and address


async def test_license_login_answers_only_its_documented_statuses(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", authratelimit=1, clientratelimit=5)
    seen = set()
    for params in (
        {},
        {"key": "a"},
        {"key": "a"},
        {"key": "b", "hwid": "x" * 300},
        {"key": "c"},
        {"key": "d"},
    ):
        seen.add((await app.call("license", **params)).status_code)
    assert seen <= LICENSE_STATUSES
    assert 403 in seen


async def test_a_license_user_cannot_log_in_with_a_password(app: Client, seller: Seller) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID)
    await app.fails("login", 403, "invalid_credentials", username=key, **{"pass": key}, hwid=HWID)


async def test_a_user_made_from_a_resellers_key_belongs_to_that_reseller(app: Client, seller: Seller) -> None:
    reseller_key = (await seller.ok("addAccount", role="Reseller", user="rita", **{"pass": "pw"}))[
        "sellerkey"
    ]
    await seller.ok("setbalance", username="rita", month=1)
    made = await seller.call("add", sellerkey=reseller_key, expiry=30)
    key = made.json()["key"]
    await app.ok("license", key=key, hwid=HWID)
    users = (await seller.call("fetchallusers", sellerkey=reseller_key)).json()
    assert [u["username"] for u in users["users"]] == [key]


async def test_re_checking_the_same_login_writes_nothing_but_new_details_are_recorded(
    app: Client, seller: Seller, services: Services
) -> None:
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID, os="Linux")
    before = await services.db.fetch_one("SELECT * FROM sessions WHERE id = ?", ids.digest(app.sessionid))
    await app.ok("license", key=key, hwid=HWID, os="Linux")
    assert (
        await services.db.fetch_one("SELECT * FROM sessions WHERE id = ?", ids.digest(app.sessionid))
        == before
    )
    await app.ok("license", key=key, hwid=HWID, os="Windows 11")
    assert (
        await services.db.fetch_value("SELECT os FROM sessions WHERE id = ?", ids.digest(app.sessionid))
        == "Windows 11"
    )
    await app.ok("license", key=key, hwid=HWID)
    assert (
        await services.db.fetch_value("SELECT os FROM sessions WHERE id = ?", ids.digest(app.sessionid))
        is None
    )


async def test_first_use_writes_the_user_token_grants_device_and_session(
    app: Client, seller: Seller, clock: MovableClock, services: Services
) -> None:
    """Everything a first use writes (one statement on PostgreSQL, a transaction on SQLite)."""
    await seller.ok("addsub", name="extra", level="1")
    await seller.ok("pausesub", name="extra")
    clock.advance(100)
    key = await new_key(seller)
    await app.ok("license", key=key, hwid=HWID, os="Windows 11", cpu_cores="8")
    db = services.db
    user = await db.fetch_one(
        "SELECT id, username, password_hash, hwid_lock, created_by, created_at, last_login_at, last_ip "
        "FROM users WHERE app_id = ?",
        seller.app_id,
    )
    assert user is not None
    assert {k: v for k, v in user.items() if k != "id"} == {
        "username": key,
        "password_hash": None,
        "hwid_lock": 1,
        "created_by": "license",
        "created_at": clock.now(),
        "last_login_at": clock.now(),
        "last_ip": "203.0.113.7",
    }
    used = await db.fetch_one(
        "SELECT status, used_at, used_by, used_by_user_id FROM license_keys WHERE key = ?", key
    )
    assert used == {"status": "used", "used_at": clock.now(), "used_by": key, "used_by_user_id": user["id"]}
    grants = await db.fetch_all(
        "SELECT s.name, us.expires_at FROM user_subscriptions us JOIN subscriptions s "
        "ON s.id = us.subscription_id WHERE us.user_id = ? ORDER BY us.id",
        user["id"],
    )
    paused_at = clock.now() - 100  # a paused subscription's grant starts at the pause
    assert grants == [
        {"name": "default", "expires_at": clock.now() + 30 * 86400},
        {"name": "extra", "expires_at": paused_at + 30 * 86400},
    ]
    assert await db.fetch_all("SELECT hwid FROM user_hwids WHERE user_id = ?", user["id"]) == [{"hwid": HWID}]
    assert await db.fetch_all("SELECT kind, assigned FROM tokens WHERE user_id = ?", user["id"]) == [
        {"kind": "user", "assigned": key}
    ]
    session = await db.fetch_one(
        "SELECT validated, user_id, credential, hwid, os, cpu_cores FROM sessions WHERE id = ?",
        ids.digest(app.sessionid),
    )
    assert session == {
        "validated": 1,
        "user_id": user["id"],
        "credential": key,
        "hwid": HWID,
        "os": "Windows 11",
        "cpu_cores": "8",
    }


async def test_a_first_use_whose_name_is_taken_writes_nothing(
    app: Client, seller: Seller, services: Services
) -> None:
    key = await new_key(seller)
    await seller.ok("adduser", user=key, expiry=1)
    await app.fails("license", 403, "key_used", key=key, hwid=HWID)
    db = services.db
    assert await db.fetch_value("SELECT status FROM license_keys WHERE key = ?", key) == "unused"
    assert await db.fetch_value("SELECT COUNT(*) FROM users") == 1
    assert await db.fetch_value("SELECT COUNT(*) FROM user_hwids") == 0
    assert await db.fetch_value("SELECT COUNT(*) FROM tokens WHERE kind = 'user'") == 1  # adduser's
    assert await db.fetch_value("SELECT validated FROM sessions WHERE id = ?", ids.digest(app.sessionid)) == 0
