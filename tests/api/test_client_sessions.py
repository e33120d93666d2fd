"""Client API — Session Check, Logout, Fetch Online, fetchStats, Change Username, Check
Blacklist, Ban User, and OTP Verify."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import totp
from licensegate.services import Services
from licensegate.store import sessions as session_store
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def logged_in(app: Client, seller: Seller, name: str = "kim", password: str = "pw") -> None:
    key = (await seller.ok("add", expiry=30))["key"]
    await app.ok("register", username=name, key=key, hwid=HWID, **{"pass": password})


async def test_check_tells_whether_the_session_is_logged_in(app: Client, seller: Seller) -> None:
    body = await app.fails("check", 403, "session_not_validated")
    assert body["message"] == "Session is not validated"
    await logged_in(app, seller)
    assert (await app.ok("check"))["message"] == "Session is validated."


async def test_logout_ends_the_session(app: Client, seller: Seller) -> None:
    await logged_in(app, seller)
    await app.ok("logout")
    await app.fails("check", 403, "session_not_found")


async def test_fetch_online_needs_a_logged_in_session_and_lists_usernames_only(
    app: Client, seller: Seller
) -> None:
    await app.fails("fetchOnline", 403, "session_not_validated")
    await logged_in(app, seller, name="kim")
    assert (await app.ok("fetchOnline"))["users"] == [{"credential": "kim"}]
    key = (await seller.ok("add", expiry=1))["key"]
    licensed = app.fresh()
    await licensed.init()
    await licensed.ok("license", key=key, hwid="machine-two-0000000000")
    # Named like a key of the application: left out too, whoever made it.
    named_like_a_key = (await seller.ok("add", expiry=1))["key"]
    await seller.ok("adduser", user=named_like_a_key, sub="default", expiry=1, **{"pass": "pw"})
    lookalike = app.fresh()
    await lookalike.init()
    await lookalike.ok("login", username=named_like_a_key, **{"pass": "pw"})
    amy = app.fresh()
    await amy.init()
    await logged_in(amy, seller, name="amy")
    for viewer in (app, licensed, lookalike):
        users = (await viewer.ok("fetchOnline"))["users"]
        assert users == [{"credential": "amy"}, {"credential": "kim"}]
        assert not any(part in str(users) for part in (key[:4], named_like_a_key[:4]))


async def test_fetch_online_names_the_same_users_when_looked_for_by_user(
    app: Client, seller: Seller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `ONLINE_SCAN` logged-in sessions the users online are found from the users people
    named (ix_users_named), not from the sessions: the same names, key material left out alike."""
    monkeypatch.setattr(session_store, "ONLINE_SCAN", 0)
    await test_fetch_online_needs_a_logged_in_session_and_lists_usernames_only(app, seller)


async def test_register_checks_the_key_before_the_username(app: Client, seller: Seller) -> None:
    """A bogus key must not tell whether a username is taken."""
    await logged_in(app, seller, name="kim")
    fresh = app.fresh()
    await fresh.init()
    await fresh.fails("register", 404, "key_not_found", username="kim", key="bogus", **{"pass": "pw"})
    await fresh.fails("register", 404, "key_not_found", username="free", key="bogus", **{"pass": "pw"})
    used = (await seller.ok("add", expiry=1))["key"]
    await fresh.ok("register", username="lee", key=used, **{"pass": "pw"})
    await fresh.fails("register", 403, "key_used", username="kim", key=used, **{"pass": "pw"})
    unused = (await seller.ok("add", expiry=1))["key"]
    await fresh.fails("register", 409, "username_taken", username="kim", key=unused, **{"pass": "pw"})


async def test_fetch_stats_counts_as_strings(app: Client, seller: Seller) -> None:
    await logged_in(app, seller)
    await seller.ok("add", expiry=1, amount=2)
    appinfo = (await app.ok("fetchStats"))["appinfo"]
    assert appinfo == {
        "numUsers": "1",
        "numOnlineUsers": "1",
        "numKeys": "3",
        "version": "1.0",
        "customerPanelLink": "",
    }


async def test_change_username_needs_a_logged_in_session_and_ends_it(app: Client, seller: Seller) -> None:
    await app.fails("changeUsername", 403, "session_not_validated", newUsername="new")
    await logged_in(app, seller)
    other = app.fresh()
    await other.init()
    await logged_in(other, seller, name="taken")
    await app.fails("changeUsername", 409, "username_taken", newUsername="taken")
    await app.fails("changeUsername", 400, "username_not_allowed", newUsername="all")
    await app.ok("changeUsername", newUsername="kimberly")
    await app.fails("check", 403, "session_not_found")
    await app.init()
    await app.ok("login", username="kimberly", hwid=HWID, **{"pass": "pw"})


