"""Chat: channels an application's users talk in, the owner's posts, and muted users.

Every channel keeps only the application's `chat_history` newest messages (pruned on each post).
A channel's `delay` is the number of seconds a user must wait between two messages in it; unlike
KeyAuth, whose `editchan` took minutes while `addchannel` took seconds, every delay here is in
seconds. A mute lasts until its end time and no longer: a user is muted while `now < until`.

The client API's Send Message applies its rules through `send_as_user`; the primitives it is
made of (`get_channel`, `mute_end`, `last_message_at`, `post`) are public too. Time always comes
from the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate.domain import errorcodes
from licensegate.domain.errors import RateLimited
from licensegate.store import chat as store
from licensegate.store import users as user_store
from licensegate.store.chat import ListedChannel, MuteRow
from licensegate.store.database import Database, Executor, UniqueViolation
from licensegate.store.paging import Page, PageRequest, finish

MAX_CHANNEL_NAME = 50
MAX_MESSAGE = 2000
MAX_AUTHOR = 64
MAX_DELAY = 365 * 86400
MAX_MUTE = 10 * 365 * 86400
ROLE_USER = "user"
ROLE_DEVELOPER = "developer"


class ChatDelay(RateLimited):
    """A user posts again before the channel's delay has passed (429 with Retry-After)."""

    def __init__(self, retry_after: int, message: str) -> None:
        super().__init__(retry_after, message)
        self.error = "chat_delay"


@dataclass(frozen=True, slots=True)
class Channel:
    id: int
    name: str
    delay: int


def _no_controls(value: str, what: str) -> str:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise errorcodes.INVALID_NAME(what=what)
    return value


def check_message(message: str, max_length: int = MAX_MESSAGE) -> str:
    if not message.strip():
        raise errorcodes.EMPTY_MESSAGE()
    if len(message) > max_length:
        raise errorcodes.MESSAGE_TOO_LONG(maximum=max_length)
    return message


# --- channels ----------------------------------------------------------------------------------


async def get_channel(db: Executor, app_id: int, name: str) -> Channel:
    row = await store.find_channel(db, app_id, name)
    if row is None:
        raise errorcodes.CHANNEL_NOT_FOUND(name=name)
    return Channel(id=row["id"], name=row["name"], delay=row["delay_seconds"])


async def add_channel(db: Executor, app_id: int, *, name: str, delay: int, now: int) -> Channel:
    _no_controls(name, "channel name")
    try:
        channel_id = await store.insert_channel(db, app_id=app_id, name=name, delay=delay, now=now)
    except UniqueViolation as exc:
        raise errorcodes.CHANNEL_EXISTS(name=name) from exc
    return Channel(id=channel_id, name=name, delay=delay)


async def set_delay(db: Database, app_id: int, name: str, delay: int) -> tuple[Channel, Channel]:
    """Change a channel's delay (seconds); returns the channel before and after."""
    async with db.transaction() as tx:
        before = await get_channel(tx, app_id, name)
        await store.set_delay(tx, before.id, delay)
    return before, Channel(id=before.id, name=before.name, delay=delay)


async def delete_channel(db: Database, app_id: int, name: str) -> Channel:
    """Delete a channel and its messages."""
    async with db.transaction() as tx:
        channel = await get_channel(tx, app_id, name)
        await store.delete_channel(tx, channel.id)
    return channel


async def clear_channel(db: Database, app_id: int, name: str) -> int:
    """Delete every message of a channel; returns how many."""
    async with db.transaction() as tx:
        channel = await get_channel(tx, app_id, name)
        return await store.clear(tx, channel.id)


async def list_channels(db: Executor, app_id: int) -> list[ListedChannel]:
    return await store.list_channels(db, app_id)


# --- messages ----------------------------------------------------------------------------------


async def post(
    db: Database, app_id: int, channel_name: str, *, author: str, role: str, message: str, now: int
) -> None:
    """Add a message to a channel with no rules beyond its length (the owner's posts), keeping
    the channel's newest `chat_history` messages."""
    check_message(message)
    async with db.transaction() as tx:
        channel = await get_channel(tx, app_id, channel_name)
        await store.lock_channel(tx, channel.id)
        await _insert_and_prune(tx, app_id, channel.id, author=author, role=role, message=message, now=now)


async def send_as_user(
    db: Database,
    app_id: int,
    channel_name: str,
    *,
    user_id: int,
    username: str,
    message: str,
    now: int,
    max_length: int = MAX_MESSAGE,
) -> None:
    """A user's message (the client API's Send Message), under the chat rules: the channel must
    exist (404 `channel_not_found`), the user must not be muted (403 `user_muted`), the channel's
    delay must have passed since the user's last message in it (429 `chat_delay`, with
    Retry-After), and the message must be 1 to `max_length` characters (400 `empty_message`,
    `message_too_long`). The checks and the insert run in one transaction that serialises posts
    to the channel, so two quick messages cannot both slip under the delay."""
    check_message(message, max_length)
    async with db.transaction() as tx:
        channel = await get_channel(tx, app_id, channel_name)
        await store.lock_channel(tx, channel.id)
        until = await mute_end(tx, app_id, user_id, now)
        if until is not None:
            raise errorcodes.USER_MUTED(until=until)
        if channel.delay > 0:
            last = await last_message_at(tx, channel.id, username)
            if last is not None and now < last + channel.delay:
                wait = last + channel.delay - now
                raise ChatDelay(
                    wait, f"Wait {wait} more seconds before sending another message to this channel."
                )
        await _insert_and_prune(
            tx, app_id, channel.id, author=username, role=ROLE_USER, message=message, now=now
        )


