"""Variables as the client API sees them: a session reads its application's global variables, and
a logged-in session reads and sets its own user's variables, except those the owner made
read-only."""

from __future__ import annotations

from licensegate.domain.errors import Forbidden, NotFound
from licensegate.store import user_vars as store
from licensegate.store import users as user_store
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
    """Create or replace the user's variable `name`; a read-only one is refused."""
    async with db.transaction() as tx:
        user = await user_store.find_by_id(tx, app_id, user_id)
        if user is None:
            raise _user_gone()
        username: str = user["username"]
        existing = await store.find_for_user(tx, app_id, username, name)
        if existing is not None and existing["read_only"]:
            raise Forbidden(
                f"The variable '{name}' is read-only: only the application's owner can change it.",
                "variable_read_only",
            )
        if await store.upsert(tx, app_id, username, name=name, value=value, read_only=None, now=now) == 0:
            raise _user_gone()
