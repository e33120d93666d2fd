"""The Chats page: channels (create with a delay in any unit, change the delay, clear, delete,
confirmed), messages keyset paged and searched by channel, author and text (delete one, mute
its author for a chosen time), muted users (unmute), posting as the developer; bad input shown
next to its field with the right status, never a 500; who may open it."""

from __future__ import annotations

import re

import pytest

from licensegate.domain import chat
from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, seller_op, text_of
from tests.web.test_users import make_user

pytestmark = pytest.mark.anyio
MESSAGE = re.compile(r'<td class="wrap chat-message">([^<]*)</td>')


def chats(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/chats" + (f"/{action}" if action else "")


async def say(services: Services, shop: Shop, user_id: int, name: str, channel: str, message: str) -> None:
    await chat.send_as_user(
        services.db,
        shop.app_id,
        channel,
        user_id=user_id,
        username=name,
        message=message,
        now=services.clock.now(),
    )


async def a_shop_with_chat(services: Services) -> tuple[Shop, int]:
    """Channels general and support, kim's two messages and one of the developer."""
    shop = await make_shop(services)
    kim = await make_user(services, shop, "kim")
    await seller_op(services, shop, "addchannel", name="general")
    await seller_op(services, shop, "addchannel", name="support", delay="0")
    await say(services, shop, kim, "kim", "general", "hello everyone")
    await say(services, shop, kim, "kim", "support", "My key does not WORK")
    await seller_op(services, shop, "chatpost", channel="general", message="Welcome to the chat")
    return shop, kim


async def messages(services: Services, shop: Shop) -> list[str]:
    rows = await services.db.fetch_all(
        "SELECT m.message FROM chat_messages m JOIN chat_channels c ON c.id = m.channel_id "
        "WHERE c.app_id = ? ORDER BY m.id",
        shop.app_id,
    )
    return [row["message"] for row in rows]


async def test_messages_are_listed_searched_and_paged(services: Services, dash: Dashboard) -> None:
    shop, kim = await a_shop_with_chat(services)
    await dash.sign_in("alice")
    listed = await dash.get(chats(shop))
    assert listed.status_code == 200
    assert MESSAGE.findall(listed.text) == ["Welcome to the chat", "My key does not WORK", "hello everyone"]
    shown = text_of(listed.text)
    assert "alice (test) Developer" in shown or "Developer" in shown
    assert "No channels yet" not in shown
    assert "Nobody is muted." in shown

    def found(page: str) -> list[str]:
        return MESSAGE.findall(page)

    assert found((await dash.get(chats(shop), params={"channel": "support"})).text) == [
        "My key does not WORK"
    ]
    assert found((await dash.get(chats(shop), params={"author": "kim"})).text) == [
        "My key does not WORK",
        "hello everyone",
    ]
    # Text is found in any case; LIKE wildcards are taken literally.
    assert found((await dash.get(chats(shop), params={"search": "work"})).text) == ["My key does not WORK"]
    assert found((await dash.get(chats(shop), params={"search": "%"})).text) == []
    assert found((await dash.get(chats(shop), params={"sort": "created"})).text)[0] == "hello everyone"
    for bad in (
        {"channel": "nope"},
        {"search": "s" * 101},
        {"author": "a" * 65},
        {"sort": "author"},
        {"after": "%%%"},
        {"size": "7"},
    ):
        refused = await dash.get(chats(shop), params=bad)
        assert refused.status_code == 400, bad

    for i in range(30):
        await say(services, shop, kim, "kim", "general", f"line {i:02d}")
    page = await dash.get(chats(shop), params={"size": "25"})
    seen = found(page.text)
    link = re.search(r'<a href="([^"]+)" rel="next">', page.text)
    assert link is not None
    second = await dash.get(link.group(1).replace("&amp;", "&"))
    seen += found(second.text)
    assert len(seen) == 33
    assert len(set(seen)) == 33
    back = re.search(r'<a href="([^"]+)" rel="prev">', second.text)
    assert back is not None
    assert found((await dash.get(back.group(1).replace("&amp;", "&"))).text) == seen[:25]


async def test_channels_are_created_changed_cleared_and_deleted(services: Services, dash: Dashboard) -> None:
    shop, _kim = await a_shop_with_chat(services)
    await dash.sign_in("alice")
    await dash.get(chats(shop))
    made = await dash.post(chats(shop, "channels"), {"name": "news", "delay": "2", "unit": "60"})
    assert "The channel news is created (delay 2 minutes)." in text_of(made.text)
    assert (await chat.get_channel(services.db, shop.app_id, "news")).delay == 120
    for fields, status, field in (
        ({"name": "", "delay": "1"}, 400, "name"),
        ({"name": "news"}, 409, "name"),
        ({"name": "n" * 51}, 400, "name"),
        ({"name": "bad\x01name"}, 400, "name"),
        ({"name": "x", "delay": "-1", "unit": "1"}, 400, "delay"),
        ({"name": "x", "delay": "1.5", "unit": "1"}, 400, "delay"),
        ({"name": "x", "delay": "1", "unit": "7"}, 400, "delay"),
        ({"name": "x", "delay": "999999999", "unit": "86400"}, 400, "delay"),
    ):
        refused = await dash.post(chats(shop, "channels"), fields)
        assert refused.status_code == status, fields
        assert re.search(rf'id="f-{field}-error"', refused.text), fields
    assert [c["name"] for c in await chat.list_channels(services.db, shop.app_id)] == [
        "general",
        "support",
        "news",
    ]

    changed = await dash.post(
        chats(shop, "channels/delay"), {"name": "support", "delay": "1", "unit": "3600"}
    )
    assert "The delay of support is now 1 hour." in text_of(changed.text)
    assert (await chat.get_channel(services.db, shop.app_id, "support")).delay == 3600
    for fields, status in (
        ({"name": "support", "delay": "", "unit": "1"}, 400),
        ({"name": "support", "delay": "abc", "unit": "1"}, 400),
        ({"name": "nope", "delay": "5", "unit": "1"}, 404),
    ):
        refused = await dash.post(chats(shop, "channels/delay"), fields)
        assert refused.status_code == status, fields
        assert 'role="alert"' in refused.text
    assert (await chat.get_channel(services.db, shop.app_id, "support")).delay == 3600

    asked = await dash.post(chats(shop, "channels/clear"), {"name": "general"})
    assert "Clear the channel general?" in text_of(asked.text)
    assert "hello everyone" in await messages(services, shop)
    cleared = await dash.post(chats(shop, "channels/clear"), {"name": "general", "confirmed": "1"})
    assert "The channel general is cleared (2 messages deleted)." in text_of(cleared.text)
    assert await messages(services, shop) == ["My key does not WORK"]
    unknown = await dash.post(chats(shop, "channels/clear"), {"name": "nope", "confirmed": "1"})
    assert "No chat channel named 'nope' exists." in text_of(unknown.text)

    asked = await dash.post(chats(shop, "channels/delete"), {"name": "support"})
    assert "Delete the channel support?" in text_of(asked.text)
    deleted = await dash.post(chats(shop, "channels/delete"), {"name": "support", "confirmed": "1"})
    assert "The channel support is deleted." in text_of(deleted.text)
    assert await messages(services, shop) == []
    audited = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND target LIKE 'channel:%'", shop.app_id
    )
    assert audited >= 4


