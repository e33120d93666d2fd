"""The Licenses page: filters in the URL, sorting, keyset paging, export; who sees which keys."""

from __future__ import annotations

import csv
import io
import re

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import licenses
from licensegate.domain.permissions import Reseller, Scope
from licensegate.services import Services
from tests.web.pages import (
    Dashboard,
    browser,
    give_balance,
    joined,
    make_keys,
    make_member,
    make_shop,
    text_of,
)

pytestmark = pytest.mark.anyio
KEY_CELL = re.compile(r"<td><code>([^<]+)</code></td>")


def keys_on(page_html: str) -> list[str]:
    return KEY_CELL.findall(joined(page_html))


async def test_the_list_shows_keys_newest_first_and_pages_by_keyset(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    made: list[str] = []
    for _ in range(3):
        made += await make_keys(services, shop, 20)
        clock.advance(60)
    await dash.sign_in("alice")
    path = f"/dashboard/apps/{shop.app_id}/licenses"
    first = await dash.get(path, params={"size": "25"})
    assert first.status_code == 200
    assert "(60 in all)" in text_of(first.text)
    shown = keys_on(first.text)
    assert len(shown) == 25
    assert shown[0] in made[40:]  # newest first
    # Follow "Next page" to the end; every key exactly once.
    seen = list(shown)
    page = first
    while (found := re.search(r'<a href="([^"]+)" rel="next">', page.text)) is not None:
        page = await dash.get(found.group(1).replace("&amp;", "&"))
        seen += keys_on(page.text)
    assert sorted(seen) == sorted(made)
    assert "(60 in all)" in text_of(page.text)  # the last page counts too
    # And back: "Previous page" from the last page gives the page before it.
    back = re.search(r'<a href="([^"]+)" rel="prev">', page.text)
    assert back is not None
    previous = await dash.get(back.group(1).replace("&amp;", "&"))
    assert keys_on(previous.text) == seen[25:50]


async def test_filters_live_in_the_url_and_narrow_the_list(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    plain = await make_keys(services, shop, 3)
    noted = await make_keys(services, shop, 2, note="Batch for Discord")
    await licenses.ban(
        services.db,
        Scope(shop.app_id),
        plain[0],
        "chargeback",
        user_too=False,
        now=services.clock.now(),
        blacklist_as=None,
    )
    await dash.sign_in("alice")
    path = f"/dashboard/apps/{shop.app_id}/licenses"
    banned = await dash.get(path, params={"status": "banned"})
    assert keys_on(banned.text) == [plain[0]]
    assert 'value="banned" selected' in banned.text
    by_note = await dash.get(path, params={"note": "discord"})
    assert sorted(keys_on(by_note.text)) == sorted(noted)
    assert "(2 in all)" in text_of(by_note.text)  # known from the page alone
    exact = await dash.get(path, params={"q": noted[0]})
    assert keys_on(exact.text) == [noted[0]]
    partial = await dash.get(path, params={"q": noted[0][:8]})
    assert keys_on(partial.text) == []  # a whole key or username: an index lookup, never a scan
    unused = await dash.get(path, params={"status": "unused"})
    assert sorted(keys_on(unused.text)) == sorted(plain[1:] + noted)
    nothing = await dash.get(path, params={"note": "no such note"})
    assert "Nothing matches these filters." in text_of(nothing.text)


async def test_sorting_by_key_both_ways(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    made = await make_keys(services, shop, 5)
    await dash.sign_in("alice")
    path = f"/dashboard/apps/{shop.app_id}/licenses"
    ascending = await dash.get(path, params={"sort": "key"})
    assert keys_on(ascending.text) == sorted(made)
    assert 'aria-sort="ascending"' in ascending.text
    descending = await dash.get(path, params={"sort": "-key"})
    assert keys_on(descending.text) == sorted(made, reverse=True)


async def test_bad_view_parameters_are_a_clear_400(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    path = f"/dashboard/apps/{shop.app_id}/licenses"
    for params, message in (
        ({"sort": "password"}, "cannot be sorted by 'password'"),
        ({"status": "lost"}, "is not a choice of the filter 'Status'"),
        ({"created_from": "yesterday"}, "must look like 2026-01-31"),
        ({"after": "!!!"}, "This page link is damaged"),
        ({"size": "7"}, "Rows per page is one of"),
    ):
        page = await dash.get(path, params=params)
        assert page.status_code == 400, params
        assert message in text_of(page.text), params


async def test_export_streams_the_filtered_view_as_csv_and_json(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await make_keys(services, shop, 3, note="=HYPERLINK(evil)")
    other = await make_keys(services, shop, 2, level="1", note="plain")
    await dash.sign_in("alice")
    path = f"/dashboard/apps/{shop.app_id}/licenses/export"
    as_csv = await dash.http.get(path, params={"format": "csv"})
    assert as_csv.status_code == 200
    assert as_csv.headers["content-disposition"].startswith("attachment;")
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert len(rows) == 5
    assert {row["note"] for row in rows} == {"'=HYPERLINK(evil)", "plain"}  # no formula injection
    as_json = await dash.http.get(path, params={"format": "json", "note": "plain"})
    assert sorted(entry["key"] for entry in as_json.json()) == sorted(other)
    assert all("password" not in entry for entry in as_json.json())


async def test_a_reseller_sees_only_its_own_keys(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    owners = await make_keys(services, shop, 3)
    rita = await give_balance(services, shop, "rita", month=5)
    spec = licenses.KeySpec(days=30, amount=2, account_id=rita, generated_by="rita")
    scope = Scope(shop.app_id, Reseller(rita, "rita"))
    hers = await licenses.generate(services.db, services.secrets, scope, spec, services.clock.now())
    async with browser(services) as dash:
        home = await dash.sign_in("rita")
        assert home.url.path == f"/dashboard/apps/{shop.app_id}/"
        page = await dash.get(f"/dashboard/apps/{shop.app_id}/licenses")
        assert sorted(keys_on(page.text)) == sorted(hers)
        assert not set(owners) & set(keys_on(page.text))
        exported = await dash.http.get(
            f"/dashboard/apps/{shop.app_id}/licenses/export", params={"format": "json"}
        )
        assert sorted(entry["key"] for entry in exported.json()) == sorted(hers)


async def test_a_manager_without_the_licenses_area_gets_the_403_page(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "mo", permissions="users")
    await make_member(services, shop, "manager", "lu", permissions="licenses")
    async with browser(services) as dash:
        await dash.sign_in("mo")
        app_home = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert f'href="/dashboard/apps/{shop.app_id}/licenses"' not in app_home.text
        page = await dash.get(f"/dashboard/apps/{shop.app_id}/licenses")
        assert page.status_code == 403
        assert "does not have access to this part" in text_of(page.text)
        export = await dash.http.get(f"/dashboard/apps/{shop.app_id}/licenses/export")
        assert export.status_code == 403
    async with browser(services) as dash:
        await dash.sign_in("lu")
        app_home = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert f'href="/dashboard/apps/{shop.app_id}/licenses"' in app_home.text
        assert (await dash.get(f"/dashboard/apps/{shop.app_id}/licenses")).status_code == 200


async def test_an_owner_never_sees_another_owners_application(services: Services) -> None:
    shop = await make_shop(services)
    other = await make_shop(services, "bob", "Other")
    await make_keys(services, other, 2)
    async with browser(services) as dash:
        await dash.sign_in("alice")
        for path in (
            f"/dashboard/apps/{other.app_id}/",
            f"/dashboard/apps/{other.app_id}/licenses",
            "/dashboard/apps/999999/",
        ):
            page = await dash.get(path)
            assert page.status_code == 403, path
            assert "Other" not in text_of(page.text).replace("Others", "")
        assert (await dash.get(f"/dashboard/apps/{shop.app_id}/licenses")).status_code == 200
