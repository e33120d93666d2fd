"""CSRF, Origin checks and the security headers of every dashboard answer."""

from __future__ import annotations

import pytest

from licensegate.services import Services
from tests.web.pages import PASSWORD, Dashboard, make_owner, text_of

pytestmark = pytest.mark.anyio


async def _signed_in(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    await make_owner(services, "other")
    await dash.sign_in("alice")
    await dash.get("/dashboard/account")


async def test_a_post_without_the_csrf_token_is_refused(services: Services, dash: Dashboard) -> None:
    await _signed_in(services, dash)
    page = await dash.post("/dashboard/account/sessions/end-others", {"confirmed": "1"}, csrf=False)
    assert page.status_code == 403
    assert "This form expired or was sent from another site" in text_of(page.text)


async def test_a_post_with_another_sessions_token_is_refused(services: Services, dash: Dashboard) -> None:
    await _signed_in(services, dash)
    page = await dash.post("/dashboard/signout", {"csrf": "0" * 64})
    assert page.status_code == 403
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 1


async def test_a_post_from_another_origin_is_refused_even_with_the_token(
    services: Services, dash: Dashboard
) -> None:
    await _signed_in(services, dash)
    for headers in ({"origin": "https://evil.example"}, {"origin": "null"}, {"sec-fetch-site": "cross-site"}):
        page = await dash.post("/dashboard/signout", headers=headers)
        assert page.status_code == 403, headers
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 1
    same = await dash.post("/dashboard/signout", headers={"origin": "http://testserver"})
    assert same.url.path == "/dashboard/signin"
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 0


async def test_the_htmx_header_carries_the_token_too(services: Services, dash: Dashboard) -> None:
    await _signed_in(services, dash)
    response = await dash.http.post(
        "/dashboard/signout",
        headers={"x-csrf-token": dash.csrf, "hx-request": "true"},
        follow_redirects=False,
    )
    assert response.status_code == 303


async def test_the_sign_in_form_is_protected_before_any_session(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    page = await dash.post("/dashboard/signin", {"username": "alice", "password": PASSWORD}, csrf=False)
    assert page.status_code == 403
    assert dash.cookie() is None
    await dash.get("/dashboard/signin")
    forged = await dash.post(
        "/dashboard/signin",
        {"username": "alice", "password": PASSWORD},
        headers={"origin": "https://evil.example"},
    )
    assert forged.status_code == 403
    assert dash.cookie() is None


async def test_nothing_changes_state_on_get(services: Services, dash: Dashboard) -> None:
    await _signed_in(services, dash)
    for path in ("/dashboard/signout", "/dashboard/account/password", "/dashboard/account/totp/start"):
        assert (await dash.http.get(path)).status_code == 405, path
    assert await services.db.fetch_value("SELECT COUNT(*) FROM dashboard_sessions") == 1


async def test_pages_carry_a_strict_content_security_policy(services: Services, dash: Dashboard) -> None:
    await _signed_in(services, dash)
    for path in ("/dashboard/account", "/dashboard/signin", "/dashboard/nowhere"):
        response = await dash.http.get(path)
        csp = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp
        assert "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["referrer-policy"] == "same-origin"
        assert response.headers["cache-control"] == "no-store"
        assert "<script>" not in response.text
        assert " on" + "click=" not in response.text


async def test_static_files_are_cacheable_and_sniff_proof(services: Services, dash: Dashboard) -> None:
    page = await dash.get("/dashboard/signin")
    for name in ("app.css", "app.js", "vendor/htmx.min.js"):
        start = page.text.index(f"/dashboard/static/{name}?v=")
        url = page.text[start : page.text.index('"', start)]
        response = await dash.http.get(url)
        assert response.status_code == 200, url
        assert "immutable" in response.headers["cache-control"]
        assert response.headers["x-content-type-options"] == "nosniff"


async def test_an_unknown_dashboard_address_is_an_html_404(dash: Dashboard) -> None:
    response = await dash.http.get("/dashboard/no/such/page")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "There is no page at this address." in text_of(response.text)


async def test_an_oversized_form_is_refused(services: Services, dash: Dashboard) -> None:
    await make_owner(services)
    await dash.get("/dashboard/signin")
    page = await dash.post("/dashboard/signin", {"username": "alice", "password": "x" * 300_000})
    assert page.status_code == 413
    assert "The request body is too large" in text_of(page.text)
