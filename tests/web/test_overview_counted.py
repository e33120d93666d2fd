"""The overview of a large application (here: at least one key or user, by setting): its status
counts come from a snapshot and the page says as of when."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from licensegate import app as app_module
from licensegate.clock import MovableClock
from licensegate.config import Settings
from licensegate.domain import overview
from licensegate.services import Services
from tests.conftest import make_settings
from tests.web.pages import Dashboard, make_keys, make_member, make_shop, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", overview_inline_rows=1, overview_refresh_minutes=5)


def keys_table(page: str) -> str:
    return text_of(page.split("<caption>License keys by status</caption>", 1)[1].split("</table>", 1)[0])


async def test_a_large_overview_shows_counts_as_of_their_time(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    clock.set(1_798_804_800)  # 2027-01-01 12:00 UTC
    shop = await make_shop(services)
    await make_keys(services, shop, 2)
    await dash.sign_in("alice")
    first = await dash.get(f"/dashboard/apps/{shop.app_id}/")
    assert first.status_code == 200
    assert "Not used 2" in keys_table(first.text)
    assert 'id="counted-at"' not in first.text  # counted for this view
    await make_keys(services, shop, 1)
    clock.advance(60)
    page = await dash.get(f"/dashboard/apps/{shop.app_id}/")
    assert "Not used 2" in keys_table(page.text)
    assert (
        "Keys and users by status and the subscriptions expiring are as of 2027-01-01 12:00 UTC: "
        "with this many keys and users they are counted in the background, every 5 minutes while "
        "someone looks at this page."
    ) in text_of(page.text)
    clock.advance(300)
    assert await overview.refresh_due(services.db, clock.now(), every=300, inline_below=1) == 1
    later = await dash.get(f"/dashboard/apps/{shop.app_id}/")
    assert "Not used 3" in keys_table(later.text)
    assert "as of 2027-01-01 12:06 UTC" in text_of(later.text)


async def test_the_workers_refresh_runs_in_the_background(
    services: Services, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = await make_shop(services)
    await make_keys(services, shop, 2)
    first = await overview.statuses(services.db, shop.app_id, clock.now(), inline_below=1)
    await make_keys(services, shop, 1)
    clock.advance(300)
    monkeypatch.setattr(app_module, "OVERVIEW_SWEEP", 0.01)
    refresher = asyncio.create_task(app_module.refresh_overviews(services))
    try:
        for _ in range(500):
            shown = await overview.statuses(services.db, shop.app_id, clock.now(), inline_below=1)
            if shown.at != first.at:
                break
            await asyncio.sleep(0.01)
    finally:
        refresher.cancel()
    assert shown.snapshot
    assert shown.keys == (3, 0, 0)


async def test_a_manager_is_told_the_time_of_the_charts_it_sees(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    await make_keys(services, shop, 2)
    await make_member(services, shop, "manager", "lu", permissions="licenses")
    await overview.statuses(services.db, shop.app_id, clock.now(), inline_below=1)
    await dash.sign_in("lu")
    page = await dash.get(f"/dashboard/apps/{shop.app_id}/")
    assert "License keys by status are as of" in text_of(page.text)
    assert "Users by status" not in text_of(page.text)
