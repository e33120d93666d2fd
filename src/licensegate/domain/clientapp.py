"""The application a client call belongs to, as the client API sees it, and the messages it
answers with (custom ones cached briefly per worker process)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from licensegate.domain import messages
from licensegate.store import messages as message_store
from licensegate.store.database import Executor, Row

MESSAGE_CACHE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class ClientApp:
    id: int
    ownerid: str
    name: str
    owner: str
    version: str
    download_link: str | None
    enabled: bool
    paused: bool
    hwid_lock: bool
    force_hwid: bool
    min_hwid_length: int
    max_hwids: int
    session_seconds: int
    min_username_length: int
    hash_check: bool
    tamper_action: str
    client_rate_limit: int
    client_rate_window: int
    auth_rate_limit: int
    auth_rate_window: int
    chat_history: int
    log_webhook_url: str | None

    @classmethod
    def from_row(cls, row: Row) -> ClientApp:
        return cls(
            id=row["app_id"],
            ownerid=row["ownerid"],
            name=row["app_name"],
            owner=row["owner"],
            version=row["version"],
            download_link=row["download_link"],
            enabled=bool(row["enabled"]),
            paused=row["app_paused_at"] is not None,
            hwid_lock=bool(row["hwid_lock"]),
            force_hwid=bool(row["force_hwid"]),
            min_hwid_length=row["min_hwid_length"],
            max_hwids=row["max_hwids"],
            session_seconds=row["session_seconds"],
            min_username_length=row["min_username_length"],
            hash_check=bool(row["hash_check"]),
            tamper_action=row["tamper_action"],
            client_rate_limit=row["client_rate_limit"],
            client_rate_window=row["client_rate_window"],
            auth_rate_limit=row["auth_rate_limit"],
            auth_rate_window=row["auth_rate_window"],
            chat_history=row["chat_history"],
            log_webhook_url=row["log_webhook_url"],
        )


class MessageCache:
    """Each application's custom messages, kept for a couple of seconds per worker process.

    A change made through this process is seen at once (`invalidate`); one made through another
    process or machine is seen within MESSAGE_CACHE_SECONDS.
    """

    def __init__(self, ttl: float = MESSAGE_CACHE_SECONDS) -> None:
        self._ttl = ttl
        self._entries: dict[int, tuple[float, dict[str, str]]] = {}

    async def get(self, db: Executor, app_id: int) -> dict[str, str]:
        now = time.monotonic()
        entry = self._entries.get(app_id)
        if entry is not None and entry[0] > now:
            return entry[1]
        overrides = await message_store.for_app(db, app_id)
        if len(self._entries) > 10_000:
            self._entries.clear()
        self._entries[app_id] = (now + self._ttl, overrides)
        return overrides

    def invalidate(self, app_id: int) -> None:
        self._entries.pop(app_id, None)


class Messages:
    """One call's view of its application's messages."""

    def __init__(self, overrides: dict[str, str]) -> None:
        self._overrides = overrides

    def __call__(self, name: str, **values: Any) -> str:
        return messages.render(name, self._overrides, **{k: str(v) for k, v in values.items()})