async def test_posting_as_the_developer(services: Services, dash: Dashboard) -> None:
    shop, _kim = await a_shop_with_chat(services)
    await dash.sign_in("alice")
    await dash.get(chats(shop))
    posted = await dash.post(
        chats(shop, "post"), {"channel": "support", "message": "We are on it", "author": ""}
    )
    assert "Your message is posted in support as the developer." in text_of(posted.text)
    named = await dash.post(chats(shop, "post"), {"channel": "support", "message": "Fixed", "author": "Team"})
    assert named.status_code == 200
    read = await chat.messages(services.db, shop.app_id, "support")
    assert [(m["author"], m["role"], m["message"]) for m in read[-2:]] == [
        ("alice", "developer", "We are on it"),
        ("Team", "developer", "Fixed"),
    ]
    for fields, status, field in (
        ({"channel": "support", "message": "   "}, 400, "message"),
        ({"channel": "support", "message": "m" * 2001}, 400, "message"),
        ({"channel": "support", "message": ""}, 400, "message"),
        ({"channel": "nope", "message": "hi"}, 404, "channel"),
        ({"channel": "support", "message": "hi", "author": "a" * 65}, 400, "author"),
    ):
        refused = await dash.post(chats(shop, "post"), fields)
        assert refused.status_code == status, fields
        assert re.search(rf'id="f-{field}-error"', refused.text), fields
    assert len(await chat.messages(services.db, shop.app_id, "support")) == 3


