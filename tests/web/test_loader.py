"""The Web loader page: the customer panel's switch and link, the loader's download link, the
buttons (add, edit, move up and down, delete one or all, confirmed) in the panel's order; bad
input next to its field with a 400/409, never a 500; a manager with the settings area may use
it."""

from __future__ import annotations

import re

import pytest

from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio
VALUE = re.compile(r'<td class="wrap"><code>([^<]+)</code></td>')


def loader(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/loader" + (f"/{action}" if action else "")


async def stored(services: Services, shop: Shop) -> list[tuple[str, str]]:
    rows = await services.db.fetch_all(
        "SELECT value, text FROM loader_buttons WHERE app_id = ? ORDER BY position, id", shop.app_id
    )
    return [(row["value"], row["text"]) for row in rows]


async def test_buttons_are_added_edited_reordered_and_deleted(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    shown = await dash.get(loader(shop))
    assert shown.status_code == 200
    assert "No buttons yet" in text_of(shown.text)
    for value, text in (("start", "Start the game"), ("update", "Update"), ("close", "Close")):
        added = await dash.post(loader(shop, "buttons"), {"value": value, "text": text})
        assert added.status_code == 200
        assert f"The button {text} ({value}) is added at the end." in text_of(added.text)
    assert VALUE.findall(dash.last.text if dash.last else "") == ["start", "update", "close"]

    moved = await dash.post(loader(shop, "move"), {"value": "close", "position": "1"})
    assert "The button close is now number 1." in text_of(moved.text)
    assert VALUE.findall(moved.text) == ["close", "start", "update"]
    await dash.post(loader(shop, "move"), {"value": "close", "position": "3"})
    assert [v for v, _ in await stored(services, shop)] == ["start", "update", "close"]

    edit = await dash.get(loader(shop, "edit"), params={"button": "update"})
    assert edit.status_code == 200
    assert 'value="Update"' in edit.text
    saved = await dash.post(loader(shop, "edit"), {"button": "update", "text": "Get updates", "value": "upd"})
    assert "The button Get updates (upd) is saved." in text_of(saved.text)
    assert await stored(services, shop) == [
        ("start", "Start the game"),
        ("upd", "Get updates"),
        ("close", "Close"),
    ]
    # The seller API sees the same order.
    fetched = await seller_op(services, shop, "fetchallbuttons")
    assert [b["value"] for b in fetched["buttons"]] == ["start", "upd", "close"]

    asked = await dash.post(loader(shop, "delete"), {"value": "upd"})
    assert "Delete the button upd?" in text_of(asked.text)
    assert len(await stored(services, shop)) == 3
    deleted = await dash.post(loader(shop, "delete"), {"value": "upd", "confirmed": "1"})
    assert "The button upd is deleted." in text_of(deleted.text)
    assert [v for v, _ in await stored(services, shop)] == ["start", "close"]

    asked = await dash.post(loader(shop, "delete-all"), {})
    assert "All 2 buttons are deleted" in text_of(asked.text)
    emptied = await dash.post(loader(shop, "delete-all"), {"confirmed": "1"})
    assert "Every button is deleted (2 in all)." in text_of(emptied.text)
    assert await stored(services, shop) == []

    audit = await services.db.fetch_all(
        "SELECT action FROM audit_log WHERE app_id = ? ORDER BY id", shop.app_id
    )
    actions = [row["action"] for row in audit]
    assert {"addbutton", "movebutton", "editbutton", "delbutton", "delallbuttons"} <= set(actions)


async def test_bad_input_is_shown_next_to_its_field(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "addbutton", value="start", text="Start")
    await seller_op(services, shop, "addbutton", value="close", text="Close")
    await dash.sign_in("alice")
    await dash.get(loader(shop))
    cases = [
        ({"value": "has space", "text": "x"}, 400, "without spaces", "f-value-error"),
        ({"value": "a/b", "text": "x"}, 400, "without spaces", "f-value-error"),
        ({"value": "start", "text": "Again"}, 409, "exists already", "f-value-error"),
        ({"value": "", "text": "x"}, 400, "Fill this in.", "f-value-error"),
        ({"value": "ok", "text": ""}, 400, "Fill this in.", "f-text-error"),
        ({"value": "ok", "text": "x" * 100}, 400, "too long", "f-text-error"),
    ]
    for data, status, message, field in cases:
        refused = await dash.post(loader(shop, "buttons"), data)
        assert refused.status_code == status, data
        assert message in text_of(refused.text), data
        assert f'id="{field}"' in refused.text, data
    assert [v for v, _ in await stored(services, shop)] == ["start", "close"]

    await dash.get(loader(shop, "edit"), params={"button": "start"})
    taken = await dash.post(loader(shop, "edit"), {"button": "start", "text": "Start", "value": "close"})
    assert taken.status_code == 409
    assert 'id="f-value-error"' in taken.text
    bad = await dash.post(loader(shop, "edit"), {"button": "start", "text": "Start", "value": "a b"})
    assert bad.status_code == 400
    assert 'id="f-value-error"' in bad.text
    missing = await dash.get(loader(shop, "edit"), params={"button": "nope"})
    assert missing.status_code == 404
    moved = await dash.post(loader(shop, "move"), {"value": "nope", "position": "1"})
    assert "No button with the value 'nope' exists." in text_of(moved.text)
    odd = await dash.post(loader(shop, "move"), {"value": "start", "position": "abc"})
    assert odd.status_code == 200
    assert "whole number" in text_of(odd.text)

    url = await dash.post(loader(shop, "setup"), {"webdownload": "ftp://example.com/x", "customerpanel": "1"})
    assert url.status_code == 400
    assert 'id="f-webdownload-error"' in url.text
    row = await services.db.fetch_one("SELECT customer_panel FROM apps WHERE id = ?", shop.app_id)
    assert row is not None
    assert row["customer_panel"] == 0


async def test_the_panel_switch_and_download_link(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    shown = await dash.get(loader(shop))
    assert f"/panel/{shop.app_id}/" in text_of(shown.text)
    saved = await dash.post(
        loader(shop, "setup"), {"webdownload": "https://example.com/loader.exe", "customerpanel": "1"}
    )
    assert "Saved: the customer panel is on." in text_of(saved.text)
    assert 'value="https://example.com/loader.exe"' in saved.text
    settings = await seller_op(services, shop, "getsettings")
    assert settings["webdownload"] == "https://example.com/loader.exe"
    assert settings["settings"]["customer_panel"] == 1
    cleared = await dash.post(loader(shop, "setup"), {"webdownload": ""})
    assert "Saved: the customer panel is off." in text_of(cleared.text)
    settings = await seller_op(services, shop, "getsettings")
    assert settings["webdownload"] == ""
    assert settings["settings"]["customer_panel"] == 0


async def test_a_manager_with_the_settings_area_uses_it(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "mia", permissions="settings")
    await make_member(services, shop, "manager", "max", permissions="licenses")
    async with browser(services) as mia:
        await mia.sign_in("mia")
        await mia.get(loader(shop))
        added = await mia.post(loader(shop, "buttons"), {"value": "go", "text": "Go"})
        assert "The button Go (go) is added at the end." in text_of(added.text)
    async with browser(services) as max_:
        await max_.sign_in("max")
        refused = await max_.get(loader(shop))
        assert refused.status_code == 403
    assert await stored(services, shop) == [("go", "Go")]
