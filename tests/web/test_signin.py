"""Signing in and out of the dashboard, sessions and their timeouts (in-process, both databases)."""

from __future__ import annotations

import pytest

from licensegate import ids
from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.web.pages import PASSWORD, Dashboard, browser, make_owner, text_of

pytestmark = pytest.mark.anyio

FAILED = "Wrong username or password."


async def test_the_root_leads_to_the_sign_in_page_and_back_after_it(
    services: Services, dash: Dashboard
) -> None:
    await make_owner(services)
    first = await dash.http.get("/")
    assert (first.status_code, first.headers["location"]) == (307, "/dashboard/")
    page = await dash.get("/")
    assert page.url.path == "/dashboard/signin"
    assert page.url.params["next"] == "/dashboard/"
    assert "Sign in" in text_of(page.text)
    signed_in = await dash.post(
        "/dashboard/signin", {"username": "alice", "password": PASSWORD, "next": "/dashboard/account"}
    )
    assert signed_in.status_code == 200
    assert signed_in.url.path == "/dashboard/account"
    assert "Signed in as alice (owner)" in text_of(signed_in.text)


async def test_the_session_cookie_is_http_only_lax_and_only_its_digest_is_stored(
    services: Services, dash: Dashboard
) -> None:
    await make_owner(services)
    await dash.get("/dashboard/signin")
    response = await dash.post("/dashboard/signin", {"username": "alice", "password": PASSWORD}, follow=False)
    assert response.status_code == 303
    cookie = next(
        v for k, v in response.headers.multi_items() if k == "set-cookie" and v.startswith("lg_session=")
    )
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie
    assert "Path=/" in cookie
    assert "Secure" not in cookie  # plain HTTP: the documented fallback name, without Secure
    token = dash.cookie()
    assert token is not None
    row = await services.db.fetch_one("SELECT token_hash FROM dashboard_sessions")
    assert row is not None
    assert row["token_hash"] == ids.digest(token)
    assert token not in str(row)


async def test_over_https_the_cookie_is_a_host_prefixed_secure_cookie(services: Services) -> None:
    await make_owner(services)
    async with browser(services, base_url="https://testserver") as dash:
        await dash.get("/dashboard/signin")
        response = await dash.post(
            "/dashboard/signin", {"username": "alice", "password": PASSWORD}, follow=False
        )
        cookie = next(v for k, v in response.headers.multi_items() if k == "set-cookie" and "lg_session" in v)
        assert cookie.startswith("__Host-lg_session=")
        assert "Secure" in cookie
        assert "Domain" not in cookie
        assert response.headers["strict-transport-security"].startswith("max-age=")
        page = await dash.get("/dashboard/account")
        assert page.url.path == "/dashboard/account"


