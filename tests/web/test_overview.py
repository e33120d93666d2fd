"""The application's overview page: its charts (as SVG with a title, a description and the numbers
in a table), users online (a fragment htmx refreshes), pausing and unpausing through the seller
operations, and who sees what."""

from __future__ import annotations

import re

import httpx
import pytest

from licensegate.app import build_app
from licensegate.clock import MovableClock
from licensegate.domain.apps import create_application
from licensegate.services import Services
from tests.helpers import Client
from tests.web.pages import (
    Dashboard,
    browser,
    make_keys,
    make_member,
    make_owner,
    make_shop,
    seller_op,
    text_of,
)

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
CHARTS = (
    "Logins per day, last 30 days",
    "New users and keys redeemed per day, last 30 days",
    "License keys by status",
    "Users by status",
    "Subscriptions expiring, next 30 days",
    "Subscriptions expiring, next 12 months",
    "Tamper reports per day, last 30 days",
)


def chart_titles(page: str) -> list[str]:
    return re.findall(r'<title id="chart-[a-z-]+-title">([^<]+)</title>', page)


async def license_login(services: Services, dash: Dashboard, ownerid: str, key: str) -> None:
    client = Client(dash.http, ownerid, "Shop")
    await client.init()
    await client.ok("license", key=key, hwid=HWID)


