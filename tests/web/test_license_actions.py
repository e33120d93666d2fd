"""Licenses actions on the dashboard: creating keys, the row actions and bulk actions, each a
seller operation (areas, a reseller's scope and balance, the audit log), each a plain post."""

from __future__ import annotations

import re

import httpx
import pytest

from licensegate.domain import licenses, subscriptions
from licensegate.domain.permissions import Reseller, Scope
from licensegate.services import Services
from tests.helpers import make_user
from tests.web.pages import Dashboard, Shop, browser, give_balance, make_keys, make_member, make_shop, text_of

pytestmark = pytest.mark.anyio
CREATED = re.compile(r'<textarea id="created-keys"[^>]*>([^<]*)</textarea>')


def path(shop: Shop, tail: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/licenses{tail}"


async def key_row(services: Services, shop: Shop, key: str) -> dict[str, object] | None:
    return await services.db.fetch_one(
        "SELECT key, level, duration, note, banned_reason FROM license_keys WHERE app_id = ? AND key = ?",
        shop.app_id,
        key,
    )


async def reasons(services: Services, shop: Shop, keys: list[str]) -> list[object]:
    return [(await key_row(services, shop, key) or {}).get("banned_reason") for key in keys]


async def count_keys(services: Services, shop: Shop) -> int:
    total: int = await services.db.fetch_value(
        "SELECT COUNT(*) FROM license_keys WHERE app_id = ?", shop.app_id
    )
    return total


async def month_balance(services: Services, account_id: int) -> int:
    value: int = await services.db.fetch_value(
        "SELECT balance_month FROM team_members WHERE account_id = ?", account_id
    )
    return value


async def test_an_owner_creates_keys_shown_once_with_copy_all(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    form = await dash.get(path(shop, "/create"))
    assert form.status_code == 200
    assert 'name="amount"' in form.text
    assert 'name="mask"' in form.text
    created = await dash.post(
        path(shop, "/create"),
        {
            "amount": "3",
            "mask": "SHOP-****-****",
            "character": "2",
            "level": "1",
            "duration": "2",
            "unit": "weeks",
            "note": "for the launch",
        },
    )
    assert created.status_code == 200
    found = CREATED.search(created.text)
    assert found is not None
    keys = found.group(1).split("\n")
    assert len(keys) == 3
    assert all(re.fullmatch(r"SHOP-[A-Z0-9]{4}-[A-Z0-9]{4}", key) for key in keys)
    assert 'data-copy="created-keys"' in created.text  # the Copy all button (app.js shows it)
    for key in keys:
        row = await key_row(services, shop, key)
        assert row is not None
        assert (row["duration"], row["note"], row["level"]) == (14 * 86400, "for the launch", "1")
    actor = await services.db.fetch_value(
        "SELECT actor FROM audit_log WHERE app_id = ? AND action = 'add'", shop.app_id
    )
    assert actor == "alice (dashboard)"
    listed = await dash.get(path(shop))
    assert all(key in listed.text for key in keys)


async def test_a_refused_creation_shows_the_form_again_with_the_reason(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get(path(shop, "/create"))
    for fields, status, message in (
        ({"level": "9"}, 404, "No subscription has level '9'"),
        ({"mask": "A B"}, 400, "must not contain white space"),
        ({"amount": "500"}, 400, "amount"),
        ({"duration": "soon"}, 400, "The duration must be a number."),
        ({"mask": "FIXED-KEY", "amount": "2"}, 400, "can only be generated with amount 1"),
    ):
        data = {"amount": "1", "level": "1", "duration": "30", "unit": "days", **fields}
        page = await dash.post(path(shop, "/create"), data)
        assert page.status_code == status, fields
        assert message in text_of(page.text), fields
        assert 'name="amount"' in page.text
    assert await count_keys(services, shop) == 0


async def test_a_reseller_spends_its_balance_and_sells_only_what_it_may(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    rita = await give_balance(services, shop, "rita", month=2)
    async with browser(services) as dash:
        await dash.sign_in("rita")
        form = await dash.get(path(shop, "/create"))
        assert "Your balance" in text_of(form.text)
        odd = await dash.post(
            path(shop, "/create"), {"amount": "1", "level": "1", "duration": "5", "unit": "days"}
        )
        assert odd.status_code == 400
        assert "can only give durations its balance pays for" in text_of(odd.text)
        made = await dash.post(
            path(shop, "/create"), {"amount": "2", "level": "1", "duration": "1", "unit": "months"}
        )
        assert made.status_code == 200
        found = CREATED.search(made.text)
        assert found is not None
        assert len(found.group(1).split("\n")) == 2
        assert await month_balance(services, rita) == 0
        broke = await dash.post(
            path(shop, "/create"), {"amount": "1", "level": "1", "duration": "30", "unit": "days"}
        )
        assert broke.status_code == 403
        assert await count_keys(services, shop) == 2


async def test_row_actions_ban_unban_add_time_edit_and_delete(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    first, second = await make_keys(services, shop, 2)
    await dash.sign_in("alice")
    listed = await dash.get(path(shop, "?status=unused"))
    assert f'name="key" value="{first}"' in listed.text
    back = path(shop, "?status=unused")
    banned = await dash.post(path(shop, "/ban"), {"key": first, "reason": "chargeback", "back": back})
    assert banned.url.path == path(shop)
    assert banned.url.query == b"status=unused"
    assert f"The key {first} is banned." in text_of(banned.text)
    assert (await key_row(services, shop, first) or {})["banned_reason"] == "chargeback"
    unbanned = await dash.post(path(shop, "/unban"), {"key": first, "back": "https://evil.example/"})
    assert unbanned.url.path == path(shop)  # never back to another site
    assert (await key_row(services, shop, first) or {})["banned_reason"] is None
    again = await dash.post(path(shop, "/unban"), {"key": first})
    assert "is not banned" in text_of(again.text)  # a refusal is said, nothing breaks
    await dash.post(path(shop, "/addtime"), {"key": first, "amount": "2", "unit": "days"})
    assert (await key_row(services, shop, first) or {})["duration"] == 32 * 86400
    saved = await dash.post(
        path(shop, "/edit"), {"key": first, "note": "VIP", "level": "1", "duration": "7", "unit": "days"}
    )
    assert f"The key {first} is saved." in text_of(saved.text)
    row = await key_row(services, shop, first)
    assert row is not None
    assert (row["note"], row["duration"]) == ("VIP", 7 * 86400)
    actions = await services.db.fetch_all(
        "SELECT action FROM audit_log WHERE app_id = ? AND actor = 'alice (dashboard)' ORDER BY id",
        shop.app_id,
    )
    assert [a["action"] for a in actions] == ["ban", "unban", "addtime", "setnote", "setduration"]
    # Deleting asks first (a page of its own without script), then deletes.
    asked = await dash.post(path(shop, "/delete"), {"key": second})
    assert asked.status_code == 200
    assert "Delete this key?" in text_of(asked.text)
    assert await key_row(services, shop, second) is not None
    await dash.post(path(shop, "/delete"), {"key": second, "confirmed": "1"})
    assert await key_row(services, shop, second) is None


async def test_a_reseller_cannot_touch_keys_it_did_not_make(services: Services) -> None:
    shop = await make_shop(services)
    (owners,) = await make_keys(services, shop, 1)
    await make_member(services, shop, "reseller", "rita")
    rita = await give_balance(services, shop, "rita", month=1)
    spec = licenses.KeySpec(days=30, account_id=rita, generated_by="rita")
    (hers,) = await licenses.generate(
        services.db, services.secrets, Scope(shop.app_id, Reseller(rita, "rita")), spec, services.clock.now()
    )
    async with browser(services) as dash:
        await dash.sign_in("rita")
        await dash.get(path(shop))
        refused = await dash.post(path(shop, "/ban"), {"key": owners, "reason": "mine now"})
        assert f"No license key '{owners}'" in text_of(refused.text)
        assert (await key_row(services, shop, owners) or {})["banned_reason"] is None
        await dash.post(path(shop, "/ban"), {"key": hers, "reason": "abuse"})
        assert (await key_row(services, shop, hers) or {})["banned_reason"] == "abuse"
        paid = await dash.post(
            path(shop, "/edit"), {"key": hers, "note": "", "duration": "365", "unit": "days"}
        )
        assert "cannot change a key's duration" in text_of(paid.text)


async def test_who_may_not_is_refused(services: Services) -> None:
    shop = await make_shop(services)
    (key,) = await make_keys(services, shop, 1)
    await make_member(services, shop, "manager", "mo", permissions="users")
    await make_shop(services, "bob", "Other")
    posts = (
        ("/create", {"amount": "1", "level": "1", "duration": "1", "unit": "days"}),
        ("/ban", {"key": key, "reason": "x"}),
        ("/delete", {"key": key, "confirmed": "1"}),
        ("/bulk", {"action": "delete", "scope": "all", "confirmed": "1"}),
    )
    for who in ("mo", "bob"):
        async with browser(services) as dash:
            await dash.sign_in(who)
            assert (await dash.get(path(shop, "/create"))).status_code == 403
            await dash.get("/dashboard/account")
            for tail, data in posts:
                refused = await dash.post(path(shop, tail), data)
                assert refused.status_code == 403, (who, tail)
    async with browser(services) as dash:
        await dash.sign_in("alice")
        no_token = await dash.post(path(shop, "/ban"), {"key": key, "reason": "x"}, csrf=False)
        assert no_token.status_code == 403
        assert "Form refused" in text_of(no_token.text)
    row = await key_row(services, shop, key)
    assert row is not None
    assert row["banned_reason"] is None


async def test_bulk_on_checked_rows_previews_then_changes(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    made = await make_keys(services, shop, 4)
    await dash.sign_in("alice")
    listed = await dash.get(path(shop))
    ids = {
        key: int(m)
        for m, key in re.findall(r'name="ids" value="(\d+)"[^>]*aria-label="Select ([^"]+)"', listed.text)
    }
    picked = [ids[made[0]], ids[made[1]]]
    data: dict[str, object] = {"action": "ban", "ids": picked, "reason": "resold"}
    preview = await dash.post(path(shop, "/bulk"), data)
    assert preview.status_code == 200
    assert "This will ban 2 keys (the checked keys)." in text_of(preview.text)
    assert "Reason: resold" in text_of(preview.text)
    assert await reasons(services, shop, made) == [None] * 4
    done = await dash.post(path(shop, "/bulk"), {**data, "confirmed": "1"})
    assert "Done: ban 2 keys." in text_of(done.text)
    assert await reasons(services, shop, made) == ["resold", "resold", None, None]
    # Banned keys are not banned again; unbanning counts only the banned.
    nothing = await dash.post(
        path(shop, "/bulk"), {"action": "ban", "ids": picked, "reason": "x", "confirmed": "1"}
    )
    assert "Nothing to change" in text_of(nothing.text)
    unban = await dash.post(path(shop, "/bulk"), {"action": "unban", "scope": "all"})
    assert "This will unban 2 keys (every key)." in text_of(unban.text)
    missing = await dash.post(path(shop, "/bulk"), {"action": "ban", "ids": picked})
    assert "Give a reason for the ban." in text_of(missing.text)


async def test_bulk_over_the_threshold_needs_the_count_typed_and_runs_in_batches(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    doomed: list[str] = []
    for _ in range(3):
        doomed += await make_keys(services, shop, 50, note="old batch")
    kept = await make_keys(services, shop, 3, note="new")
    await dash.sign_in("alice")
    await dash.get(path(shop, "?note=old"))
    data = {"action": "delete", "scope": "all", "filter.note": "old"}
    preview = await dash.post(path(shop, "/bulk"), data)
    assert "This will delete 150 keys (every key matching the filter)." in text_of(preview.text)
    assert 'name="typed"' in preview.text
    assert "Type 150 to confirm." in text_of(preview.text)
    wrong = await dash.post(path(shop, "/bulk"), {**data, "confirmed": "1", "typed": "15"})
    assert wrong.status_code == 400
    assert "does not match" in text_of(wrong.text)
    untyped = await dash.post(path(shop, "/bulk"), {**data, "confirmed": "1"})
    assert untyped.status_code == 400
    assert 'name="typed"' in untyped.text
    assert await count_keys(services, shop) == 153
    done = await dash.post(path(shop, "/bulk"), {**data, "confirmed": "1", "typed": "150"})
    assert "Done: delete 150 keys." in text_of(done.text)
    left = await services.db.fetch_all("SELECT key FROM license_keys WHERE app_id = ?", shop.app_id)
    assert sorted(row["key"] for row in left) == sorted(kept)
    batches = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND action = 'delmultiple'", shop.app_id
    )
    assert batches == 2  # 100 + 50 keys, one seller operation each


async def test_a_resellers_bulk_add_time_stops_when_its_balance_runs_out(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    rita = await give_balance(services, shop, "rita", month=5)
    spec = licenses.KeySpec(days=30, amount=3, account_id=rita, generated_by="rita")
    hers = await licenses.generate(
        services.db, services.secrets, Scope(shop.app_id, Reseller(rita, "rita")), spec, services.clock.now()
    )
    await make_keys(services, shop, 2)  # the owner's: never counted, never changed
    async with browser(services) as dash:
        await dash.sign_in("rita")
        await dash.get(path(shop))
        data = {"action": "addtime", "scope": "all", "amount": "1", "unit": "months"}
        preview = await dash.post(path(shop, "/bulk"), data)
        assert "This will add time to 3 keys (every key)." in text_of(preview.text)
        assert "It costs 3 units of your month balance; you have 2." in text_of(preview.text)
        assert "Your balance pays for 2 of them: the run stops there." in text_of(preview.text)
        unsold = await dash.post(path(shop, "/bulk"), {**data, "amount": "5", "unit": "days"})
        assert "can only give durations its balance pays for" in text_of(unsold.text)
        done = await dash.post(path(shop, "/bulk"), {**data, "confirmed": "1"})
        assert "Stopped after 2 keys" in text_of(done.text)
    assert await month_balance(services, rita) == 0
    durations = sorted([(await key_row(services, shop, k) or {})["duration"] for k in hers])  # type: ignore[type-var]
    assert durations == [30 * 86400, 60 * 86400, 60 * 86400]


async def test_htmx_row_action_swaps_the_results(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    (key,) = await make_keys(services, shop, 1)
    await dash.sign_in("alice")
    await dash.get(path(shop))
    answer = await dash.http.post(
        path(shop, "/ban"),
        data={"key": key, "reason": "x"},
        headers={"HX-Request": "true", "X-CSRF-Token": dash.csrf},
        follow_redirects=True,
    )
    assert isinstance(answer, httpx.Response)
    assert answer.status_code == 200
    assert '<div id="results">' in answer.text
    assert 'id="flash"' in answer.text


async def test_bulk_set_level_changes_only_unused_keys(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await subscriptions.create(services.db, shop.app_id, name="gold", level="5", now=services.clock.now())
    made = await make_keys(services, shop, 3)
    buyer = await make_user(services, shop.app_id, "buyer")
    async with services.db.transaction() as tx:  # made[0] is used: redeemed by a user
        assert await licenses.redeem(
            tx, shop.app_id, await licenses.get(tx, Scope(shop.app_id), made[0]), buyer, services.clock.now()
        )
    await dash.sign_in("alice")
    await dash.get(path(shop))
    data = {"action": "level", "scope": "all", "level": "5"}
    preview = await dash.post(path(shop, "/bulk"), data)
    assert "This will set the level of 2 keys (every key)." in text_of(preview.text)
    done = await dash.post(path(shop, "/bulk"), {**data, "confirmed": "1"})
    assert "Done: set the level of 2 keys." in text_of(done.text)
    levels = [(await key_row(services, shop, key) or {}).get("level") for key in made]
    assert levels == ["1", "5", "5"]
    unknown = await dash.post(path(shop, "/bulk"), {**data, "level": "7", "confirmed": "1"})
    assert "No subscription has level '7'" in text_of(unknown.text)
