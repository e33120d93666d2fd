"""SQL for chat: channels, their messages and muted users."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from licensegate.store.database import Executor, Row
from licensegate.store.paging import PageRequest, escape_like, keyset

# --- channels ----------------------------------------------------------------------------------


async def find_channel(db: Executor, app_id: int, name: str) -> Row | None:
    return await db.fetch_one(
        "SELECT id, name, delay_seconds FROM chat_channels WHERE app_id = ? AND name = ?", app_id, name
    )


async def insert_channel(db: Executor, *, app_id: int, name: str, delay: int, now: int) -> int:
    """Raises UniqueViolation when the name is taken in this application."""
    channel_id: int = await db.fetch_value(
        "INSERT INTO chat_channels (app_id, name, delay_seconds, created_at) "
        "VALUES (?, ?, ?, ?) RETURNING id",
        app_id,
        name,
        delay,
        now,
    )
    return channel_id


async def set_delay(db: Executor, channel_id: int, delay: int) -> int:
    return await db.execute("UPDATE chat_channels SET delay_seconds = ? WHERE id = ?", delay, channel_id)


async def lock_channel(db: Executor, channel_id: int) -> None:
    """Serialise posts to one channel until the transaction ends (a no-op UPDATE takes the row
    lock on PostgreSQL; SQLite's BEGIN IMMEDIATE serialises writers already), so the delay check
    and the pruning of two concurrent posts cannot interleave."""
    await db.execute("UPDATE chat_channels SET delay_seconds = delay_seconds WHERE id = ?", channel_id)


async def delete_channel(db: Executor, channel_id: int) -> int:
    await db.execute("DELETE FROM chat_messages WHERE channel_id = ?", channel_id)
    return await db.execute("DELETE FROM chat_channels WHERE id = ?", channel_id)


class ListedChannel(TypedDict):
    id: int
    name: str
    delay_seconds: int


async def list_channels(db: Executor, app_id: int) -> list[ListedChannel]:
    rows = await db.fetch_all(
        "SELECT id, name, delay_seconds FROM chat_channels WHERE app_id = ? ORDER BY id", app_id
    )
    return cast("list[ListedChannel]", rows)


async def chat_history(db: Executor, app_id: int) -> int:
    """How many of the newest messages each channel of the application keeps."""
    kept: int = await db.fetch_value("SELECT chat_history FROM apps WHERE id = ?", app_id)
    return kept


# --- messages ----------------------------------------------------------------------------------


async def insert_message(
    db: Executor, *, channel_id: int, author: str, role: str, message: str, now: int
) -> int:
    message_id: int = await db.fetch_value(
        "INSERT INTO chat_messages (channel_id, author, role, message, created_at) "
        "VALUES (?, ?, ?, ?, ?) RETURNING id",
        channel_id,
        author,
        role,
        message,
        now,
    )
    return message_id


async def prune(db: Executor, channel_id: int, keep: int) -> int:
    """Delete all but the `keep` newest messages of the channel (newest by insertion order)."""
    return await db.execute(
        "DELETE FROM chat_messages WHERE channel_id = ? AND id <= "
        "(SELECT id FROM chat_messages WHERE channel_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        channel_id,
        channel_id,
        keep,
    )


async def clear(db: Executor, channel_id: int) -> int:
    return await db.execute("DELETE FROM chat_messages WHERE channel_id = ?", channel_id)


class MessageRow(TypedDict):
    author: str
    role: str  # 'user' or the owner's
    message: str
    created_at: int


async def messages(db: Executor, channel_id: int) -> list[MessageRow]:
    """The channel's messages, oldest first."""
    rows = await db.fetch_all(
        "SELECT author, role, message, created_at FROM chat_messages WHERE channel_id = ? ORDER BY id",
        channel_id,
    )
    return cast("list[MessageRow]", rows)


MESSAGE_COLUMNS = "id, channel_id, author, role, message, created_at"


async def browse_messages(
    db: Executor,
    app_id: int,
    *,
    channel_id: int | None,
    author: str | None,
    text: str | None,
    request: PageRequest,
) -> list[Row]:
    """One keyset page of the application's messages (of one channel when `channel_id` is set)
    in posting order (`request.size + 1` rows, see `paging.finish`): by `author` exactly, holding
    `text` (any case). One channel is read through its (channel_id, id) index; every channel's
    messages are few (each channel keeps its newest `chat_history` only)."""
    if channel_id is not None:
        where, args = "channel_id = ?", list[Any]([channel_id])
    else:
        where, args = "channel_id IN (SELECT id FROM chat_channels WHERE app_id = ?)", list[Any]([app_id])
    if author is not None:
        where += " AND author = ?"
        args.append(author)
    if text is not None:
        like = "ILIKE" if db.dialect == "postgresql" else "LIKE"
        where += f" AND message {like} ? ESCAPE '\\'"
        args.append(f"%{escape_like(text)}%")
    after, after_args, order = keyset("id", request)
    return await db.fetch_all(
        f"SELECT {MESSAGE_COLUMNS} FROM chat_messages WHERE {where}{after} {order} LIMIT ?",
        *args,
        *after_args,
        request.size + 1,
    )


async def find_message(db: Executor, app_id: int, message_id: int) -> Row | None:
    """A message of one of the application's channels, with its channel's name."""
    return await db.fetch_one(
        "SELECT m.id, m.author, m.role, m.message, m.created_at, c.name AS channel "
        "FROM chat_messages m JOIN chat_channels c ON c.id = m.channel_id "
        "WHERE m.id = ? AND c.app_id = ?",
        message_id,
        app_id,
    )


async def delete_message(db: Executor, message_id: int) -> int:
    return await db.execute("DELETE FROM chat_messages WHERE id = ?", message_id)


async def message_counts(db: Executor, app_id: int) -> dict[int, int]:
    """How many messages each channel of the application holds, by channel id."""
    rows = await db.fetch_all(
        "SELECT m.channel_id, COUNT(*) AS n FROM chat_messages m JOIN chat_channels c ON c.id = m.channel_id "
        "WHERE c.app_id = ? GROUP BY m.channel_id",
        app_id,
    )
    return {row["channel_id"]: row["n"] for row in rows}


async def last_message_at(db: Executor, channel_id: int, author: str, role: str) -> int | None:
    last: int | None = await db.fetch_value(
        "SELECT MAX(created_at) FROM chat_messages WHERE channel_id = ? AND author = ? AND role = ?",
        channel_id,
        author,
        role,
    )
    return last


# --- mutes -------------------------------------------------------------------------------------


async def mute_until(db: Executor, app_id: int, user_id: int) -> int | None:
    until: int | None = await db.fetch_value(
        "SELECT until FROM chat_mutes WHERE app_id = ? AND user_id = ?", app_id, user_id
    )
    return until


async def set_mute(db: Executor, *, app_id: int, user_id: int, until: int, now: int) -> None:
    """Mute until `until`, replacing any earlier end time."""
    await db.execute(
        "INSERT INTO chat_mutes (app_id, user_id, until, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (app_id, user_id) "
        "DO UPDATE SET until = excluded.until, created_at = excluded.created_at",
        app_id,
        user_id,
        until,
        now,
    )


async def delete_active_mute(db: Executor, app_id: int, user_id: int, now: int) -> int:
    """Lift a mute that has not ended yet; 0 when there is none."""
    return await db.execute(
        "DELETE FROM chat_mutes WHERE app_id = ? AND user_id = ? AND until > ?", app_id, user_id, now
    )


class MuteRow(TypedDict):
    username: str
    until: int


async def active_mutes(db: Executor, app_id: int, now: int) -> list[MuteRow]:
    rows = await db.fetch_all(
        "SELECT u.username, m.until FROM chat_mutes m JOIN users u ON u.id = m.user_id "
        "WHERE m.app_id = ? AND m.until > ? ORDER BY m.until, u.username",
        app_id,
        now,
    )
    return cast("list[MuteRow]", rows)
