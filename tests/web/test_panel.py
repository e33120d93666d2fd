"""The customer panel (`/panel/<id>/`), for an application's end users: there only while the
application turns it on; sign-in with the application's username and password (wrong password,
banned user, CSRF and another site's form refused; its own cookie, which opens nothing of the
dashboard); the subscriptions, the download link and the buttons in their order; Reset HWID
within the cooldown (the application's or the user's own); and the web-loader token: random,
stored hashed, bound to the panel session, valid two minutes, used once by a client login."""

from __future__ import annotations

import hashlib
import re

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.domain import totp
from licensegate.services import Services
from licensegate.store import sessions as session_store
from licensegate.store import users as user_store
from tests.helpers import Client, make_user
from tests.imported import PASSWORD as IMPORTED_PASSWORD
from tests.imported import insert_user, keyauth_hash
from tests.web.pages import Dashboard, Shop, browser, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio
PASSWORD = "kim's long password"
HWID = "S-1-5-21-panel-0001"


def panel(shop: Shop, action: str = "") -> str:
    return f"/panel/{shop.app_id}/{action}"


async def a_shop_with_a_panel(services: Services) -> tuple[Shop, int]:
    """The panel on, a download link, two buttons, and kim (password, one HWID)."""
    shop = await make_shop(services)
    await seller_op(
        services, shop, "updatesettings", customerpanel="1", webdownload="https://example.com/loader.exe"
    )
    await seller_op(services, shop, "addbutton", value="start", text="Start the game")
    await seller_op(services, shop, "addbutton", value="close", text="Close")
    await seller_op(services, shop, "movebutton", value="close", position="1")
    kim = await make_user(services, shop.app_id, "kim", password=PASSWORD)
    await user_store.add_hwid(services.db, kim, HWID, services.clock.now())
    return shop, kim


async def sign_in(
    page: Dashboard, shop: Shop, username: str = "kim", password: str = PASSWORD
) -> httpx.Response:
    await page.get(panel(shop))
    return await page.post(panel(shop, "signin"), {"username": username, "password": password})


async def test_the_panel_is_there_only_while_the_application_turns_it_on(services: Services) -> None:
    shop = await make_shop(services)
    async with browser(services) as page:
        off = await page.get(panel(shop))
        assert off.status_code == 404
        assert "No customer panel here" in text_of(off.text)
        assert (await page.get("/panel/999999/")).status_code == 404
        await seller_op(services, shop, "updatesettings", customerpanel="1")
        on = await page.get(panel(shop))
        assert on.status_code == 200
        assert "Sign in" in text_of(on.text)
        assert "http://localhost:1337" in on.headers["content-security-policy"]
        assert on.headers["x-frame-options"] == "DENY"


async def test_sign_in_with_the_applications_username_and_password(services: Services) -> None:
    shop, _kim = await a_shop_with_a_panel(services)
    async with browser(services) as page:
        wrong = await sign_in(page, shop, password="not it")
        assert wrong.status_code == 403
        assert "Invalid username or password." in text_of(wrong.text)
        assert page.cookie(f"lg_panel_{shop.app_id}") is None
        unknown = await sign_in(page, shop, username="nobody")
        assert unknown.status_code == 403
        assert "Invalid username or password." in text_of(unknown.text)

        await page.get(panel(shop))
        forged = await page.post(panel(shop, "signin"), {"username": "kim", "password": PASSWORD}, csrf=False)
        assert forged.status_code == 403
        foreign = await page.post(
            panel(shop, "signin"),
            {"username": "kim", "password": PASSWORD},
            headers={"origin": "https://evil.example"},
        )
        assert foreign.status_code == 403
        assert page.cookie(f"lg_panel_{shop.app_id}") is None

        signed = await sign_in(page, shop)
        assert signed.status_code == 200
        shown = text_of(signed.text)
        assert "You are signed in." in shown
        assert "Your subscriptions" in shown
        assert "default" in shown
        assert 'href="https://example.com/loader.exe"' in signed.text
        assert re.findall(r'data-value="([^"]+)"', signed.text) == ["close", "start"]
        assert "Computers your account is bound to: 1." in shown
        assert page.cookie(f"lg_panel_{shop.app_id}") is not None
        assert page.cookie("lg_session") is None
        # The panel's cookie opens nothing of the sellers' dashboard.
        dashboard = await page.http.get("/dashboard/", follow_redirects=False)
        assert dashboard.status_code == 303
        stored = await services.db.fetch_value("SELECT token_hash FROM panel_sessions")
        assert stored == hashlib.sha256(page.cookie(f"lg_panel_{shop.app_id}").encode()).hexdigest()  # type: ignore[union-attr]

        out = await page.post(panel(shop, "signout"), {})
        assert "You are signed out." in text_of(out.text)
        assert await services.db.fetch_value("SELECT COUNT(*) FROM panel_sessions") == 0

        # A new password (set by the seller) ends the panel's sessions.
        await sign_in(page, shop)
        await seller_op(services, shop, "resetpw", user="kim", passwd="kim's new password")
        assert "Sign in" in text_of((await page.get(panel(shop))).text)
        assert (await page.get("/panel/99999999999999999999999/")).status_code == 404
        await sign_in(page, shop, password="kim's new password")

        # A disabled application: the panel says so (with the application's message).
        await seller_op(services, shop, "updatesettings", enabled="0")
        disabled = await page.get(panel(shop))
        assert disabled.status_code == 403
        assert "This application is disabled" in text_of(disabled.text)
        await seller_op(services, shop, "updatesettings", enabled="1")

        # Turned off: the panel is gone, sessions or not.
        await sign_in(page, shop)
        await seller_op(services, shop, "updatesettings", customerpanel="0")
        assert (await page.get(panel(shop))).status_code == 404


