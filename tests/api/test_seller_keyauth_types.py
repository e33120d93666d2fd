"""Seller API types KeyAuth's tools use: `format` in any case, `activate`, `getkey`, `assignkey`,
and the web-loader buttons, with their failures, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.helpers import Seller

pytestmark = pytest.mark.anyio
HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"


async def test_format_is_case_insensitive(seller: Seller) -> None:
    text = await seller.call("add", expiry="1", format="TEXT")
    assert text.status_code == 200
    assert text.headers["content-type"].startswith("text/plain")
    json_body = await seller.ok("add", expiry="1", format="JSON")
    assert isinstance(json_body["key"], str)
    listed = await seller.call("fetchallkeys", format="Text")
    assert listed.headers["content-type"].startswith("text/plain")
    assert json_body["key"] in listed.text.split()
    assert (await seller.ok("verify", key=json_body["key"], format="whatever"))["success"] is True


async def test_activate_makes_a_user_from_a_key(seller: Seller) -> None:
    key = (await seller.ok("add", expiry="1"))["key"]
    body = await seller.ok("activate", user="kim", key=key, hwid=HWID, **{"pass": "pw"})
    assert body["message"] == "Logged in!"
    assert body["info"]["username"] == "kim"
    assert [s["subscription"] for s in body["info"]["subscriptions"]] == ["default"]
    assert (await seller.ok("verifyuser", user="kim", **{"pass": "pw"}))["success"] is True
    assert (await seller.ok("getkey", user="kim"))["key"] == key
    await seller.fails("activate", 403, "key_used", user="lee", key=key, **{"pass": "pw"})
    other = (await seller.ok("add", expiry="1"))["key"]
    await seller.fails("activate", 409, "username_taken", user="kim", key=other, **{"pass": "pw"})
    await seller.fails("activate", 404, "key_not_found", user="lee", key="nope", **{"pass": "pw"})
    await seller.fails("activate", 400, "missing_parameter", user="lee", key=other)


async def test_getkey_refuses_users_without_a_key(seller: Seller) -> None:
    await seller.ok("adduser", user="amy", expiry="1")
    await seller.fails("getkey", 404, "key_not_found", user="amy")
    await seller.fails("getkey", 404, "key_not_found", user="nobody")


async def test_assignkey_redeems_a_key_onto_a_user(seller: Seller) -> None:
    await seller.ok("adduser", user="amy", expiry="1")
    key = (await seller.ok("add", expiry="2"))["key"]
    body = await seller.ok("assignkey", user="amy", key=key)
    assert body["subscriptions"] == ["default"]
    assert (await seller.ok("getkey", user="amy"))["key"] == key
    info = await seller.ok("info", key=key)
    assert (info["status"], info["usedby"]) == ("Used", "amy")
    again = (await seller.ok("add", expiry="1"))["key"]
    await seller.fails("assignkey", 403, "key_used", user="amy", key=key)
    await seller.fails("assignkey", 404, "user_not_found", user="nobody", key=again)
    await seller.fails("assignkey", 404, "key_not_found", user="amy", key="nope")


async def test_web_loader_buttons(seller: Seller) -> None:
    assert (await seller.ok("fetchallbuttons"))["buttons"] == []
    await seller.ok("addbutton", value="close", text="Close the loader")
    await seller.ok("addbutton", value="start", text="Start")
    buttons = (await seller.ok("fetchallbuttons"))["buttons"]
    assert buttons == [{"text": "Close the loader", "value": "close"}, {"text": "Start", "value": "start"}]
    await seller.fails("addbutton", 409, "button_exists", value="close", text="Again")
    await seller.fails("addbutton", 400, "invalid_button_value", value="has space", text="x")
    await seller.fails("addbutton", 400, "missing_parameter", value="x")
    await seller.ok("delbutton", value="close")
    await seller.fails("delbutton", 404, "button_not_found", value="close")
    assert (await seller.ok("delAllButtons"))["deleted"] == 1
    assert (await seller.ok("delallbuttons"))["deleted"] == 0
    assert (await seller.ok("fetchallbuttons"))["buttons"] == []


async def test_web_loader_buttons_are_edited_and_moved(seller: Seller) -> None:
    for value in ("a", "b", "c"):
        await seller.ok("addbutton", value=value, text=value.upper())

    async def order() -> list[str]:
        return [b["value"] for b in (await seller.ok("fetchallbuttons"))["buttons"]]

    assert (await seller.ok("movebutton", value="c", position=1))["position"] == 1
    assert await order() == ["c", "a", "b"]
    assert (await seller.ok("movebutton", value="c", position=99))["position"] == 3
    assert await order() == ["a", "b", "c"]
    await seller.ok("addbutton", value="d", text="D")
    assert await order() == ["a", "b", "c", "d"]  # a new button goes last
    await seller.fails("movebutton", 404, "button_not_found", value="nope", position=1)
    await seller.fails("movebutton", 400, "number_out_of_range", value="a", position=0)
    await seller.ok("editbutton", value="b", text="Bee")
    await seller.ok("editbutton", value="b", text="Bee", newvalue="bee")
    assert (await seller.ok("fetchallbuttons"))["buttons"][1] == {"text": "Bee", "value": "bee"}
    await seller.fails("editbutton", 409, "button_exists", value="bee", text="x", newvalue="a")
    await seller.fails("editbutton", 400, "invalid_button_value", value="bee", text="x", newvalue="a b")
    await seller.fails("editbutton", 404, "button_not_found", value="b", text="x")
    assert await order() == ["a", "bee", "c", "d"]
