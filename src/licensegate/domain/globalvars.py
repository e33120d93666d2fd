"""Global variables: named values of an application that its clients can read; `authed` ones only
from a logged-in session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate.domain import errorcodes
from licensegate.domain.errors import Refusal
from licensegate.store import globalvars as store
from licensegate.store.database import Executor
from licensegate.store.globalvars import GlobalVarRow as GlobalVarRow  # the rows it lists


@dataclass(frozen=True, slots=True)
class GlobalVar:
    name: str
    value: str
    authed: bool


def _not_found(name: str) -> Refusal:
    return errorcodes.VARIABLE_NOT_FOUND(name=name)


async def create(db: Executor, app_id: int, *, name: str, value: str, authed: bool, now: int) -> None:
    if await store.insert(db, app_id, name=name, value=value, authed=authed, now=now) is None:
        raise errorcodes.VARIABLE_EXISTS(name=name)


async def edit(db: Executor, app_id: int, name: str, *, value: str, authed: bool | None, now: int) -> None:
    if await store.update(db, app_id, name, value=value, authed=authed, now=now) == 0:
        raise _not_found(name)


async def get(db: Executor, app_id: int, name: str) -> GlobalVar:
    row = await store.find(db, app_id, name)
    if row is None:
        raise _not_found(name)
    return GlobalVar(name=row["name"], value=row["value"], authed=bool(row["authed"]))


async def list_all(db: Executor, app_id: int) -> list[GlobalVarRow]:
    """Every variable in creation order."""
    return await store.list_for_app(db, app_id)


async def list_with_flags(db: Executor, app_id: int) -> list[dict[str, Any]]:
    """Every variable in creation order with its `authed` flag and times (the dashboard's list)."""
    return [
        {
            "name": row["name"],
            "value": str(row["value"]),
            "authed": bool(row["authed"]),
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
        }
        for row in await store.list_for_app(db, app_id)
    ]


async def delete(db: Executor, app_id: int, name: str) -> None:
    if await store.delete(db, app_id, name) == 0:
        raise _not_found(name)


async def delete_all(db: Executor, app_id: int) -> int:
    return await store.delete_all(db, app_id)