async def test_a_user_imported_from_keyauth_signs_in_with_their_bcrypt_password(services: Services) -> None:
    shop, _kim = await a_shop_with_a_panel(services)
    lee = await insert_user(services.db, shop.app_id, password_hash=keyauth_hash(IMPORTED_PASSWORD))
    await seller_op(services, shop, "extend", user="lee", sub="default", expiry="30")
    async with browser(services) as page:
        wrong = await sign_in(page, shop, "lee", "not it")
        assert wrong.status_code == 403
        assert await services.db.fetch_value("SELECT failed_logins FROM users WHERE id = ?", lee) == 1
        signed = await sign_in(page, shop, "lee", IMPORTED_PASSWORD)
        assert signed.status_code == 200
        assert "You are signed in." in text_of(signed.text)
        assert "Computers your account is bound to: 1." in text_of(signed.text)  # the appended string
    rehashed = await services.db.fetch_value("SELECT password_hash FROM users WHERE id = ?", lee)
    assert rehashed.startswith("$argon2id$")


async def test_a_banned_user_cannot_sign_in_and_a_ban_ends_the_panel_session(services: Services) -> None:
    shop, _kim = await a_shop_with_a_panel(services)
    async with browser(services) as page:
        await sign_in(page, shop)
        await seller_op(services, shop, "banuser", user="kim", reason="chargeback")
        again = await page.get(panel(shop))
        assert "Sign in" in text_of(again.text)
        refused = await sign_in(page, shop)
        assert refused.status_code == 403
        assert "chargeback" in text_of(refused.text)


async def test_reset_hwid_honours_the_cooldown(services: Services, clock: MovableClock) -> None:
    shop, kim = await a_shop_with_a_panel(services)
    await seller_op(services, shop, "updatesettings", hwidcooldown="3600")
    async with browser(services) as page:
        await sign_in(page, shop)
        asked = await page.post(panel(shop, "reset-hwid"), {})
        assert "Reset your HWID?" in text_of(asked.text)
        assert await user_store.hwids(services.db, kim) == [HWID]
        # A program of kim's logged in: the reset ends its session (the next online check decides).
        now = clock.now()
        await session_store.start(
            services.db, session_id="program", app_id=shop.app_id, ip="::1", now=now, expires_at=now + 3600
        )
        await services.db.execute("UPDATE sessions SET user_id = ?, validated = 1 WHERE id = 'program'", kim)
        done = await page.post(panel(shop, "reset-hwid"), {"confirmed": "1"})
        assert "Your HWID is reset" in text_of(done.text)
        assert await user_store.hwids(services.db, kim) == []
        assert await session_store.open_ids_of_user(services.db, shop.app_id, kim, clock.now()) == []
        assert "You can reset your HWID again in 1 hour." in text_of(done.text)

        clock.advance(1000)
        await user_store.add_hwid(services.db, kim, "S-1-5-21-panel-0002", clock.now())
        early = await page.post(panel(shop, "reset-hwid"), {"confirmed": "1"})
        assert early.status_code == 409
        assert "you can reset it again in 43 minutes 20 seconds" in text_of(early.text)
        assert await user_store.hwids(services.db, kim) == ["S-1-5-21-panel-0002"]

        clock.advance(1300)  # (the panel session ends after 30 idle minutes)
        await page.get(panel(shop))
        clock.advance(1300)
        again = await page.post(panel(shop, "reset-hwid"), {"confirmed": "1"})
        assert "Your HWID is reset" in text_of(again.text)
        # The user's own cooldown wins over the application's.
        await seller_op(services, shop, "setcooldown", user="kim", cooldown="86400")
        later = await page.get(panel(shop))
        assert "You can reset your HWID again in 1 day." in text_of(later.text)


async def issue(page: Dashboard, shop: Shop) -> httpx.Response:
    return await page.http.post(panel(shop, "handoff"), headers={"x-csrf-token": page.csrf})


