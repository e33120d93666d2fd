"""Seller API — Chat group over HTTP, and the chat functions the client API builds on (posting as
a user under the delay and mute rules, reading a channel), with a movable clock."""

from __future__ import annotations

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.domain import chat
from licensegate.domain.errors import Conflict, Forbidden, Invalid, NotFound, RateLimited
from licensegate.services import Services
from tests.helpers import Seller, create_seller, make_user

pytestmark = pytest.mark.anyio

START = 1_800_000_000  # the movable clock's starting time


async def message_count(services: Services) -> int:
    total: int = await services.db.fetch_value("SELECT COUNT(*) FROM chat_messages")
    return total


# --- channels ----------------------------------------------------------------------------------


async def test_addchannel_and_fetchallchats(seller: Seller) -> None:
    assert await seller.ok("fetchallchats") == {
        "success": True,
        "message": "Successfully retrieved chats",
        "chats": [],
    }
    body = await seller.ok("addchannel", name="general")
    assert body == {"success": True, "message": "Successfully created channel!"}
    await seller.ok("addchannel", name="support", delay=30)
    assert (await seller.ok("fetchallchats"))["chats"] == [
        {"name": "general", "delay": 0},
        {"name": "support", "delay": 30},
    ]


async def test_addchannel_failures(seller: Seller) -> None:
    await seller.ok("addchannel", name="general")
    await seller.fails("addchannel", 409, "channel_exists", name="general", delay=5)
    await seller.fails("addchannel", 400, "missing_parameter")
    await seller.fails("addchannel", 400, "parameter_too_long", name="c" * 51)
    await seller.fails("addchannel", 400, "number_out_of_range", name="neg", delay=-1)
    await seller.fails("addchannel", 400, "invalid_number", name="frac", delay="1.5")
    await seller.fails("addchannel", 400, "invalid_name", name="bad\x01name")
    assert [c["name"] for c in (await seller.ok("fetchallchats"))["chats"]] == ["general"]


