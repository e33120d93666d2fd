"""Two-step sign-in: enrolling an authenticator app, codes that work once, recovery codes,
turning it off (password and a code), and what a half-signed-in session may open."""

from __future__ import annotations

import re

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import secondfactor, totp
from licensegate.services import Services
from tests.web.pages import PASSWORD, Dashboard, browser, make_owner, text_of

pytestmark = pytest.mark.anyio
CODE = re.compile(r"\b[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}\b")
SECRET = re.compile(r'<code class="secret" id="totp-secret">([A-Z2-7 ]+)</code>')


async def enrol(dash: Dashboard, clock: MovableClock) -> tuple[str, list[str]]:
    """Turn on the authenticator app from the account page; (secret, recovery codes)."""
    await dash.get("/dashboard/account")
    page = await dash.post("/dashboard/account/totp/start")
    assert page.url.path == "/dashboard/account/totp"
    assert "<svg" in page.text
    assert "QR code for your authenticator app" in page.text
    found = SECRET.search(page.text)
    assert found
    secret = found.group(1).replace(" ", "")
    done = await dash.post(
        "/dashboard/account/totp/confirm", {"code": totp.code_at(secret, totp.step_of(clock.now()))}
    )
    assert "Your recovery codes" in text_of(done.text)
    codes = CODE.findall(done.text)
    assert len(codes) == 10 == len(set(codes))
    return secret, codes


