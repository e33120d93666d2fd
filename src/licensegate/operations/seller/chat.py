"""Seller API — Chat: channels, the owner's posts (role `developer` in the client API's Fetch
Messages) and muted users. Every delay and mute time here is in seconds."""

from __future__ import annotations

from typing import Any

from licensegate.domain import chat
from licensegate.domain.paging import PageRequest, Position
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Chat"
AREA: Area = "chats"
CHANNEL = Param(
    "name", required=True, max_length=chat.MAX_CHANNEL_NAME, aliases=("channel",), doc="channel name"
)
USER = Param(
    "user", required=True, max_length=64, aliases=("username",), doc="the user's name", names_user=True
)


def _delay(required: bool) -> Param:
    return Param(
        "delay",
        "int",
        required=required,
        minimum=0,
        maximum=chat.MAX_DELAY,
        max_length=9,
        doc="seconds a user must wait between two messages in this channel"
        + ("" if required else " (default 0)"),
    )


@registry.operation(
    "addchannel",
    group=GROUP,
    summary="Create Chat Channel",
    area=AREA,
    mutates=True,
    params=[CHANNEL, _delay(False)],
    returns={"message": "`Successfully created channel!`"},
)
async def add_channel(call: SellerCall) -> dict[str, Any]:
    """Create a chat channel; its name must be new in this application."""
    channel = await chat.add_channel(
        call.db,
        call.app_id,
        name=call.args.text("name"),
        delay=call.args.opt_integer("delay") or 0,
        now=call.now(),
    )
    call.record(f"channel:{channel.name}", before=None, after={"name": channel.name, "delay": channel.delay})
    return {"message": "Successfully created channel!"}


@registry.operation(
    "editchan",
    group=GROUP,
    summary="Edit Chat Channel",
    area=AREA,
    mutates=True,
    params=[CHANNEL, _delay(True)],
    returns={"message": "`Successfully updated channel!`"},
)
async def edit_channel(call: SellerCall) -> dict[str, Any]:
    """Change a channel's delay. The delay is in seconds, as for `addchannel` (KeyAuth took
    minutes here; clients sending minutes must convert)."""
    before, after = await chat.set_delay(
        call.db, call.app_id, call.args.text("name"), call.args.integer("delay")
    )
    call.record(f"channel:{after.name}", before={"delay": before.delay}, after={"delay": after.delay})
    return {"message": "Successfully updated channel!"}


@registry.operation(
    "delchannel",
    group=GROUP,
    summary="Delete Chat Channel",
    area=AREA,
    mutates=True,
    params=[CHANNEL],
    returns={"message": "`Successfully deleted channel!`"},
)
async def delete_channel(call: SellerCall) -> dict[str, Any]:
    """Delete a channel together with its messages."""
    channel = await chat.delete_channel(call.db, call.app_id, call.args.text("name"))
    call.record(f"channel:{channel.name}", before={"name": channel.name, "delay": channel.delay}, after=None)
    return {"message": "Successfully deleted channel!"}


@registry.operation(
    "clearchannel",
    group=GROUP,
    summary="Clear Chat Channel",
    area=AREA,
    mutates=True,
    params=[CHANNEL],
    returns={"message": "`Successfully cleared channel!`", "deleted": "how many messages were deleted"},
)
async def clear_channel(call: SellerCall) -> dict[str, Any]:
    """Delete every message of a channel; the channel stays."""
    name = call.args.text("name")
    deleted = await chat.clear_channel(call.db, call.app_id, name)
    call.record(f"channel:{name}", before={"messages": deleted}, after={"messages": 0})
    return {"message": "Successfully cleared channel!", "deleted": deleted}


@registry.operation(
    "fetchallchats",
    group=GROUP,
    summary="Get All Chat Channels",
    area=AREA,
    returns={"chats": "[{name, delay (seconds)}], oldest first"},
)
async def fetch_all_channels(call: SellerCall) -> dict[str, Any]:
    """The application's chat channels (an empty list when there are none)."""
    return {
        "message": "Successfully retrieved chats",
        "chats": [
            {"name": row["name"], "delay": row["delay_seconds"]}
            for row in await chat.list_channels(call.db, call.app_id)
        ],
    }


@registry.operation(
    "chatpost",
    group=GROUP,
    summary="Post Chat Message",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "channel", required=True, max_length=chat.MAX_CHANNEL_NAME, aliases=("name",), doc="channel name"
        ),
        Param("message", required=True, max_length=chat.MAX_MESSAGE, strip=False, doc="the message text"),
        Param(
            "author",
            max_length=chat.MAX_AUTHOR,
            doc="the name shown as author (default the owner's account name)",
        ),
    ],
    returns={"message": "`Successfully posted message!`"},
)
async def post(call: SellerCall) -> dict[str, Any]:
    """Post a message as the application's developer: it appears in the client API's Fetch
    Messages with role `developer`. No delay or mute applies; the channel keeps its newest
    messages only (the application's chat history length, 50 by default)."""
    channel = call.args.text("channel")
    author = call.args.opt_text("author") or call.identity.owner
    message = call.args.text("message")
    await chat.post(
        call.db,
        call.app_id,
        channel,
        author=author,
        role=chat.ROLE_DEVELOPER,
        message=message,
        now=call.now(),
    )
    call.record(f"channel:{channel}", before=None, after={"author": author, "message": message[:200]})
    return {"message": "Successfully posted message!"}


