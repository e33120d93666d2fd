"""Entitlements: named features a seller sells (`export`, `pro-filters`, `seats:5` in metadata),
so a key no longer has to encode every combination of features in one numeric level.

An entitlement has a `code` unique in its application, a display name and optional JSON
metadata (an object, at most 16 KB). It is attached to subscriptions (every user holding a live
grant of one has it) and, as extras, to a single key (the user who redeemed it has it) or a
single user. A user's entitlements are the union of the three, computed when asked: nothing is
copied, so detaching, a grant expiring or a pause takes effect at the next login or listing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from licensegate.appcache import AppCache
from licensegate.domain import errorcodes
from licensegate.domain import licenses as license_rules
from licensegate.domain import subscriptions as subscription_rules
from licensegate.domain import users as user_rules
from licensegate.domain.permissions import Scope
from licensegate.invalidation import Invalidation
from licensegate.store import entitlements as store
from licensegate.store.database import Database, Executor
from licensegate.store.entitlements import EntitlementRow as EntitlementRow
from licensegate.store.entitlements import Owner as Owner

MAX_CODE = 64
MAX_NAME = 128
MAX_METADATA = 16 * 1024
# A call whose `metadata` parameter (twice MAX_METADATA: the JSON may shrink once normalised) is
# at its maximum length, even percent-escaped in full: above the default body limit.
MAX_CALL_BYTES = 128 * 1024
_CODE = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def check_code(code: str) -> str:
    if not _CODE.fullmatch(code):
        raise errorcodes.INVALID_ENTITLEMENT_CODE(param="code")
    return code


def check_metadata(text: str | None) -> str | None:
    """The metadata as stored (compact JSON of an object), or None for none (`{}` clears it)."""
    if text is None or text.strip() == "":
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise errorcodes.INVALID_METADATA(maximum=MAX_METADATA, param="metadata")
    if not value:
        return None
    stored = orjson.dumps(value).decode()
    if len(stored.encode()) > MAX_METADATA:
        raise errorcodes.INVALID_METADATA(maximum=MAX_METADATA, param="metadata")
    return stored


def metadata_of(row: EntitlementRow) -> dict[str, Any]:
    return {} if row["metadata"] is None else dict(orjson.loads(row["metadata"]))


async def get(db: Executor, app_id: int, code: str) -> EntitlementRow:
    row = await store.find(db, app_id, code)
    if row is None:
        raise errorcodes.ENTITLEMENT_NOT_FOUND(code=code)
    return row


async def create(
    db: Executor, app_id: int, *, code: str, name: str | None, metadata: str | None, now: int
) -> EntitlementRow:
    code = check_code(code)
    stored = check_metadata(metadata)
    if await store.insert(db, app_id, code=code, name=name or code, metadata=stored, now=now) is None:
        raise errorcodes.ENTITLEMENT_EXISTS(code=code)
    return await get(db, app_id, code)


async def edit(
    db: Database,
    app_id: int,
    code: str,
    *,
    new_code: str | None,
    name: str | None,
    metadata: str | None,
    now: int,
) -> tuple[EntitlementRow, EntitlementRow]:
    """Change the code, name and/or metadata (`{}` clears it); returns before and after."""
    async with db.transaction() as tx:
        before = await get(tx, app_id, code)
        after: EntitlementRow = {
            **before,
            "code": check_code(new_code) if new_code else before["code"],
            "name": name or before["name"],
            "metadata": before["metadata"] if metadata is None else check_metadata(metadata),
            "updated_at": now,
        }
        if after["code"] != code and await store.find(tx, app_id, after["code"]) is not None:
            raise errorcodes.ENTITLEMENT_EXISTS(code=after["code"])
        await store.update(
            tx, before["id"], code=after["code"], name=after["name"], metadata=after["metadata"], now=now
        )
    return before, after


async def delete(db: Executor, app_id: int, code: str) -> EntitlementRow:
    row = await get(db, app_id, code)
    await store.delete(db, row["id"])
    return row


async def list_all(db: Executor, app_id: int) -> list[EntitlementRow]:
    return await store.list_for_app(db, app_id)


@dataclass(frozen=True, slots=True)
class Target:
    """What an entitlement is attached to: a subscription, a key or a user, and how it is named."""

    owner: Owner
    owner_id: int
    label: str  # for the audit log: `subscription:pro`, `key:ABC-...`, `user:alice`


async def target(db: Executor, scope: Scope, *, sub: str | None, key: str | None, user: str | None) -> Target:
    """The one subscription, key or user named (exactly one must be)."""
    if sum(value is not None for value in (sub, key, user)) != 1:
        raise errorcodes.ENTITLEMENT_TARGET()
    if sub is not None:
        row = await subscription_rules.get(db, scope.app_id, sub)
        return Target("sub", row["id"], f"subscription:{sub}")
    if key is not None:
        key_row = await license_rules.get(db, scope, key)
        return Target("key", key_row["id"], f"key:{key}")
    assert user is not None
    found = await user_rules.find_named(db, scope.app_id, user, reseller_id=scope.reseller_id)
    if found is None:
        raise errorcodes.USER_NOT_FOUND(username=user)
    return Target("user", found["id"], f"user:{found['username']}")


async def attach(db: Executor, app_id: int, code: str, to: Target, now: int) -> bool:
    """False when it was attached already (nothing changes)."""
    row = await get(db, app_id, code)
    return await store.attach(db, to.owner, to.owner_id, row["id"], now)


async def detach(db: Executor, app_id: int, code: str, to: Target) -> bool:
    """False when it was not attached (nothing changes)."""
    row = await get(db, app_id, code)
    return await store.detach(db, to.owner, to.owner_id, row["id"])


async def attached_to(db: Executor, owner: Owner, owner_id: int) -> list[EntitlementRow]:
    return await store.attached_to(db, owner, owner_id)


async def of_user(db: Executor, user_id: int, now: int) -> list[EntitlementRow]:
    """The user's entitlements now: the union over their live subscriptions, their own extras and
    those of the keys they redeemed, by code."""
    return await store.of_user(db, user_id, now)


TOPIC = "entitlements"


def app_cache(invalidation: Invalidation) -> AppCache[bool]:
    """Whether each application has entitlements at all, per worker: a login of an application
    that has none (most) answers an empty list without a query. Creating or deleting an
    entitlement announces the change (`AppCache.changed`)."""
    return AppCache(invalidation, TOPIC, store.app_has_any)


async def usage(db: Executor, entitlement_id: int) -> dict[Owner, int]:
    return await store.counts(db, entitlement_id)