async def test_enrolment_then_sign_in_asks_for_a_code_that_works_once(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    secret, _codes = await enrol(dash, clock)
    stored = await services.db.fetch_value("SELECT totp_secret FROM accounts WHERE username = 'alice'")
    assert secret not in stored  # sealed at rest under the deployment key
    assert services.secrets.open(stored, secondfactor.PURPOSE) == secret
    assert "Status: on (authenticator app)" in text_of((await dash.get("/dashboard/account")).text)

    clock.advance(90)
    async with browser(services) as other:
        step = await other.sign_in("alice")
        assert step.url.path == "/dashboard/signin/second-factor"
        assert "Second step" in text_of(step.text)
        pending = other.cookie()
        # Half signed in: the dashboard itself stays closed.
        assert (await other.get("/dashboard/account")).url.path == "/dashboard/signin/second-factor"
        code = totp.code_at(secret, totp.step_of(clock.now()))
        wrong = await other.post(
            "/dashboard/signin/second-factor", {"code": "000000" if code != "000000" else "111111"}
        )
        assert wrong.status_code == 401
        assert "That code is not right" in text_of(wrong.text)
        done = await other.post("/dashboard/signin/second-factor", {"code": code})
        assert done.url.path == "/dashboard/apps"
        assert other.cookie() != pending  # a new token once the second factor is passed
    async with browser(services) as third:
        await third.sign_in("alice")
        replay = await third.post("/dashboard/signin/second-factor", {"code": code})
        assert replay.status_code == 401  # the same code, again: refused


async def test_codes_of_the_previous_and_next_step_work_but_not_further(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    secret, _ = await enrol(dash, clock)
    clock.advance(300)
    now = totp.step_of(clock.now())
    for offset, accepted in ((-2, False), (2, False), (-1, True)):
        async with browser(services) as other:
            await other.sign_in("alice")
            page = await other.post(
                "/dashboard/signin/second-factor", {"code": totp.code_at(secret, now + offset)}
            )
            assert (page.url.path == "/dashboard/apps") is accepted, offset
    async with browser(services) as other:
        await other.sign_in("alice")
        page = await other.post("/dashboard/signin/second-factor", {"code": totp.code_at(secret, now + 1)})
        assert page.url.path == "/dashboard/apps"


async def test_a_recovery_code_works_once_and_says_how_many_are_left(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    _, codes = await enrol(dash, clock)
    stored = await services.db.fetch_all("SELECT code_hash FROM recovery_codes")
    assert len(stored) == 10
    assert not any(code in str(stored) for code in codes)
    async with browser(services) as other:
        await other.sign_in("alice")
        page = await other.post(
            "/dashboard/signin/second-factor", {"code": codes[3].upper().replace("-", " ")}
        )
        assert page.url.path == "/dashboard/apps"
        assert "You signed in with a recovery code; 9 are left." in text_of(page.text)
    async with browser(services) as other:
        await other.sign_in("alice")
        page = await other.post("/dashboard/signin/second-factor", {"code": codes[3]})
        assert page.status_code == 401


async def test_code_attempts_are_throttled(services: Services, dash: Dashboard, clock: MovableClock) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    secret, _ = await enrol(dash, clock)
    async with browser(services) as other:
        await other.sign_in("alice")
        for _ in range(services.settings.dashboard_signin_limit):
            await other.post("/dashboard/signin/second-factor", {"code": "123456"})
        page = await other.post(
            "/dashboard/signin/second-factor", {"code": totp.code_at(secret, totp.step_of(clock.now()))}
        )
        assert page.status_code == 429


async def test_a_pending_session_expires_after_five_minutes(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    secret, _ = await enrol(dash, clock)
    async with browser(services) as other:
        await other.sign_in("alice")
        clock.advance(301)
        page = await other.post(
            "/dashboard/signin/second-factor", {"code": totp.code_at(secret, totp.step_of(clock.now()))}
        )
        assert page.url.path == "/dashboard/signin"


async def test_the_enrolment_needs_a_right_code_and_expires(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    await dash.get("/dashboard/account")
    page = await dash.post("/dashboard/account/totp/start")
    found = SECRET.search(page.text)
    assert found
    secret = found.group(1).replace(" ", "")
    wrong = await dash.post("/dashboard/account/totp/confirm", {"code": "12345"})
    assert wrong.status_code == 400
    assert 'aria-invalid="true"' in wrong.text
    clock.advance(secondfactor.ENROL_SECONDS + 1)
    late = await dash.post(
        "/dashboard/account/totp/confirm", {"code": totp.code_at(secret, totp.step_of(clock.now()))}
    )
    assert late.url.path == "/dashboard/account"
    assert "has expired" in text_of(late.text)
    assert await services.db.fetch_value("SELECT totp_secret FROM accounts") is None


async def test_turning_it_off_needs_the_password_and_a_code(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    secret, codes = await enrol(dash, clock)
    await dash.get("/dashboard/account")
    clock.advance(60)
    code = totp.code_at(secret, totp.step_of(clock.now()))
    no_password = await dash.post("/dashboard/account/totp/disable", {"password": "wrong one", "code": code})
    assert no_password.status_code == 400
    assert "The password is wrong." in text_of(no_password.text)
    no_code = await dash.post("/dashboard/account/totp/disable", {"password": PASSWORD, "code": "000000"})
    assert no_code.status_code == 400
    assert await services.db.fetch_value("SELECT totp_secret FROM accounts") is not None
    off = await dash.post("/dashboard/account/totp/disable", {"password": PASSWORD, "code": codes[0]})
    assert "Two-step sign-in is off." in text_of(off.text)
    assert await services.db.fetch_value("SELECT totp_secret FROM accounts") is None
    assert await services.db.fetch_value("SELECT COUNT(*) FROM recovery_codes") == 0
    async with browser(services) as other:
        assert (await other.sign_in("alice")).url.path == "/dashboard/apps"


async def test_new_recovery_codes_replace_the_old_ones(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    secret, old = await enrol(dash, clock)
    await dash.get("/dashboard/account")
    clock.advance(60)
    page = await dash.post(
        "/dashboard/account/recovery-codes",
        {"password": PASSWORD, "code": totp.code_at(secret, totp.step_of(clock.now()))},
    )
    new = CODE.findall(page.text)
    assert len(new) == 10
    assert not set(new) & set(old)
    async with browser(services) as other:
        await other.sign_in("alice")
        assert (await other.post("/dashboard/signin/second-factor", {"code": old[0]})).status_code == 401
        assert (
            await other.post("/dashboard/signin/second-factor", {"code": new[0]})
        ).url.path == "/dashboard/apps"


async def test_changing_the_password_ends_every_other_session(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    async with browser(services) as laptop, browser(services) as phone:
        await laptop.sign_in("alice")
        await phone.sign_in("alice")
        await dash.sign_in("alice")
        await dash.get("/dashboard/account")
        differ = await dash.post(
            "/dashboard/account/password",
            {"current": PASSWORD, "new": "a new passphrase", "confirm": "other"},
        )
        assert differ.status_code == 400
        wrong = await dash.post(
            "/dashboard/account/password",
            {"current": "not it at all", "new": "a new passphrase", "confirm": "a new passphrase"},
        )
        assert wrong.status_code == 400
        done = await dash.post(
            "/dashboard/account/password",
            {"current": PASSWORD, "new": "a new passphrase", "confirm": "a new passphrase"},
        )
        assert "Your password is changed; 2 other sessions signed out." in text_of(done.text)
        assert (await laptop.get("/dashboard/account")).url.path == "/dashboard/signin"
        assert (await phone.get("/dashboard/account")).url.path == "/dashboard/signin"
        assert (await dash.get("/dashboard/account")).url.path == "/dashboard/account"
    async with browser(services) as other:
        assert (await other.sign_in("alice")).status_code == 401
        assert (await other.sign_in("alice", "a new passphrase")).url.path == "/dashboard/apps"


async def test_the_account_lists_its_sessions_and_ends_one_or_all_others(
    services: Services, dash: Dashboard
) -> None:
    await make_owner(services)
    async with browser(services) as laptop, browser(services) as phone:
        await laptop.sign_in("alice")
        await phone.sign_in("alice")
        await dash.sign_in("alice")
        page = await dash.get("/dashboard/account")
        assert page.text.count('aria-label="Sign out session') == 2
        first_other = await services.db.fetch_value("SELECT MIN(id) FROM dashboard_sessions")
        done = await dash.post("/dashboard/account/sessions/end", {"session": str(first_other)})
        assert "That session is signed out." in text_of(done.text)
        assert (await laptop.get("/dashboard/account")).url.path == "/dashboard/signin"
        ask = await dash.post("/dashboard/account/sessions/end-others")
        assert "Every other browser signed in to your account will be signed out." in text_of(ask.text)
        assert (await phone.get("/dashboard/account")).url.path == "/dashboard/account"
        await dash.get("/dashboard/account")
        done = await dash.post("/dashboard/account/sessions/end-others", {"confirmed": "1"})
        assert "1 other session signed out." in text_of(done.text)
        assert (await phone.get("/dashboard/account")).url.path == "/dashboard/signin"
