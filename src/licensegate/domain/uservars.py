"""User variables: named values stored per end user. The owner sets, reads, edits and deletes
them (for one user or all); a logged-in client session reads and sets its own user's variables,
except those the owner made read-only.

The owner may overwrite a read-only variable; the flag only stops the client API from doing so.
"""

from __future__ import annotations

from dataclasses import dataclass

from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal
from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.store import users as users_store
from licensegate.store import uservars as store
from licensegate.store.database import Database, Executor
from licensegate.store.uservars import ListedVar as ListedVar  # the rows it lists

MAX_NAME = 64
MAX_DATA = 500  # KeyAuth's limit for a user variable's value
ALL_USERS = "all"


@dataclass(frozen=True, slots=True)
class UserVar:
    value: str
    read_only: bool


def _user_not_found(username: str) -> Refusal:
    return errorcodes.USER_NOT_FOUND(username=username)


def _variable_not_found(username: str, name: str) -> Refusal:
    return errorcodes.VARIABLE_NOT_FOUND(f"The user '{username}' has no variable named '{name}'.")


async def _require_user(db: Executor, app_id: int, username: str) -> int:
    row = await users_store.find(db, app_id, username)
    if row is None:
        raise _user_not_found(username)
    user_id: int = row["id"]
    return user_id


async def set_value(
    db: Executor, app_id: int, user: str, *, name: str, value: str, read_only: bool | None, now: int
) -> int:
    """Create or replace the variable for one user, or for every user when `user` is `all`.
    Returns how many users' variables were written."""
    everyone = user == ALL_USERS
    written = await store.upsert(
        db,
        app_id,
        None if everyone else user,
        name=name,
        value=value,
        read_only=read_only,
        now=now,
    )
    if written == 0:
        if everyone:
            raise errorcodes.NO_USERS()
        raise _user_not_found(user)
    return written


async def get(db: Executor, app_id: int, username: str, name: str) -> UserVar:
    row = await store.find_for_user(db, app_id, username, name)
    if row is None:
        raise _user_not_found(username)
    if row["value"] is None:
        raise _variable_not_found(username, name)
    return UserVar(value=row["value"], read_only=bool(row["read_only"]))


async def edit(
    db: Executor, app_id: int, username: str, name: str, *, value: str, read_only: bool | None, now: int
) -> None:
    """Change an existing variable; never creates one."""
    changed = await store.update(db, app_id, username, name, value=value, read_only=read_only, now=now)
    if changed == 0:
        await _require_user(db, app_id, username)
        raise _variable_not_found(username, name)


async def delete(db: Executor, app_id: int, username: str, name: str) -> None:
    if await store.delete(db, app_id, username, name) == 0:
        await _require_user(db, app_id, username)
        raise _variable_not_found(username, name)


async def delete_by_name(db: Executor, app_id: int, name: str) -> int:
    return await store.delete_by_name(db, app_id, name)


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)


async def list_page(
    db: Executor, app_id: int, *, username: str | None, name: str | None, limit: int, offset: int
) -> tuple[list[ListedVar], int]:
    """One page of variables, oldest first, and the total that match the filters."""
    user_id = None if username is None else await _require_user(db, app_id, username)
    rows = await store.list_page(db, app_id, user_id=user_id, name=name, limit=limit, offset=offset)
    return rows, await store.count(db, app_id, user_id=user_id, name=name)


# --- the client's own variables ----------------------------------------------------------------


def _user_gone() -> Refusal:
    return errorcodes.SESSION_USER_GONE()


def _not_set(name: str) -> Refusal:
    return errorcodes.VARIABLE_NOT_FOUND(f"You have no variable named '{name}'.")


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
    if await users_store.find_by_id(db, app_id, user_id) is None:
        raise _user_gone()
    raise errorcodes.VARIABLE_READ_ONLY(name=name)


async def browse(
    db: Executor,
    app_id: int,
    *,
    username: str | None,
    name: str | None,
    value_prefix: str | None,
    request: PageRequest,
) -> Page:
    """A keyset page of the application's user variables, newest first by default, searched by
    the user (a whole username), the variable's name and/or the start of its value; each filter
    is answered through an index. An unknown user matches nothing."""
    if request.sort != "created":
        raise errorcodes.INVALID_VIEW("User variables are listed in the order they were created.")
    user_id: int | None = None
    if username:
        row = await users_store.find(db, app_id, username)
        if row is None:
            return Page([], has_previous=False, has_next=False)
        user_id = row["id"]
    rows = await store.browse(
        db, app_id, user_id=user_id, name=name or None, value_prefix=value_prefix or None, request=request
    )
    return finish(rows, request)


async def count_named(db: Executor, app_id: int, name: str) -> int:
    """How many users have a variable of this name (what deleting it for everyone removes)."""
    return await store.count(db, app_id, user_id=None, name=name)
