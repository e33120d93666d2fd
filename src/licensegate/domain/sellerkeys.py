"""Seller keys: the credential of the seller API. Each belongs to one application and carries a
set of permission areas; only a digest of the key is stored.

A key either is the application owner's or acts as one team account of that application (a
reseller or a manager); what a team member's key may do is the key's areas narrowed by the
account's role (see `domain.permissions`).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

from licensegate import ids
from licensegate.domain import errorcodes, events
from licensegate.domain import permissions as perms
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.permissions import SellerIdentity
from licensegate.ratelimit import RateLimiter
from licensegate.store import sellerkeys as store
from licensegate.store.database import Database, DatabaseUnavailable, Executor

KEY_FORMAT = re.compile(r"[0-9a-f]{32}")
TOUCH_INTERVAL = 60  # seconds between `last_used_at` writes for one key


async def issue_key(
    db: Executor,
    *,
    app_id: int,
    name: str,
    permissions: int | None,
    now: int,
    account_id: int | None = None,
) -> str:
    """A new key for the application, acting as the owner or (`account_id`) as a team account
    of this application. Returned once; only its digest is stored."""
    key = ids.seller_key()
    await store.insert(
        db,
        app_id=app_id,
        key_hash=ids.digest(key),
        prefix=key[:6],
        name=name,
        permissions=perms.ALL if permissions is None else permissions,
        now=now,
        account_id=account_id,
    )
    return key


WRONG_KEY_ERRORS = frozenset({"invalid_seller_key", "unknown_seller_key"})


@dataclass(frozen=True, slots=True)
class FailureLimit:
    """Wrong seller keys one address may present per window (`LICENSEGATE_SELLER_KEY_FAILURES`)."""

    limiter: RateLimiter
    failures: int
    window: int


async def authenticate_from(
    db: Executor, key: str | None, now: int, address: str, limit: FailureLimit, *, ip: str | None = None
) -> SellerIdentity:
    """`authenticate`, for a caller at `address` (its rate-limit bucket; `ip`: its address as
    the key's last use records it): one that presented too many wrong keys (malformed or unknown)
    in the window is refused (429 `rate_limited`) before its key is even looked at."""
    bucket = f"seller-key-failures:{address}"
    retry_after = await limit.limiter.peek(bucket, limit.failures, limit.window)
    if retry_after:
        raise RateLimited(retry_after, "Too many wrong seller keys from this address; try again later.")
    try:
        return await authenticate(db, key, now, ip)
    except Refusal as refusal:
        if refusal.error in WRONG_KEY_ERRORS:
            await limit.limiter.hit(bucket, limit.failures, limit.window)
        raise


async def authenticate(db: Executor, key: str | None, now: int, ip: str | None = None) -> SellerIdentity:
    """The identity a seller key opens; its last use (time and address, `ip`) is written at most
    once a minute."""
    if key is None or key.strip() == "":
        raise errorcodes.MISSING_SELLER_KEY()
    key = key.strip()
    if not KEY_FORMAT.fullmatch(key):
        raise errorcodes.INVALID_SELLER_KEY()
    row = await store.find_caller(db, ids.digest(key))
    if row is None:
        raise errorcodes.UNKNOWN_SELLER_KEY()
    if row["account_disabled"]:
        raise errorcodes.ACCOUNT_DISABLED()
    identity = perms.identity_of(
        row, granted=row["permissions"], key_id=row["key_id"], key_name=row["key_name"] or row["key_prefix"]
    )
    last_used = row["last_used_at"]
    if last_used is None or now - last_used >= TOUCH_INTERVAL:
        # Bookkeeping: a database that can be read but not written (a full disk) still serves reads.
        with contextlib.suppress(DatabaseUnavailable):
            await store.touch(db, row["key_id"], now, ip)
    return identity


async def create(db: Database, identity: SellerIdentity, *, name: str, permissions: int, now: int) -> str:
    """A new key of the caller's application, with at most the areas the caller holds."""
    perms.require_within(identity, permissions, "create a seller key with these areas")
    async with db.transaction() as tx:
        key = await issue_key(tx, app_id=identity.app_id, name=name, permissions=permissions, now=now)
        await events.record(
            tx, identity.app_id, "sellerkey.created", now, {"name": name, "permissions": permissions}
        )
    return key


async def list_keys(db: Executor, identity: SellerIdentity) -> list[dict[str, Any]]:
    return [
        {
            "id": str(row["id"]),
            "name": row["name"],
            "prefix": row["prefix"],
            "permissions": perms.names(row["permissions"]),
            "created_at": row["created_at"],
            "last_used_at": row["last_used_at"],
            "last_used_ip": row["last_used_ip"],
            "current": row["id"] == identity.key_id,
            # None: the owner's key; otherwise the reseller or manager it acts as.
            "account": row["account"],
            "role": row["account_role"] or "owner",
        }
        for row in await store.list_for_app(db, identity.app_id)
    ]


async def delete(db: Executor, identity: SellerIdentity, key_id: int) -> None:
    """Revoke a key; a key limited to some areas cannot revoke one that holds more."""
    if key_id == identity.key_id:
        raise errorcodes.CANNOT_DELETE_OWN_KEY()
    row = await store.find(db, identity.app_id, key_id)
    if row is None:
        raise errorcodes.SELLER_KEY_NOT_FOUND()
    areas: int = row["permissions"]
    if row["member_role"] is not None:
        areas &= perms.team_areas(row["member_role"], row["member_permissions"] or 0)
    perms.require_within(identity, areas, "revoke a seller key holding these areas")
    if await store.delete(db, identity.app_id, key_id) == 0:
        raise errorcodes.SELLER_KEY_NOT_FOUND()
