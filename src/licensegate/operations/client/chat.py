"""Client API — Chat: Fetch Messages (`chatfetch`, KeyAuth's `chatget`) and Send Message
(`chatsend`), for a logged-in user."""

from __future__ import annotations

from typing import Any

from licensegate.domain import chat
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

GROUP = "Chat"
CHANNEL = Param("channel", required=True, max_length=chat.MAX_CHANNEL_NAME, doc="the channel's name")
# The statuses the interface document lists for Fetch Messages: no 401 (a missing or unknown
# credential is 403) and no 404 (an unknown channel is 403 `channel_not_found`).
FETCH_STATUSES = frozenset({200, 400, 403, 429, 500})


@registry.operation(
    "chatfetch",
    group=GROUP,
    summary="Fetch Messages",
    aliases=("chatget",),
    requires="validated",
    statuses=FETCH_STATUSES,
    params=[CHANNEL],
    returns={
        "messages": (
            "the channel's messages, oldest first: [{author, role (`user` for users' messages, "
            "`developer` for the owner's), message, timestamp (integer Unix seconds)}]"
        ),
    },
)
async def fetch(call: ClientCall) -> dict[str, Any]:
    """The messages of a channel, oldest first (at most the application's chat history length,
    50 by default). KeyAuth's `chatget` does the same. The credentials are `sessionid` and
    `ownerid` (`name` may be sent too). Refusals, all 403 but a bad parameter (400) and
    throttling (429): `session_not_found`, `session_expired`, `missing_session`,
    `session_not_validated`, `channel_not_found` (KeyAuth answered an empty list)."""
    messages = await chat.messages(call.db, call.app.id, call.args.text("channel"))
    # The channel is pruned on each post; a history shortened since then shows at once.
    kept = max(1, call.app.chat_history)
    return {"message": "Successfully retrieved chat messages", "messages": messages[-kept:]}


@registry.operation(
    "chatsend",
    group=GROUP,
    summary="Send Message",
    requires="validated",
    mutates=True,
    params=[
        CHANNEL,
        Param("message", required=True, max_length=chat.MAX_MESSAGE, strip=False, doc="the message text"),
    ],
    returns={"message": "`Successfully sent chat message`"},
)
async def send(call: ClientCall) -> dict[str, Any]:
    """Post a message to a channel as the session's user (role `user`). Refusals:
    `channel_not_found` (404); `user_muted` (403) while a mute set by the developer runs (until
    its end time, and no longer); `chat_delay` (429, with Retry-After: the channel's delay, in
    seconds, counts from the user's last message in it; the message is the application's
    `chatHitDelay`); `empty_message`, `parameter_too_long` (over 2000 characters) (400). The
    channel keeps the application's chat history length of newest messages."""
    user_id = call.live_session.user_id
    assert user_id is not None  # a logged-in session has its user
    try:
        await chat.send_from_session(
            call.db,
            call.app.id,
            call.args.text("channel"),
            user_id=user_id,
            message=call.args.text("message"),
            now=call.now(),
        )
    except chat.ChatDelay as delay:
        raise chat.ChatDelay(delay.retry_after, (await call.messages())("chatHitDelay")) from None
    return {"message": "Successfully sent chat message"}
