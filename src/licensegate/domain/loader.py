"""The web loader's buttons: (text shown on the customer panel, value the program waits for),
one value per application, in an order the seller chooses. A button's value travels in a URL to
the program's local listener, so it may not contain white space or characters that need
escaping there."""

from __future__ import annotations

import re

from licensegate.domain import errorcodes
from licensegate.store import loader as store
from licensegate.store.database import Database, Executor, UniqueViolation
from licensegate.store.loader import ButtonRow

MAX_TEXT = 99
MAX_BUTTONS = 100  # per application: a panel of more buttons than this helps nobody
_VALUE = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=:@-]{1,99}")


async def list_all(db: Executor, app_id: int) -> list[ButtonRow]:
    """The buttons in the customer panel's order."""
    return await store.list_all(db, app_id)


def _check(value: str, text: str) -> None:
    if not _VALUE.fullmatch(value):
        raise errorcodes.INVALID_BUTTON_VALUE()
    if len(text) > MAX_TEXT:
        raise errorcodes.PARAMETER_TOO_LONG(name="text", max_length=MAX_TEXT, param="text")


async def add(db: Executor, app_id: int, *, value: str, text: str) -> None:
    _check(value, text)
    if await store.count(db, app_id) >= MAX_BUTTONS:
        raise errorcodes.TOO_MANY_BUTTONS(maximum=MAX_BUTTONS)
    if not await store.insert(db, app_id, value=value, text=text):
        raise errorcodes.BUTTON_EXISTS(value=value)


async def edit(db: Executor, app_id: int, value: str, *, new_value: str, text: str) -> None:
    """Change the text and/or the value of a button; it keeps its place."""
    _check(new_value, text)
    try:
        changed = await store.update(db, app_id, value, new_value=new_value, text=text)
    except UniqueViolation:
        raise errorcodes.BUTTON_EXISTS(value=new_value, param="newvalue") from None
    if changed == 0:
        raise errorcodes.BUTTON_NOT_FOUND(value=value)


async def move(db: Database, app_id: int, value: str, position: int) -> int:
    """Put the button at `position` (1 = first; past the end = last); the others keep their
    order. Returns the position it has now."""
    async with db.transaction() as tx:
        order = await store.values_in_order(tx, app_id)
        if value not in order:
            raise errorcodes.BUTTON_NOT_FOUND(value=value)
        order.remove(value)
        index = min(max(position, 1), len(order) + 1) - 1
        order.insert(index, value)
        for number, each in enumerate(order, start=1):
            await store.set_position(tx, app_id, each, number)
    return index + 1


async def delete(db: Executor, app_id: int, value: str) -> None:
    if await store.delete(db, app_id, value) == 0:
        raise errorcodes.BUTTON_NOT_FOUND(value=value)


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)