async def test_the_loader_token_is_single_use_short_lived_and_bound(
    services: Services, clock: MovableClock
) -> None:
    shop, _kim = await a_shop_with_a_panel(services)
    await make_user(services, shop.app_id, "lee", password="lee's password")
    async with browser(services) as page:
        # No panel session: no token.
        await page.get(panel(shop))
        assert (await issue(page, shop)).status_code == 401
        await sign_in(page, shop)
        assert (await page.http.post(panel(shop, "handoff"))).status_code == 403  # no CSRF token
        handed = await issue(page, shop)
        assert handed.status_code == 200
        body = handed.json()
        assert body["user"] == "kim"
        assert body["expires_in"] == 120
        assert body["port"] == 1337
        token = body["token"]
        assert re.fullmatch(r"[A-Za-z0-9_-]{32}", token)
        stored = await services.db.fetch_value("SELECT handoff_hash FROM panel_sessions")
        assert stored == hashlib.sha256(token.encode()).hexdigest()

        program = Client(page.http, shop.ownerid, "Shop")
        await program.init()
        logged = await program.ok("login", username="kim", token=token, hwid=HWID)
        assert logged["info"]["username"] == "kim"
        assert await services.db.fetch_value("SELECT handoff_hash FROM panel_sessions") is None
        # Once only.
        again = program.fresh()
        await again.init()
        refused = await again.fails("login", 403, "loader_token_invalid", username="kim", token=token)
        assert "customer panel" in refused["message"]

        # Expired after two minutes.
        late = (await issue(page, shop)).json()["token"]
        clock.advance(121)
        await again.fails("login", 403, "loader_token_invalid", username="kim", token=late, hwid=HWID)

        # Another user's name: refused, and the token is used up.
        theirs = (await issue(page, shop)).json()["token"]
        await again.fails("login", 403, "loader_token_invalid", username="lee", token=theirs)
        await again.fails("login", 403, "loader_token_invalid", username="kim", token=theirs, hwid=HWID)

        # A new token replaces the one before; signing out drops it.
        first = (await issue(page, shop)).json()["token"]
        second = (await issue(page, shop)).json()["token"]
        await again.fails("login", 403, "loader_token_invalid", username="kim", token=first, hwid=HWID)
        await page.post(panel(shop, "signout"), {})
        await again.fails("login", 403, "loader_token_invalid", username="kim", token=second, hwid=HWID)

        # Neither `pass` nor `token`: the password is what is missing.
        await again.fails("login", 400, "missing_parameter", username="kim")


async def test_a_token_login_keeps_the_rules_of_every_login(services: Services) -> None:
    shop, _kim = await a_shop_with_a_panel(services)
    async with browser(services) as page:
        await sign_in(page, shop)
        program = Client(page.http, shop.ownerid, "Shop")
        await program.init()
        # Another computer than kim's only HWID: the HWID lock refuses it (and the token is used).
        token = (await issue(page, shop)).json()["token"]
        await program.fails("login", 403, "hwid_mismatch", username="kim", token=token, hwid="OTHER-PC-0001")
        await program.fails("login", 403, "loader_token_invalid", username="kim", token=token, hwid=HWID)
        # The session records the login, never the token.
        token = (await issue(page, shop)).json()["token"]
        await program.ok("login", username="kim", token=token, hwid=HWID)
        row = await services.db.fetch_one(
            "SELECT * FROM sessions WHERE id = ?", hashlib.sha256(program.sessionid.encode()).hexdigest()
        )
        assert row is not None
        assert row["validated"] == 1
        assert row["client_token"] is None
        assert token not in str(dict(row))


async def test_a_user_with_two_factor_codes_gives_one_to_the_panel_not_to_the_loader(
    services: Services, clock: MovableClock
) -> None:
    shop, _kim = await a_shop_with_a_panel(services)
    async with browser(services) as page:
        program = Client(page.http, shop.ownerid, "Shop")
        await program.init()
        await program.ok("login", username="kim", hwid=HWID, **{"pass": PASSWORD})
        secret = (await program.ok("2faenable"))["2fa"]["secret_code"]
        await program.ok("2faenable", code=totp.code_at(secret, totp.step_of(clock.now())))
        clock.advance(30)

        asked = await sign_in(page, shop)
        assert asked.status_code == 403
        assert "two-factor" in text_of(asked.text).lower()
        assert page.cookie(f"lg_panel_{shop.app_id}") is None
        await page.get(panel(shop))
        code = totp.code_at(secret, totp.step_of(clock.now()))
        signed = await page.post(
            panel(shop, "signin"), {"username": "kim", "password": PASSWORD, "code": code}
        )
        assert "You are signed in." in text_of(signed.text)
        # The panel checked the code: the loader's token login needs none.
        token = (await issue(page, shop)).json()["token"]
        loader = program.fresh()
        await loader.init()
        await loader.ok("login", username="kim", token=token, hwid=HWID)
