"""Seller keys: the credential of the seller API. Each belongs to one application and carries a
set of permission areas; only a digest of the key is stored."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from licensegate import ids
from licensegate.domain import permissions as perms
from licensegate.domain.errors import Conflict, Forbidden, NotFound, Unauthorized
from licensegate.store import seller_keys as store
from licensegate.store.database import Executor

KEY_FORMAT = re.compile(r"[0-9a-f]{32}")
TOUCH_INTERVAL = 60  # seconds between `last_used_at` writes for one key


@dataclass(frozen=True, slots=True)
class SellerIdentity:
    key_id: int
    app_id: int
    app_name: str
    ownerid: str
    owner: str
    account_id: int
    permissions: int
    seller_log: bool


async def issue_key(db: Executor, *, app_id: int, name: str, permissions: int | None, now: int) -> str:
    key = ids.seller_key()
    await store.insert(
        db,
        app_id=app_id,
        key_hash=ids.digest(key),
        prefix=key[:6],
        name=name,
        permissions=perms.ALL if permissions is None else permissions,
        now=now,
    )
    return key


async def authenticate(db: Executor, key: str | None, now: int) -> SellerIdentity:
    if key is None or key.strip() == "":
        raise Unauthorized("No seller key specified.", "missing_seller_key")
    key = key.strip()
    if not KEY_FORMAT.fullmatch(key):
        raise Unauthorized(
            "Invalid seller key: a seller key is 32 lowercase hex characters.", "invalid_seller_key"
        )
    row = await store.find_caller(db, ids.digest(key))
    if row is None:
        raise Unauthorized("No application with this seller key was found.", "unknown_seller_key")
    if row["account_disabled"]:
        raise Forbidden("The account owning this application is disabled.", "account_disabled")
    last_used = row["last_used_at"]
    if last_used is None or now - last_used >= TOUCH_INTERVAL:
        await store.touch(db, row["key_id"], now)
    return SellerIdentity(
        key_id=row["key_id"],
        app_id=row["app_id"],
        app_name=row["app_name"],
        ownerid=row["ownerid"],
        owner=row["owner"],
        account_id=row["account_id"],
        permissions=row["permissions"],
        seller_log=bool(row["seller_log"]),
    )


def require(identity: SellerIdentity, area: str, operation: str) -> None:
    if not perms.allows(identity.permissions, area):
        raise Forbidden(
            f"This seller key may not use '{operation}': it lacks the '{area}' permission.",
            "permission_denied",
        )


async def create(db: Executor, identity: SellerIdentity, *, name: str, permissions: int, now: int) -> str:
    return await issue_key(db, app_id=identity.app_id, name=name, permissions=permissions, now=now)


async def list_keys(db: Executor, identity: SellerIdentity) -> list[dict[str, Any]]:
    return [
        {
            "id": str(row["id"]),
            "name": row["name"],
            "prefix": row["prefix"],
            "permissions": perms.names(row["permissions"]),
            "created_at": row["created_at"],
            "last_used_at": row["last_used_at"],
            "current": row["id"] == identity.key_id,
        }
        for row in await store.list_for_app(db, identity.app_id)
    ]


async def delete(db: Executor, identity: SellerIdentity, key_id: int) -> None:
    if key_id == identity.key_id:
        raise Conflict("A seller key cannot delete itself; use another key.", "cannot_delete_own_key")
    if await store.delete(db, identity.app_id, key_id) == 0:
        raise NotFound("No seller key with this id exists for this application.", "seller_key_not_found")