async def test_the_owner_sees_every_chart_with_its_numbers(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    keys = await make_keys(services, shop, 3)
    await license_login(services, dash, shop.ownerid, keys[0])
    await dash.sign_in("alice")
    page = await dash.get(f"/dashboard/apps/{shop.app_id}/")
    assert page.status_code == 200
    assert chart_titles(page.text) == list(CHARTS)
    for drawn in re.findall(r'<svg viewBox="[^"]+" role="img" aria-labelledby="([^"]+)"', page.text):
        title, desc = drawn.split()
        assert f'id="{title}"' in page.text
        assert f'id="{desc}"' in page.text
    text = text_of(page.text)
    assert "Active : programs can start and log in." in text
    assert "Users online 1 Sessions logged in 1 Machines in use 1 Credits spent today 0" in text
    # The numbers of the charts, in their tables (the worker's own login counts are written first).
    keys_table = page.text.split("<caption>License keys by status</caption>", 1)[1].split("</table>", 1)[0]
    assert re.sub(r"\s+", " ", text_of(keys_table)) == "Status Keys Not used 2 Used 1 Banned 0"
    logins_table = page.text.split("<caption>Logins per day, last 30 days</caption>", 1)[1]
    assert '<th scope="col" class="num">Success</th>' in logins_table.split("</thead>", 1)[0]
    assert f'href="/dashboard/apps/{shop.app_id}/integration"' in page.text
    nav = page.text.split('<nav class="side"', 1)[1].split("</nav>", 1)[0]
    assert f'<a href="/dashboard/apps/{shop.app_id}/" aria-current="page">Overview</a>' in nav


async def test_seats_in_use_and_credits_spent_today(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    """Two sessions on two machines and one on the first again; credits spent today, counted in
    memory and written when the figures are shown; yesterday's are not today's."""
    shop = await make_shop(services)
    [key] = await make_keys(services, shop, 1)
    await seller_op(services, shop, "updatesettings", hwidcheck="0")
    await seller_op(services, shop, "setcredits", key=key, balance="50")
    programs = []
    for hwid in (HWID, HWID + "-2", HWID):
        client = Client(dash.http, shop.ownerid, "Shop")
        await client.init()
        await client.ok("license", key=key, hwid=hwid)
        programs.append(client)
    await programs[0].ok("spend", cost=3)
    await dash.sign_in("alice")
    online = f"/dashboard/apps/{shop.app_id}/online"
    text = text_of((await dash.get(online, headers={"HX-Request": "true"})).text)
    assert "Sessions logged in 3 Machines in use 2 Credits spent today 3" in text
    clock.advance(86_400)
    tomorrow = Client(dash.http, shop.ownerid, "Shop")
    await tomorrow.init()
    await tomorrow.ok("license", key=key, hwid=HWID)
    await tomorrow.ok("spend", cost=4)
    await dash.sign_in("alice")  # the dashboard session of yesterday has ended
    text = text_of((await dash.get(online, headers={"HX-Request": "true"})).text)
    assert "Credits spent today 4" in text


async def test_online_now_is_a_fragment_for_htmx_and_the_page_without_script(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    fragment = await dash.get(f"/dashboard/apps/{shop.app_id}/online", headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert fragment.text.lstrip().startswith('<section class="card" id="online"')
    assert 'hx-trigger="every 10s"' in fragment.text
    assert "<html" not in fragment.text
    opened = await dash.get(f"/dashboard/apps/{shop.app_id}/online")
    assert opened.url.path == f"/dashboard/apps/{shop.app_id}/"


async def test_pausing_asks_first_then_freezes_time_and_unpausing_gives_it_back(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    page = await dash.get(f"/dashboard/apps/{shop.app_id}/")
    assert 'data-confirm="Pause Shop? While it is paused' in page.text
    asked = await dash.post(f"/dashboard/apps/{shop.app_id}/pause")
    assert asked.status_code == 200
    assert "nobody's subscription runs down" in text_of(asked.text)
    assert await services.db.fetch_value("SELECT paused_at FROM apps WHERE id = ?", shop.app_id) is None
    done = await dash.post(f"/dashboard/apps/{shop.app_id}/pause", {"confirmed": "1"})
    assert done.url.path == f"/dashboard/apps/{shop.app_id}/"
    assert "Shop is paused" in text_of(done.text)
    assert "Unpause the application" in done.text
    again = await dash.post(f"/dashboard/apps/{shop.app_id}/pause", {"confirmed": "1"})
    assert "already paused" in text_of(again.text).lower()
    services.clock.advance(600)  # type: ignore[attr-defined]
    resumed = await dash.post(f"/dashboard/apps/{shop.app_id}/unpause", {"confirmed": "1"})
    assert "got back 10 minutes" in text_of(resumed.text)
    actions = await services.db.fetch_all(
        "SELECT actor, action FROM audit_log WHERE app_id = ? ORDER BY id", shop.app_id
    )
    assert actions == [
        {"actor": "alice (dashboard)", "action": "pauseapp"},
        {"actor": "alice (dashboard)", "action": "unpauseapp"},
    ]


async def test_a_manager_sees_only_the_figures_of_its_areas(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "lu", permissions="licenses")
    await make_member(services, shop, "manager", "sam", permissions="users,sessions,settings")
    await make_member(services, shop, "reseller", "rey")
    async with browser(services) as dash:
        await dash.sign_in("lu")
        page = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert page.status_code == 200
        assert chart_titles(page.text) == ["Keys redeemed per day, last 30 days", "License keys by status"]
        assert "Online now" not in text_of(page.text)
        assert "Pause the application" not in page.text
        online = await dash.get(f"/dashboard/apps/{shop.app_id}/online", headers={"HX-Request": "true"})
        assert online.status_code == 403
        refused = await dash.post(f"/dashboard/apps/{shop.app_id}/pause", {"confirmed": "1"})
        assert refused.status_code == 403
    async with browser(services) as dash:
        await dash.sign_in("sam")
        page = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert "License keys by status" not in chart_titles(page.text)
        assert "Logins per day, last 30 days" in chart_titles(page.text)
        assert "New users per day, last 30 days" in chart_titles(page.text)
        assert "Online now" in text_of(page.text)
        await dash.post(f"/dashboard/apps/{shop.app_id}/pause", {"confirmed": "1"})
        assert await services.db.fetch_value("SELECT paused_at FROM apps WHERE id = ?", shop.app_id)
    async with browser(services) as dash:
        await dash.sign_in("rey")
        page = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert chart_titles(page.text) == []
        assert "The application's figures are for its owner and managers." in text_of(page.text)


async def test_another_owner_gets_403_everywhere(services: Services) -> None:
    shop = await make_shop(services)
    await make_owner(services, "mallory")
    await create_application(
        services.db, services.secrets, owner="mallory", name="Mine", now=services.clock.now()
    )
    async with browser(services) as dash:
        await dash.sign_in("mallory")
        for path in ("/", "/online", "/integration"):
            answer = await dash.get(f"/dashboard/apps/{shop.app_id}{path}", headers={"HX-Request": "true"})
            assert answer.status_code == 403, path
            assert "Shop" not in text_of(answer.text)
        await dash.get("/dashboard/apps")
        for action in ("pause", "unpause"):
            refused = await dash.post(f"/dashboard/apps/{shop.app_id}/{action}", {"confirmed": "1"})
            assert refused.status_code == 403, action
    assert await services.db.fetch_value("SELECT paused_at FROM apps WHERE id = ?", shop.app_id) is None


async def test_the_overview_needs_a_session(services: Services) -> None:
    shop = await make_shop(services)
    transport = httpx.ASGITransport(app=build_app(services.settings, services))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        answer = await http.get(f"/dashboard/apps/{shop.app_id}/")
        assert answer.status_code == 303
        assert answer.headers["location"].startswith("/dashboard/signin?next=")