async def test_check_blacklist_reports_without_failing(app: Client, seller: Seller) -> None:
    body = await app.ok("checkblacklist", hwid=HWID)
    assert (body["blacklisted"], body["message"]) == (False, "Client is not blacklisted")
    await seller.ok("black", hwid=HWID)
    assert (await app.ok("checkblacklist", hwid=HWID))["blacklisted"] is True
    assert (await app.ok("checkblacklist"))["blacklisted"] is False
    await seller.ok("black", ip="203.0.113.7")
    assert (await app.ok("checkblacklist"))["blacklisted"] is True


async def test_ban_really_bans_and_blacklists(app: Client, seller: Seller, services: Services) -> None:
    await app.fails("ban", 403, "session_not_validated")
    await logged_in(app, seller)
    assert (await app.ok("ban", reason="debugger found", hwid="extra-hwid"))[
        "message"
    ] == "Successfully Banned User"
    await app.fails("check", 403, "session_not_found")
    rows = await services.db.fetch_all("SELECT kind, value, reason FROM blacklist ORDER BY kind, value")
    assert {(r["kind"], r["value"]) for r in rows} == {
        ("hwid", HWID),
        ("hwid", "extra-hwid"),
        ("ip", "203.0.113.7"),
    }
    assert {r["reason"] for r in rows} == {"debugger found"}
    await app.init()
    await app.fails("login", 403, "user_banned", username="kim", hwid=HWID, **{"pass": "pw"})


async def test_session_operations_need_a_session(app: Client) -> None:
    for type_ in ("check", "logout", "fetchOnline", "fetchStats", "checkblacklist", "ban", "changeUsername"):
        await app.fresh().fails(type_, 401, "missing_session")


# --- OTP Verify ---------------------------------------------------------------------------------


async def enrol(app: Client, clock: MovableClock) -> str:
    first = await app.ok("2faenable")
    secret: str = first["2fa"]["secret_code"]
    assert first["2fa"]["QRCode"].startswith("otpauth://totp/app%3Akim?secret=" + secret)
    code = totp.code_at(secret, totp.step_of(clock.now()))
    assert (await app.ok("2faenable", code=code))["message"] == "2fa successfully activated"
    return secret


async def test_two_factor_enrolment_then_login_needs_a_fresh_code(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await app.fails("2faenable", 403, "session_not_validated")
    await logged_in(app, seller)
    secret = await enrol(app, clock)
    await app.fails("2faenable", 409, "otp_already_enabled")
    login = {"username": "kim", "hwid": HWID, "pass": "pw"}
    await app.fails("login", 403, "otp_required", **login)
    await app.fails("login", 403, "otp_invalid", code="000000", **login)
    clock.advance(30)
    code = totp.code_at(secret, totp.step_of(clock.now()))
    await app.ok("login", code=code, **login)
    body = await app.fails("login", 403, "otp_invalid", code=code, **login)  # no replay
    assert body["message"] == "Invalid two-factor authentication code."


async def test_two_factor_codes_are_required_for_license_login_too(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    key = (await seller.ok("add", expiry=3))["key"]
    await app.ok("license", key=key, hwid=HWID)
    first = await app.ok("2faenable")
    secret = first["2fa"]["secret_code"]
    await app.ok("2faenable", code=totp.code_at(secret, totp.step_of(clock.now())))
    await app.fails("license", 403, "otp_required", key=key, hwid=HWID)
    clock.advance(30)
    await app.ok("license", key=key, hwid=HWID, code=totp.code_at(secret, totp.step_of(clock.now())))


async def test_enrolment_must_be_confirmed_in_time_with_a_valid_code(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await logged_in(app, seller)
    await app.fails("2faenable", 409, "otp_not_pending", code="123456")
    secret = (await app.ok("2faenable"))["2fa"]["secret_code"]
    await app.fails("2faenable", 403, "otp_invalid", code="000000")
    clock.advance(601)
    await app.fails("2faenable", 409, "otp_not_pending", code=totp.code_at(secret, totp.step_of(clock.now())))


async def test_disabling_two_factor_needs_a_valid_code(
    app: Client, seller: Seller, clock: MovableClock
) -> None:
    await logged_in(app, seller)
    await app.fails("2fadisable", 409, "otp_not_enabled", code="123456")
    secret = await enrol(app, clock)
    await app.fails("2fadisable", 400, "missing_parameter")
    await app.fails("2fadisable", 403, "otp_invalid", code="999999")
    clock.advance(30)
    await app.ok("2fadisable", code=totp.code_at(secret, totp.step_of(clock.now())))
    await app.ok("login", username="kim", hwid=HWID, **{"pass": "pw"})