@registry.operation(
    "muteuser",
    group=GROUP,
    summary="Mute User",
    area=AREA,
    mutates=True,
    params=[
        USER,
        Param(
            "time",
            "int",
            required=True,
            minimum=1,
            maximum=chat.MAX_MUTE,
            max_length=10,
            doc="how many seconds from now the mute lasts",
        ),
    ],
    returns={"message": "`Successfully muted user!`", "until": "the end of the mute (Unix s)"},
)
async def mute(call: SellerCall) -> dict[str, Any]:
    """Stop a user from sending chat messages for `time` seconds. Muting a muted user replaces
    the end time."""
    user = call.args.text("user")
    before, until = await chat.mute(call.db, call.app_id, user, call.args.integer("time"), call.now())
    call.record(f"mute:{user}", before=None if before is None else {"until": before}, after={"until": until})
    return {"message": "Successfully muted user!", "until": until}


@registry.operation(
    "unmuteuser",
    group=GROUP,
    summary="Unmute User",
    area=AREA,
    mutates=True,
    params=[USER],
    returns={"message": "`Successfully unmuted user!`"},
)
async def unmute(call: SellerCall) -> dict[str, Any]:
    """Lift a user's running mute (409 `not_muted` when there is none)."""
    user = call.args.text("user")
    until = await chat.unmute(call.db, call.app_id, user, call.now())
    call.record(f"mute:{user}", before={"until": until}, after=None)
    return {"message": "Successfully unmuted user!"}


@registry.operation(
    "fetchallmutes",
    group=GROUP,
    summary="Get All Mutes",
    area=AREA,
    returns={
        "mutes": "[{user, time (the end of the mute, Unix s)}], mutes that have not ended, soonest end first"
    },
)
async def fetch_all_mutes(call: SellerCall) -> dict[str, Any]:
    """Users whose mute is still running."""
    return {
        "message": "Successfully retrieved mutes",
        "mutes": [
            {"user": row["username"], "time": row["until"]}
            for row in await chat.list_mutes(call.db, call.app_id, call.now())
        ],
    }


PAGE_SIZE = 50


@registry.operation(
    "fetchchatmessages",
    group=GROUP,
    summary="Get Chat Messages",
    area=AREA,
    params=[
        Param("channel", max_length=chat.MAX_CHANNEL_NAME, doc="only this channel's messages"),
        Param("author", max_length=chat.MAX_AUTHOR, doc="only messages by this author (the whole name)"),
        Param("search", max_length=chat.MAX_SEARCH, doc="only messages holding this text (any case)"),
        Param(
            "before",
            "int",
            minimum=1,
            max_length=19,
            doc="only messages older than the message with this id (the next page: the last id seen)",
        ),
        Param(
            "limit",
            "int",
            minimum=1,
            maximum=200,
            max_length=3,
            doc=f"at most this many (default {PAGE_SIZE})",
        ),
    ],
    returns={
        "messages": "[{id, channel, author, role (`user` or `developer`), message, timestamp (Unix s)}], "
        "newest first",
        "more": "whether older messages match too (ask again with `before` the last id)",
    },
)
async def fetch_messages(call: SellerCall) -> dict[str, Any]:
    """The application's chat messages, newest first, filtered and paged by id: every channel's
    unless `channel` is given (404 `channel_not_found` when it does not exist)."""
    before = call.args.opt_integer("before")
    request = PageRequest(
        "id",
        True,
        call.args.opt_integer("limit") or PAGE_SIZE,
        None if before is None else Position(before, before),
    )
    page = await chat.browse_messages(
        call.db,
        call.app_id,
        channel=call.args.opt_text("channel"),
        author=call.args.opt_text("author"),
        text=call.args.opt_text("search"),
        request=request,
    )
    return {
        "message": "Successfully retrieved messages",
        "messages": [
            {
                "id": row["id"],
                "channel": row["channel"],
                "author": row["author"],
                "role": row["role"],
                "message": row["message"],
                "timestamp": row["created_at"],
            }
            for row in page.rows
        ],
        "more": page.has_next,
    }


@registry.operation(
    "delchatmessage",
    group=GROUP,
    summary="Delete Chat Message",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "id", "int", required=True, minimum=1, max_length=19, doc="the message's id (`fetchchatmessages`)"
        )
    ],
    returns={"message": "`Successfully deleted message!`"},
)
async def delete_message(call: SellerCall) -> dict[str, Any]:
    """Delete one chat message (a user's or the developer's); clients no longer see it."""
    row = await chat.delete_message(call.db, call.app_id, call.args.integer("id"))
    call.record(
        f"channel:{row['channel']}",
        before={"id": row["id"], "author": row["author"], "message": row["message"][:200]},
        after=None,
    )
    return {"message": "Successfully deleted message!"}
