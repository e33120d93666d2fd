"""Variables as the client API sees them: a session reads its application's global variables, and
a logged-in session reads and sets its own user's variables, except those the owner made
read-only."""

from __future__ import annotations

from licensegate.domain.errors import Forbidden, NotFound
from licensegate.store import users as user_store
from licensegate.store import uservars as store
from licensegate.store.database import Database, Executor

MAX_NAME = 64
MAX_DATA = 500  # KeyAuth's limit for a user variable's value


def _user_gone() -> Forbidden:
    return Forbidden("This session's user no longer exists.", "user_not_found")


def _not_set(name: str) -> NotFound:
    return NotFound(f"You have no variable named '{name}'.", "variable_not_found")


async def get_own(db: Executor, app_id: int, user_id: int, name: str) -> str:
    """The value of the user's variable `name`."""
    # One lookup by user id (the session's), not by username: a rename cannot get in between.
    rows = await store.list_page(db, app_id, user_id=user_id, name=name, limit=1, offset=0)
    if not rows:
        raise _not_set(name)
    value: str = rows[0]["value"]
    return value


async def set_own(db: Database, app_id: int, user_id: int, name: str, value: str, now: int) -> None:
    """Create or replace the user's variable `name`; a read-only one is refused. One statement
    decides and writes, so the owner marking it read-only meanwhile cannot be overtaken."""
    if await store.set_unless_read_only(db, app_id, user_id, name, value, now):
        return
    if await user_store.find_by_id(db, app_id, user_id) is None:
        raise _user_gone()
    raise Forbidden(
        f"The variable '{name}' is read-only: only the application's owner can change it.",
        "variable_read_only",
    )