async def send_from_session(
    db: Database, app_id: int, channel_name: str, *, user_id: int, message: str, now: int
) -> None:
    """The client API's Send Message: the logged-in session's user, by id (a rename cannot get in
    between), sends under the chat rules of `send_as_user`. A user deleted a moment ago is 403
    `session_not_found` (deleting a user ends its sessions)."""
    user = await user_store.find_by_id(db, app_id, user_id)
    if user is None:
        raise errorcodes.SESSION_GONE()
    await send_as_user(
        db, app_id, channel_name, user_id=user_id, username=user["username"], message=message, now=now
    )


async def _insert_and_prune(
    tx: Executor, app_id: int, channel_id: int, *, author: str, role: str, message: str, now: int
) -> None:
    await store.insert_message(tx, channel_id=channel_id, author=author, role=role, message=message, now=now)
    # The channel always keeps at least the message just posted.
    await store.prune(tx, channel_id, max(1, await store.chat_history(tx, app_id)))


async def messages(db: Executor, app_id: int, channel_name: str) -> list[dict[str, Any]]:
    """A channel's messages, oldest first, in the shape of the client API's Fetch Messages."""
    channel = await get_channel(db, app_id, channel_name)
    return [
        {
            "author": row["author"],
            "role": row["role"],
            "message": row["message"],
            "timestamp": row["created_at"],
        }
        for row in await store.messages(db, channel.id)
    ]


MAX_SEARCH = 100  # characters of a message search


async def browse_messages(
    db: Executor,
    app_id: int,
    *,
    channel: str | None,
    author: str | None,
    text: str | None,
    request: PageRequest,
) -> Page:
    """One keyset page of the application's messages, newest first by default: of one channel
    (404 `channel_not_found` when it does not exist), by one author exactly, holding `text` in
    any case. Each row carries its id (for deleting it) and its channel's name."""
    channel_id = None if channel is None else (await get_channel(db, app_id, channel)).id
    rows = await store.browse_messages(
        db, app_id, channel_id=channel_id, author=author, text=text, request=request
    )
    names = {row["id"]: row["name"] for row in await store.list_channels(db, app_id)}
    page = finish([dict(row) for row in rows], request)
    for row in page.rows:
        row["channel"] = names.get(row["channel_id"], "")
    return page


async def delete_message(db: Database, app_id: int, message_id: int) -> dict[str, Any]:
    """Delete one message of the application's channels; returns it as it was (id, author,
    role, message, created_at, channel)."""
    async with db.transaction() as tx:
        row = await store.find_message(tx, app_id, message_id)
        if row is None:
            raise errorcodes.CHAT_MESSAGE_NOT_FOUND(id=message_id)
        await store.delete_message(tx, message_id)
    return dict(row)


async def message_counts(db: Executor, app_id: int) -> dict[int, int]:
    return await store.message_counts(db, app_id)


async def last_message_at(db: Executor, channel_id: int, author: str) -> int | None:
    """When this user last posted in the channel (Unix s), or None."""
    return await store.last_message_at(db, channel_id, author, ROLE_USER)


# --- mutes -------------------------------------------------------------------------------------


async def mute_end(db: Executor, app_id: int, user_id: int, now: int) -> int | None:
    """The end of the user's mute if it is still running at `now`, else None."""
    until = await store.mute_until(db, app_id, user_id)
    return until if until is not None and now < until else None


async def _user_id(db: Executor, app_id: int, username: str) -> int:
    row = await user_store.find(db, app_id, username)
    if row is None:
        raise errorcodes.USER_NOT_FOUND(username=username)
    user_id: int = row["id"]
    return user_id


async def mute(db: Database, app_id: int, username: str, seconds: int, now: int) -> tuple[int | None, int]:
    """Mute a user for `seconds` from now, replacing any running mute. Returns the end of the
    mute that was running (or None) and the new end."""
    if seconds <= 0:
        raise errorcodes.NUMBER_OUT_OF_RANGE("The mute time must be more than 0 seconds.")
    until = now + seconds
    async with db.transaction() as tx:
        user_id = await _user_id(tx, app_id, username)
        before = await mute_end(tx, app_id, user_id, now)
        await store.set_mute(tx, app_id=app_id, user_id=user_id, until=until, now=now)
    return before, until


async def unmute(db: Database, app_id: int, username: str, now: int) -> int:
    """Lift a running mute; returns its end time."""
    async with db.transaction() as tx:
        user_id = await _user_id(tx, app_id, username)
        until = await mute_end(tx, app_id, user_id, now)
        if until is None or not await store.delete_active_mute(tx, app_id, user_id, now):
            raise errorcodes.NOT_MUTED(username=username)
    return until


async def list_mutes(db: Executor, app_id: int, now: int) -> list[MuteRow]:
    """Mutes that have not ended (`until`: the end, Unix s)."""
    return await store.active_mutes(db, app_id, now)