async def test_every_failure_reads_the_same(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    await make_owner(services, "bob")
    # Raw: no operation disables an owner's account (only a team member's).
    await services.db.execute("UPDATE accounts SET disabled = 1 WHERE username = 'bob'")
    for username, password in (
        ("alice", "wrong password"),
        ("nobody", PASSWORD),
        ("bob", PASSWORD),
        ("", ""),
    ):
        await dash.get("/dashboard/signin")
        page = await dash.post("/dashboard/signin", {"username": username, "password": password})
        assert page.status_code == 401
        assert FAILED in text_of(page.text)
        assert dash.cookie() is None


async def test_owners_without_a_password_and_team_members_without_a_team_cannot_sign_in(
    services: Services, dash: Dashboard
) -> None:
    from licensegate.domain.apps import create_application

    await create_application(
        services.db, services.secrets, owner="nopass", name="app", now=services.clock.now()
    )
    await dash.get("/dashboard/signin")
    page = await dash.post("/dashboard/signin", {"username": "nopass", "password": ""})
    assert page.status_code == 401
    assert FAILED in text_of(page.text)


async def test_attempts_are_throttled_per_username(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    limit = services.settings.dashboard_signin_limit
    for _ in range(limit):
        await dash.get("/dashboard/signin")
        page = await dash.post("/dashboard/signin", {"username": "alice", "password": "nope nope"})
        assert page.status_code == 401
    await dash.get("/dashboard/signin")
    page = await dash.post("/dashboard/signin", {"username": "alice", "password": PASSWORD})
    assert page.status_code == 429
    assert "Too many sign-in attempts" in text_of(page.text)
    assert int(page.headers["retry-after"]) > 0
    assert dash.cookie() is None


async def test_attempts_are_throttled_per_address(services: Services) -> None:
    services.settings = services.settings.with_overrides(dashboard_signin_address_limit=3)
    await make_owner(services)
    async with browser(services) as dash:
        for name in ("a1", "a2", "a3"):
            await dash.get("/dashboard/signin")
            assert (
                await dash.post("/dashboard/signin", {"username": name, "password": "x"})
            ).status_code == 401
        await dash.get("/dashboard/signin")
        page = await dash.post("/dashboard/signin", {"username": "alice", "password": PASSWORD})
        assert page.status_code == 429


async def test_signing_in_again_issues_a_new_token_and_ends_the_old_session(
    services: Services, dash: Dashboard
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    first = dash.cookie()
    await dash.sign_in("alice")
    second = dash.cookie()
    assert first is not None
    assert second is not None
    assert first != second
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 1


async def test_signing_out_ends_the_session_on_the_server(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    token = dash.cookie()
    await dash.get("/dashboard/account")
    page = await dash.post("/dashboard/signout")
    assert page.url.path == "/dashboard/signin"
    assert "You are signed out." in text_of(page.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 0
    # The old cookie, replayed, opens nothing.
    async with browser(services) as other:
        other.http.cookies.set("lg_session", token or "")
        page = await other.get("/dashboard/account")
        assert page.url.path == "/dashboard/signin"


async def test_signing_out_is_a_post(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    response = await dash.http.get("/dashboard/signout")
    assert response.status_code == 405
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 1


async def test_a_session_ends_after_the_idle_timeout(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    idle = services.settings.dashboard_idle_timeout
    clock.advance(idle - 61)
    assert (await dash.get("/dashboard/account")).url.path == "/dashboard/account"  # activity renews it
    clock.advance(idle - 61)
    assert (await dash.get("/dashboard/account")).url.path == "/dashboard/account"
    clock.advance(idle)
    page = await dash.get("/dashboard/account")
    assert page.url.path == "/dashboard/signin"
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 0


async def test_a_session_ends_at_its_absolute_deadline_however_active(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    lifetime = services.settings.dashboard_session_lifetime
    step = services.settings.dashboard_idle_timeout // 2
    for _ in range(lifetime // step - 1):
        clock.advance(step)
        assert (await dash.get("/dashboard/account")).url.path == "/dashboard/account"
    clock.advance(step)
    assert (await dash.get("/dashboard/account")).url.path == "/dashboard/signin"


async def test_a_post_after_the_session_ended_asks_to_sign_in_again(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    await dash.get("/dashboard/account")
    clock.advance(services.settings.dashboard_session_lifetime)
    page = await dash.post("/dashboard/account/sessions/end-others")
    assert page.url.path == "/dashboard/signin"
    assert "Your session has ended" in text_of(page.text)


async def test_a_signed_in_visit_to_the_sign_in_page_goes_on(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    await dash.sign_in("alice")
    page = await dash.get("/dashboard/signin", params={"next": "/dashboard/account"})
    assert page.url.path == "/dashboard/account"


async def test_next_never_leads_to_another_site(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    await dash.get("/dashboard/signin")
    for target in ("https://evil.example/", "//evil.example/", "/\\evil.example", "/api/seller/"):
        response = await dash.post(
            "/dashboard/signin", {"username": "alice", "password": PASSWORD, "next": target}, follow=False
        )
        assert response.headers["location"] == "/dashboard/", target
        await dash.get("/dashboard/signin")