async def test_fetchallchats_shows_only_this_applications_channels(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await seller.ok("addchannel", name="general")
    other = await create_seller(services, client, owner="other", name="other app")
    assert (await other.ok("fetchallchats"))["chats"] == []
    await other.ok("addchannel", name="general")  # names are per application


async def test_editchan_sets_the_delay_in_seconds(seller: Seller) -> None:
    await seller.ok("addchannel", name="general", delay=60)
    body = await seller.ok("editchan", name="general", delay=90)
    assert body == {"success": True, "message": "Successfully updated channel!"}
    # Seconds, as addchannel: not KeyAuth's minutes.
    assert (await seller.ok("fetchallchats"))["chats"] == [{"name": "general", "delay": 90}]
    await seller.fails("editchan", 404, "channel_not_found", name="nope", delay=1)
    await seller.fails("editchan", 400, "missing_parameter", name="general")
    await seller.fails("editchan", 400, "number_out_of_range", name="general", delay=-5)


async def test_delchannel_deletes_the_channel_and_its_messages(seller: Seller, services: Services) -> None:
    await seller.ok("addchannel", name="general")
    await seller.ok("addchannel", name="other")
    await seller.ok("chatpost", channel="general", message="hello")
    await seller.ok("chatpost", channel="other", message="stays")
    body = await seller.ok("delchannel", name="general")
    assert body == {"success": True, "message": "Successfully deleted channel!"}
    assert [c["name"] for c in (await seller.ok("fetchallchats"))["chats"]] == ["other"]
    assert await message_count(services) == 1
    await seller.fails("delchannel", 404, "channel_not_found", name="general")
    await seller.fails("delchannel", 400, "missing_parameter")


async def test_clearchannel_deletes_the_messages_only(seller: Seller, services: Services) -> None:
    await seller.ok("addchannel", name="general")
    await seller.ok("chatpost", channel="general", message="one")
    await seller.ok("chatpost", channel="general", message="two")
    body = await seller.ok("clearchannel", name="general")
    assert body == {"success": True, "message": "Successfully cleared channel!", "deleted": 2}
    assert await chat.messages(services.db, seller.app_id, "general") == []
    assert (await seller.ok("fetchallchats"))["chats"] == [{"name": "general", "delay": 0}]
    assert (await seller.ok("clearchannel", name="general"))["deleted"] == 0
    await seller.fails("clearchannel", 404, "channel_not_found", name="nope")


async def test_another_application_cannot_touch_a_channel(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await seller.ok("addchannel", name="general")
    other = await create_seller(services, client, owner="other", name="other app")
    await other.fails("delchannel", 404, "channel_not_found", name="general")
    await other.fails("chatpost", 404, "channel_not_found", channel="general", message="hi")


# --- chatpost ----------------------------------------------------------------------------------


async def test_chatpost_posts_as_the_developer(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await seller.ok("addchannel", name="general")
    body = await seller.ok("chatpost", channel="general", message="  Welcome!\nRead the rules.  ")
    assert body == {"success": True, "message": "Successfully posted message!"}
    clock.advance(5)
    await seller.ok("chatpost", channel="general", message="Update is out", author="The Team")
    assert await chat.messages(services.db, seller.app_id, "general") == [
        {
            "author": "owner",
            "role": "developer",
            "message": "  Welcome!\nRead the rules.  ",
            "timestamp": START,
        },
        {"author": "The Team", "role": "developer", "message": "Update is out", "timestamp": START + 5},
    ]


async def test_chatpost_failures(seller: Seller) -> None:
    await seller.ok("addchannel", name="general")
    await seller.fails("chatpost", 404, "channel_not_found", channel="nope", message="hi")
    await seller.fails("chatpost", 400, "missing_parameter", channel="general")
    await seller.fails("chatpost", 400, "empty_message", channel="general", message="   ")
    await seller.fails("chatpost", 400, "parameter_too_long", channel="general", message="m" * 2001)
    await seller.fails(
        "chatpost", 400, "parameter_too_long", channel="general", message="hi", author="a" * 65
    )
    await seller.ok("chatpost", channel="general", message="m" * 2000)


async def test_a_channel_keeps_only_the_newest_messages(seller: Seller, services: Services) -> None:
    await seller.ok("updatesettings", chathistory=3)
    await seller.ok("addchannel", name="general")
    await seller.ok("addchannel", name="quiet")
    await seller.ok("chatpost", channel="quiet", message="untouched")
    for n in range(1, 6):
        await seller.ok("chatpost", channel="general", message=f"m{n}")
    assert [m["message"] for m in await chat.messages(services.db, seller.app_id, "general")] == [
        "m3",
        "m4",
        "m5",
    ]
    assert [m["message"] for m in await chat.messages(services.db, seller.app_id, "quiet")] == ["untouched"]


async def test_the_default_history_is_fifty_messages(seller: Seller, services: Services) -> None:
    await seller.ok("addchannel", name="general")
    for n in range(52):
        await seller.ok("chatpost", channel="general", message=f"m{n}")
    kept = await chat.messages(services.db, seller.app_id, "general")
    assert (len(kept), kept[0]["message"], kept[-1]["message"]) == (50, "m2", "m51")


# --- mutes -------------------------------------------------------------------------------------


async def test_muteuser_and_fetchallmutes(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "zoe")
    await make_user(services, seller.app_id, "amy")
    assert await seller.ok("fetchallmutes") == {
        "success": True,
        "message": "Successfully retrieved mutes",
        "mutes": [],
    }
    body = await seller.ok("muteuser", user="zoe", time=3600)
    assert body == {"success": True, "message": "Successfully muted user!", "until": START + 3600}
    await seller.ok("muteuser", user="amy", time=60)
    assert (await seller.ok("fetchallmutes"))["mutes"] == [
        {"user": "amy", "time": START + 60},
        {"user": "zoe", "time": START + 3600},
    ]


async def test_muting_again_replaces_the_end_time(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    await make_user(services, seller.app_id, "zoe")
    await seller.ok("muteuser", user="zoe", time=3600)
    clock.advance(100)
    await seller.ok("muteuser", user="zoe", time=10)
    assert (await seller.ok("fetchallmutes"))["mutes"] == [{"user": "zoe", "time": START + 110}]


async def test_muteuser_failures(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "zoe")
    await seller.fails("muteuser", 404, "user_not_found", user="nobody", time=60)
    await seller.fails("muteuser", 400, "missing_parameter", user="zoe")
    await seller.fails("muteuser", 400, "number_out_of_range", user="zoe", time=0)
    await seller.fails("muteuser", 400, "number_out_of_range", user="zoe", time=-60)
    await seller.fails("muteuser", 400, "invalid_number", user="zoe", time="soon")
    assert (await seller.ok("fetchallmutes"))["mutes"] == []


async def test_a_mute_ends_at_its_end_time(seller: Seller, services: Services, clock: MovableClock) -> None:
    user_id = await make_user(services, seller.app_id, "zoe")
    await seller.ok("muteuser", user="zoe", time=60)
    clock.advance(59)
    assert await chat.mute_end(services.db, seller.app_id, user_id, clock.now()) == START + 60
    assert len((await seller.ok("fetchallmutes"))["mutes"]) == 1
    clock.advance(1)
    assert await chat.mute_end(services.db, seller.app_id, user_id, clock.now()) is None
    assert (await seller.ok("fetchallmutes"))["mutes"] == []
    await seller.fails("unmuteuser", 409, "not_muted", user="zoe")


async def test_unmuteuser(seller: Seller, services: Services) -> None:
    user_id = await make_user(services, seller.app_id, "zoe")
    await seller.ok("muteuser", user="zoe", time=600)
    body = await seller.ok("unmuteuser", user="zoe")
    assert body == {"success": True, "message": "Successfully unmuted user!"}
    assert await chat.mute_end(services.db, seller.app_id, user_id, services.clock.now()) is None
    assert (await seller.ok("fetchallmutes"))["mutes"] == []
    await seller.fails("unmuteuser", 409, "not_muted", user="zoe")
    await seller.fails("unmuteuser", 404, "user_not_found", user="nobody")
    await seller.fails("unmuteuser", 400, "missing_parameter")


async def test_mutes_belong_to_one_application(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await make_user(services, seller.app_id, "zoe")
    other = await create_seller(services, client, owner="other", name="other app")
    await other.fails("muteuser", 404, "user_not_found", user="zoe", time=60)
    await seller.ok("muteuser", user="zoe", time=60)
    assert (await other.ok("fetchallmutes"))["mutes"] == []


async def test_chat_needs_the_chats_permission(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", permissions="users"))["sellerkey"]
    await seller.fails("fetchallchats", 403, "permission_denied", sellerkey=limited)
    await seller.fails("muteuser", 403, "permission_denied", sellerkey=limited, user="x", time=1)


# --- what the client API builds on ---------------------------------------------------------------


async def test_a_user_message_honours_the_channel_delay(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    db = services.db
    user_id = await make_user(services, seller.app_id, "zoe")
    other_id = await make_user(services, seller.app_id, "amy")
    await seller.ok("addchannel", name="general", delay=30)
    await chat.send_as_user(
        db, seller.app_id, "general", user_id=user_id, username="zoe", message="hi", now=clock.now()
    )
    channel = await chat.get_channel(db, seller.app_id, "general")
    assert await chat.last_message_at(db, channel.id, "zoe") == START
    clock.advance(29)
    with pytest.raises(RateLimited) as caught:
        await chat.send_as_user(
            db, seller.app_id, "general", user_id=user_id, username="zoe", message="again", now=clock.now()
        )
    assert (caught.value.error, caught.value.retry_after) == ("chat_delay", 1)
    # The delay is per user, and the owner's posts do not count.
    await chat.send_as_user(
        db, seller.app_id, "general", user_id=other_id, username="amy", message="me too", now=clock.now()
    )
    clock.advance(1)
    await chat.send_as_user(
        db, seller.app_id, "general", user_id=user_id, username="zoe", message="again", now=clock.now()
    )
    assert await chat.messages(db, seller.app_id, "general") == [
        {"author": "zoe", "role": "user", "message": "hi", "timestamp": START},
        {"author": "amy", "role": "user", "message": "me too", "timestamp": START + 29},
        {"author": "zoe", "role": "user", "message": "again", "timestamp": START + 30},
    ]


async def test_a_muted_user_cannot_send_until_the_mute_ends(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    db = services.db
    user_id = await make_user(services, seller.app_id, "zoe")
    await seller.ok("addchannel", name="general")
    await seller.ok("muteuser", user="zoe", time=100)
    clock.advance(99)
    with pytest.raises(Forbidden) as caught:
        await chat.send_as_user(
            db, seller.app_id, "general", user_id=user_id, username="zoe", message="x", now=clock.now()
        )
    assert caught.value.error == "user_muted"
    clock.advance(1)
    await chat.send_as_user(
        db, seller.app_id, "general", user_id=user_id, username="zoe", message="x", now=clock.now()
    )
    assert len(await chat.messages(db, seller.app_id, "general")) == 1


async def test_user_messages_are_checked_and_pruned(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    db = services.db
    user_id = await make_user(services, seller.app_id, "zoe")
    await seller.ok("updatesettings", chathistory=2)
    await seller.ok("addchannel", name="general")

    async def send(message: str, **options: int) -> None:
        await chat.send_as_user(
            db,
            seller.app_id,
            "general",
            user_id=user_id,
            username="zoe",
            message=message,
            now=clock.now(),
            **options,
        )

    with pytest.raises(Invalid) as too_long:
        await send("x" * 11, max_length=10)
    assert too_long.value.error == "message_too_long"
    with pytest.raises(Invalid) as empty:
        await send(" \n ")
    assert empty.value.error == "empty_message"
    with pytest.raises(NotFound) as missing:
        await chat.send_as_user(
            db, seller.app_id, "nope", user_id=user_id, username="zoe", message="x", now=clock.now()
        )
    assert missing.value.error == "channel_not_found"
    for n in range(4):
        await send(f"u{n}")
    await seller.ok("chatpost", channel="general", message="dev")
    assert [(m["author"], m["message"]) for m in await chat.messages(db, seller.app_id, "general")] == [
        ("zoe", "u3"),
        ("owner", "dev"),
    ]


async def test_unmute_of_an_unknown_user_and_a_conflict_are_typed(seller: Seller, services: Services) -> None:
    with pytest.raises(NotFound):
        await chat.unmute(services.db, seller.app_id, "nobody", services.clock.now())
    await make_user(services, seller.app_id, "zoe")
    with pytest.raises(Conflict):
        await chat.unmute(services.db, seller.app_id, "zoe", services.clock.now())


async def test_the_audit_log_records_chat_changes(seller: Seller, services: Services) -> None:
    await make_user(services, seller.app_id, "zoe")
    await seller.ok("addchannel", name="general", delay=5)
    await seller.ok("editchan", name="general", delay=9)
    await seller.ok("chatpost", channel="general", message="hello")
    await seller.ok("muteuser", user="zoe", time=60)
    await seller.ok("unmuteuser", user="zoe")
    await seller.ok("delchannel", name="general")
    logs = {entry["action"]: entry for entry in (await seller.ok("fetchauditlogs"))["logs"]}
    assert (logs["addchannel"]["target"], logs["addchannel"]["after"]) == (
        "channel:general",
        {"name": "general", "delay": 5},
    )
    assert (logs["editchan"]["before"], logs["editchan"]["after"]) == ({"delay": 5}, {"delay": 9})
    assert logs["chatpost"]["after"] == {"author": "owner", "message": "hello"}
    assert (logs["muteuser"]["target"], logs["muteuser"]["after"]) == ("mute:zoe", {"until": START + 60})
    assert (logs["unmuteuser"]["before"], logs["unmuteuser"]["after"]) == ({"until": START + 60}, None)
    assert (logs["delchannel"]["before"], logs["delchannel"]["after"]) == (
        {"name": "general", "delay": 9},
        None,
    )