async def test_deleting_a_message_and_muting_its_author(services: Services, dash: Dashboard) -> None:
    shop, kim = await a_shop_with_chat(services)
    await dash.sign_in("alice")
    await dash.get(chats(shop))
    message_id = await services.db.fetch_value(
        "SELECT id FROM chat_messages WHERE message = 'hello everyone'"
    )
    back = chats(shop) + "?author=kim"
    asked = await dash.post(chats(shop, "messages/delete"), {"id": str(message_id), "back": back})
    assert "Delete this message?" in text_of(asked.text)
    deleted = await dash.post(
        chats(shop, "messages/delete"), {"id": str(message_id), "back": back, "confirmed": "1"}
    )
    assert "The message is deleted." in text_of(deleted.text)
    assert str(deleted.url).endswith("/chats?author=kim")
    assert "hello everyone" not in await messages(services, shop)
    again = await dash.post(chats(shop, "messages/delete"), {"id": str(message_id), "confirmed": "1"})
    assert f"No chat message with the id {message_id} exists." in text_of(again.text)
    outside = await dash.post(
        chats(shop, "messages/delete"), {"id": "1", "back": "https://evil.example/", "confirmed": "1"}
    )
    assert outside.url.host == "testserver"

    form = await dash.get(chats(shop, "mute"), params={"user": "kim"})
    assert form.status_code == 200
    assert 'value="kim"' in form.text
    muted = await dash.post(chats(shop, "mute"), {"user": "kim", "length": "604800"})
    assert "kim is muted for 7 days" in text_of(muted.text)
    now = services.clock.now()
    assert await chat.mute_end(services.db, shop.app_id, kim, now) == now + 604800
    custom = await dash.post(
        chats(shop, "mute"), {"user": "kim", "length": "custom", "amount": "90", "unit": "60"}
    )
    assert "kim is muted for 90 minutes" in text_of(custom.text)
    assert "kim" in text_of(custom.text.split('id="h-mutes"')[1])
    assert await chat.mute_end(services.db, shop.app_id, kim, now) == now + 5400
    for fields, status, field in (
        ({"user": "nobody", "length": "3600"}, 404, "user"),
        ({"user": "", "length": "3600"}, 400, "user"),
        ({"user": "kim", "length": "custom", "amount": ""}, 400, "amount"),
        ({"user": "kim", "length": "custom", "amount": "0", "unit": "1"}, 400, "amount"),
        ({"user": "kim", "length": "custom", "amount": "x", "unit": "1"}, 400, "amount"),
        ({"user": "kim", "length": "custom", "amount": "999999999", "unit": "86400"}, 400, "amount"),
        ({"user": "kim", "length": "12"}, 400, "length"),
    ):
        refused = await dash.post(chats(shop, "mute"), fields)
        assert refused.status_code == status, fields
        assert re.search(rf'id="f-{field}-error"', refused.text), fields
    assert await chat.mute_end(services.db, shop.app_id, kim, now) == now + 5400

    unmuted = await dash.post(chats(shop, "unmute"), {"user": "kim"})
    assert "kim is no longer muted." in text_of(unmuted.text)
    assert "Nobody is muted." in text_of(unmuted.text)
    not_muted = await dash.post(chats(shop, "unmute"), {"user": "kim"})
    assert "The user 'kim' is not muted." in text_of(not_muted.text)
    audited = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND target = 'mute:kim'", shop.app_id
    )
    assert audited == 3


async def test_a_manager_with_the_chats_area_uses_the_page(services: Services) -> None:
    shop, _kim = await a_shop_with_chat(services)
    await make_member(services, shop, "manager", "mia", permissions="chats")
    async with browser(services) as mia:
        await mia.sign_in("mia")
        listed = await mia.get(chats(shop))
        assert listed.status_code == 200
        posted = await mia.post(chats(shop, "post"), {"channel": "general", "message": "From mia"})
        assert "Your message is posted in general" in text_of(posted.text)


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_others_get_the_403_page_and_nothing_changes(services: Services, who: str) -> None:
    shop, _kim = await a_shop_with_chat(services)
    await seller_op(services, shop, "muteuser", user="kim", time="3600")
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        permissions = "licenses,users,sessions" if who == "manager" else None
        await make_member(services, shop, who, "member", permissions=permissions)
    before = await messages(services, shop)
    message_id = str(await services.db.fetch_value("SELECT MIN(id) FROM chat_messages"))
    async with browser(services) as dash:
        await dash.sign_in("member" if who != "bob" else "bob")
        await dash.get("/dashboard/account")
        for url in (chats(shop), chats(shop, "mute")):
            listed = await dash.get(url, params={"user": "kim"})
            assert listed.status_code == 403
            shown = text_of(listed.text)
            for secret in ("hello everyone", "Welcome to the chat", "support"):
                assert secret not in shown
        for action, fields in (
            ("channels", {"name": "new"}),
            ("channels/delay", {"name": "general", "delay": "9", "unit": "1"}),
            ("channels/clear", {"name": "general"}),
            ("channels/delete", {"name": "general"}),
            ("post", {"channel": "general", "message": "spam"}),
            ("messages/delete", {"id": message_id}),
            ("mute", {"user": "kim", "length": "3600"}),
            ("unmute", {"user": "kim"}),
        ):
            refused = await dash.post(chats(shop, action), {**fields, "confirmed": "1"}, follow=False)
            assert refused.status_code == 403, action
    assert await messages(services, shop) == before
    assert len(await chat.list_channels(services.db, shop.app_id)) == 2
    assert (await chat.get_channel(services.db, shop.app_id, "general")).delay == 0
    assert len(await chat.list_mutes(services.db, shop.app_id, services.clock.now())) == 1
