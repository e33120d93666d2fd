"""The web loader's buttons: (text shown on the customer panel, value the program waits for),
one value per application. A button's value travels in a URL path to the program's local
listener, so it may not contain white space or characters that need escaping there."""

from __future__ import annotations

import re
from typing import Any

from licensegate.domain import errorcodes
from licensegate.store import loader as store
from licensegate.store.database import Executor

MAX_TEXT = 99
_VALUE = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@-]{1,99}")


async def list_all(db: Executor, app_id: int) -> list[dict[str, Any]]:
    return [{"text": row["text"], "value": row["value"]} for row in await store.list_all(db, app_id)]


async def add(db: Executor, app_id: int, *, value: str, text: str) -> None:
    if not _VALUE.fullmatch(value):
        raise errorcodes.INVALID_BUTTON_VALUE()
    if len(text) > MAX_TEXT:
        raise errorcodes.PARAMETER_TOO_LONG(name="text", max_length=MAX_TEXT, param="text")
    if not await store.insert(db, app_id, value=value, text=text):
        raise errorcodes.BUTTON_EXISTS(value=value)


async def delete(db: Executor, app_id: int, value: str) -> None:
    if await store.delete(db, app_id, value) == 0:
        raise errorcodes.BUTTON_NOT_FOUND(value=value)


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)
