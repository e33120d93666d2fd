"""The web loader's buttons: (text shown on the customer panel, value the program waits for),
one value per application. A button's value travels in a URL path to the program's local
listener, so it may not contain white space or characters that need escaping there."""

from __future__ import annotations

import re
from typing import Any

from licensegate.domain.errors import Conflict, Invalid, NotFound
from licensegate.store import loader as store
from licensegate.store.database import Executor

MAX_TEXT = 99
_VALUE = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@-]{1,99}")


async def list_all(db: Executor, app_id: int) -> list[dict[str, Any]]:
    return [{"text": row["text"], "value": row["value"]} for row in await store.list_all(db, app_id)]


async def add(db: Executor, app_id: int, *, value: str, text: str) -> None:
    if not _VALUE.fullmatch(value):
        raise Invalid(
            "A button's value is 1 to 99 characters without spaces, slashes, '?', '#' or '%'.",
            "invalid_button_value",
        )
    if len(text) > MAX_TEXT:
        raise Invalid(f"A button's text is at most {MAX_TEXT} characters.", "parameter_too_long")
    if not await store.insert(db, app_id, value=value, text=text):
        raise Conflict(f"A button with the value '{value}' exists already.", "button_exists")


async def delete(db: Executor, app_id: int, value: str) -> None:
    if await store.delete(db, app_id, value) == 0:
        raise NotFound(f"No button with the value '{value}' exists.", "button_not_found")


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)
