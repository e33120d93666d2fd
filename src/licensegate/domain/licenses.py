"""License keys: generation, redemption, listing, bans, notes, time and deletion.

A key has a level and a duration. Redeeming it grants the user every subscription of that level,
each running for the key's duration from the moment of redemption; the grants remember the key
(`user_subscriptions.key_id`), so deleting the key can take back exactly what it gave.

The seller-side functions take the caller's `Scope`; a reseller's sees only the keys it generated:
another creator's key is "not found". Time a reseller gives out (new keys, added time) is paid
from its balance in the same transaction (domain.team).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from licensegate.domain import errorcodes, events, keygen, team, tokens
from licensegate.domain import users as users_domain
from licensegate.domain.paging import Page, PageRequest, Position, finish
from licensegate.domain.permissions import Scope
from licensegate.domain.subscriptions import get as get_subscription
from licensegate.secretbox import SecretBox
from licensegate.store import apps as app_store
from licensegate.store import licenses as store
from licensegate.store import overview as overview_store
from licensegate.store import sessions as session_store
from licensegate.store import subscriptions as subscription_store
from licensegate.store import users as user_store
from licensegate.store.database import Database, Executor, Row
from licensegate.store.licenses import SORTS as SORTS  # the dashboard's list is made of these
from licensegate.store.licenses import KeyQuery as KeyQuery
from licensegate.store.licenses import KeyRow as KeyRow  # the rows it returns
from licensegate.store.subscriptions import LevelSubscription

SECONDS_PER_DAY = 86400
MAX_AMOUNT = 100
MAX_DAYS = 100_000
GENERATE_ATTEMPTS = 5  # fresh random keys tried when one collides with an existing key
MAX_KEYS_PER_CALL = 100
STATUS_TEXT = {"unused": "Not Used", "used": "Used"}
FILTERS = ("unused", "used", "banned")

_SEPARATORS = re.compile(r"[,\s]+")


def status_text(row: Mapping[str, Any]) -> str:
    """KeyAuth's display status: a ban outranks whether the key was used."""
    if row["banned_reason"] is not None:
        return "Banned"
    return STATUS_TEXT[row["status"]]


def duration_seconds(days: float, what: str) -> int:
    seconds = round(days * SECONDS_PER_DAY)
    if days <= 0 or seconds < 1:
        raise errorcodes.NUMBER_OUT_OF_RANGE(f"Parameter '{what}' must be more than 0 days.", param=what)
    if days > MAX_DAYS:
        raise errorcodes.NUMBER_OUT_OF_RANGE(
            f"Parameter '{what}' must be at most {MAX_DAYS} days.", param=what
        )
    return seconds


async def get(db: Executor, scope: Scope, key: str) -> KeyRow:
    row = await store.find(db, scope.app_id, key, reseller_id=scope.reseller_id)
    if row is None:
        raise errorcodes.KEY_NOT_FOUND(key=key)
    return row


async def _require_level(db: Executor, app_id: int, level: str) -> None:
    if not await subscription_store.for_level(db, app_id, level):
        raise errorcodes.LEVEL_HAS_NO_SUBSCRIPTION(
            f"No subscription has level '{level}', so a key of that level could never be redeemed; "
            "create a subscription of that level first."
        )


# --- generation -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KeySpec:
    days: float
    mask: str = keygen.DEFAULT_MASK
    character: int = keygen.MIXED
    level: str = "1"
    amount: int = 1
    note: str | None = None
    generated_by: str = "SellerAPI"
    account_id: int | None = None


async def generate(db: Database, box: SecretBox, scope: Scope, spec: KeySpec, now: int) -> list[str]:
    """Create `amount` keys from the mask, all in one transaction (all or none). A reseller
    generates only its levels, is recorded as the keys' creator, and pays `amount` units of the
    bucket matching the duration in that same transaction."""
    duration = duration_seconds(spec.days, "expiry")
    app_id, reseller = scope.app_id, scope.reseller
    generated_by, account_id = spec.generated_by, spec.account_id
    bucket = ""
    if reseller is not None:
        team.check_level(reseller, spec.level)
        bucket = team.bucket_for(duration)
        generated_by, account_id = reseller.username, reseller.account_id
    mask = keygen.check_mask(spec.mask)
    keygen.alphabet(spec.character)
    if not 1 <= spec.amount <= MAX_AMOUNT:
        raise errorcodes.NUMBER_OUT_OF_RANGE(
            f"You can generate 1 to {MAX_AMOUNT} keys at a time.", param="amount"
        )
    custom = keygen.is_custom(mask)
    if custom and spec.amount > 1:
        raise errorcodes.CUSTOM_KEY_AMOUNT()
    created: list[str] = []
    async with db.transaction() as tx:
        if reseller is not None:
            await team.hold(tx, reseller)  # before the app lock: the order every reseller write uses
        await app_store.lock(tx, app_id)
        await _require_level(tx, app_id, spec.level)
        if reseller is not None:
            await team.spend(
                tx,
                reseller,
                bucket,
                spec.amount,
                reason=f"{team.plural(spec.amount, 'key')} generated (level {spec.level})",
                now=now,
            )
        for _ in range(spec.amount):
            for _attempt in range(1 if custom else GENERATE_ATTEMPTS):
                key = keygen.fill(mask, spec.character)
                key_id = await store.insert(
                    tx,
                    app_id=app_id,
                    key=key,
                    level=spec.level,
                    duration=duration,
                    note=spec.note,
                    generated_by=generated_by,
                    account_id=account_id,
                    now=now,
                )
                if key_id is not None:
                    created.append(key)
                    await tokens.issue(
                        tx, box, app_id=app_id, kind="license", assigned=key, license_key_id=key_id, now=now
                    )
                    await events.record(
                        tx,
                        app_id,
                        "key.created",
                        now,
                        {"key": events.key_ref(key, id=key_id, level=spec.level, duration=duration)},
                        license_key=key,
                    )
                    break
            else:
                if custom:
                    raise errorcodes.KEY_EXISTS(key=mask)
                raise errorcodes.KEY_SPACE_EXHAUSTED()
    return created


# --- redemption -------------------------------------------------------------------------------


class Redeemed(NamedTuple):
    """A key redeemed for a user: its level when it was, and the grants it gave (subscription
    name, its pause, the grant's expiry)."""

    level: str
    grants: list[tuple[str, int | None, int]]


async def redeem(tx: Executor, app_id: int, key_row: Mapping[str, Any], user_id: int, now: int) -> bool:
    """Mark the key used by this user and grant every subscription of its level.

    Run inside the caller's transaction. Returns False, changing nothing, when the key is no
    longer unused or has been banned (a concurrent redemption won). The level and duration used
    are the ones the key has at the moment it is marked used. Raises NotFound when no
    subscription has the key's level; let it propagate so the transaction rolls back.
    """
    user = await user_store.find_by_id(tx, app_id, user_id)
    if user is None:
        raise errorcodes.USER_NOT_FOUND("The user redeeming the key does not exist.")
    redeemed = await redeem_read_ahead(
        tx, app_id, key_row, user_id, user["username"], None, now, created_by=user["created_by"], report=True
    )
    if redeemed is None:
        return False
    await overview_store.bump(tx, app_id, now, "key")
    return True


async def redeem_read_ahead(
    tx: Executor,
    app_id: int,
    key_row: Mapping[str, Any],
    user_id: int,
    username: str,
    subs: list[LevelSubscription] | None,
    now: int,
    *,
    created_by: str,
    report: bool,
) -> Redeemed | None:
    """`redeem` for a caller that read ahead, before its transaction: `username` and
    `created_by` are the user's,
    `subs` the subscriptions of the key's level (`key_row["level"]`; read here when None or the
    level changed meanwhile). The caller counts the key for the overview. Returns None, changing
    nothing, when the key is no longer unused or has been banned. `report`: write the
    `key.redeemed` event (False: no endpoint wants it).
    """
    used = await store.mark_used(
        tx, app_id, key_row["id"], user_id=user_id, username=username, now=now, counted=False
    )
    if used is None:
        return None
    if subs is None or used["level"] != key_row["level"]:
        subs = await subscription_store.for_level(tx, app_id, used["level"])
    if not subs:
        raise errorcodes.LEVEL_HAS_NO_SUBSCRIPTION(level=used["level"])
    # While the subscription is paused its clock stands still: start the grant at the pause, so
    # unpausing (which adds the pause's length) leaves it the full duration.
    expiries = [(now if sub["paused_at"] is None else sub["paused_at"]) + used["duration"] for sub in subs]
    await store.insert_grants(
        tx,
        user_id=user_id,
        key_id=key_row["id"],
        grants=[(sub["id"], expires_at) for sub, expires_at in zip(subs, expiries, strict=True)],
        now=now,
    )
    if report:
        used_key = str(key_row["key"])
        key_data = events.key_ref(used_key, id=key_row["id"], level=used["level"])
        user_data = events.user_ref(user_id, username, created_by)
        await events.record(
            tx, app_id, "key.redeemed", now, {"key": key_data, "user": user_data}, license_key=used_key
        )
        for sub in subs:
            await events.granted_by_key(
                tx,
                app_id,
                now,
                extended=False,
                user=user_data,
                subscription=sub["name"],
                seconds=used["duration"],
                key=used_key,
                key_data=key_data,
            )
    grants = [
        (sub["name"], sub["paused_at"], expires_at) for sub, expires_at in zip(subs, expiries, strict=True)
    ]
    return Redeemed(used["level"], grants)


# --- reading ----------------------------------------------------------------------------------


async def export(
    db: Executor, scope: Scope, which: str | None, limit: int | None, offset: int
) -> tuple[list[KeyRow], int]:
    """Keys a filter selects (all when None), oldest first, and how many match in total."""
    which = which or "all"
    rows = await store.list_keys(db, scope.app_id, which, limit, offset, reseller_id=scope.reseller_id)
    return rows, await store.count(db, scope.app_id, which, reseller_id=scope.reseller_id)


async def used_keys(db: Executor, scope: Scope, limit: int, offset: int) -> tuple[list[KeyRow], int]:
    """Every redeemed key (banned ones too), the latest redemption first."""
    rows = await store.list_redeemed(db, scope.app_id, limit, offset, reseller_id=scope.reseller_id)
    return rows, await store.count(db, scope.app_id, "redeemed", reseller_id=scope.reseller_id)


class KeyInfo(NamedTuple):
    """One key and the HWIDs of the user who redeemed it (none while unused)."""

    key: KeyRow
    hwids: list[str]


async def info(db: Executor, scope: Scope, key: str) -> KeyInfo:
    row = await get(db, scope, key)
    user_id = row["used_by_user_id"]
    return KeyInfo(row, await user_store.hwids(db, user_id) if user_id is not None else [])


# --- changes ----------------------------------------------------------------------------------


def split_keys(text: str) -> list[str]:
    """Keys separated by commas and/or white space, each once, in the order given."""
    keys = list(dict.fromkeys(part for part in _SEPARATORS.split(text) if part))
    if not keys:
        raise errorcodes.MISSING_PARAMETER("Parameter 'key' names no license key.", param="key")
    if len(keys) > MAX_KEYS_PER_CALL:
        raise errorcodes.TOO_MANY_KEYS(maximum=MAX_KEYS_PER_CALL)
    return keys


async def _redeemer(tx: Executor, scope: Scope, row: KeyRow) -> int | None:
    """The user who redeemed the key, if the caller may act on that user: anyone for the owner
    and managers, only its own users for a reseller."""
    user_id: int | None = row["used_by_user_id"]
    if user_id is None or scope.reseller is None:
        return user_id
    mine = await user_store.find_by_id(tx, scope.app_id, user_id, reseller_id=scope.reseller.account_id)
    return None if mine is None else user_id


async def _delete_rows(tx: Executor, scope: Scope, rows: list[KeyRow], user_too: bool, now: int) -> int:
    """Delete the keys, the grants they made and, with `user_too`, the users who redeemed them
    (a reseller's own users only)."""
    key_ids = [row["id"] for row in rows]
    await store.delete_grants_of(tx, key_ids)
    if not user_too:  # their redeemers left with no time are ended by the next sweep
        await session_store.check_time_of(
            tx, [uid for row in rows if (uid := row["used_by_user_id"]) is not None]
        )
    else:
        redeemers = {await _redeemer(tx, scope, row) for row in rows} - {None}
        # Ascending ids: concurrent deletions lock users in the same order.
        for user_id in sorted(uid for uid in redeemers if uid is not None):
            await users_domain.delete(tx, scope.app_id, user_id, now)
    for row in rows:
        await events.about_key(tx, scope.app_id, "key.deleted", now, row)
    return await store.delete_ids(tx, key_ids)


async def delete(db: Database, scope: Scope, key: str, *, user_too: bool, now: int) -> None:
    async with db.transaction() as tx:
        row = await get(tx, scope, key)
        await _delete_rows(tx, scope, [row], user_too, now)


async def delete_many(db: Database, scope: Scope, keys: list[str], *, user_too: bool, now: int) -> int:
    """All or nothing: when any key is unknown nothing is deleted."""
    async with db.transaction() as tx:
        rows = await store.find_many(tx, scope.app_id, keys, reseller_id=scope.reseller_id)
        found = {row["key"] for row in rows}
        missing = [key for key in keys if key not in found]
        if missing:
            shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
            raise errorcodes.KEY_NOT_FOUND(f"No license key found for: {shown}. Nothing was deleted.")
        return await _delete_rows(tx, scope, rows, user_too, now)


async def delete_matching(db: Database, scope: Scope, which: str, now: int) -> int:
    """Bulk delete (`unused`, `used` or `all`). The users keep the time the keys gave them."""
    report = await events.keys_deleted(db, scope.app_id, which, now)
    return await store.delete_matching(db, scope.app_id, which, reseller_id=scope.reseller_id, report=report)


async def delete_for_subscription(
    db: Database, scope: Scope, sub_name: str, *, unused_only: bool, now: int
) -> int:
    """Delete the keys whose level is this subscription's level, in batches (not one transaction:
    a long delete must not hold the database). Users keep what they were granted."""
    sub = await get_subscription(db, scope.app_id, sub_name)
    report = await events.keys_deleted(db, scope.app_id, "subscription", now, subscription=sub_name)
    which = "unused" if unused_only else "all"
    return await store.delete_level(
        db, scope.app_id, sub["level"], which, reseller_id=scope.reseller_id, report=report
    )


async def add_time(db: Database, scope: Scope, days: float, key: str | None, *, now: int) -> int:
    """Without a key, lengthen every unused key. With a key: an unused key gets a longer
    duration; a used key's grants expire later. Returns how many keys or grants changed.

    A reseller pays one unit of the bucket matching the added time per key it lengthens."""
    reseller = scope.reseller
    seconds = duration_seconds(days, "time")
    bucket = "" if reseller is None else team.bucket_for(seconds)
    if key is None:
        if reseller is None:
            return await store.add_time_to_unused(db, scope.app_id, seconds)
        async with db.transaction() as tx:
            await team.hold(tx, reseller)
            updated = await store.add_time_to_unused(
                tx, scope.app_id, seconds, reseller_id=reseller.account_id
            )
            await team.spend(
                tx,
                reseller,
                bucket,
                updated,
                reason=f"time added to {team.plural(updated, 'unused key')}",
                now=now,
            )
            return updated
    async with db.transaction() as tx:
        if reseller is not None:
            await team.hold(tx, reseller)
        row = await get(tx, scope, key)
        # Conditional, so a redemption that lands first is seen and its grants extended instead.
        if row["status"] == "unused" and await store.add_time_if_unused(tx, row["id"], seconds):
            changed = 1
        else:
            changed = await store.extend_grants_of(tx, row["id"], seconds)
        if reseller is not None and changed:
            await team.spend(tx, reseller, bucket, 1, reason=f"time added to the key {key}", now=now)
        return changed


async def set_note(db: Executor, scope: Scope, key: str, note: str) -> None:
    if not await store.set_note(db, scope.app_id, key, note, reseller_id=scope.reseller_id):
        raise errorcodes.KEY_NOT_FOUND(key=key)


async def set_duration(db: Database, scope: Scope, key: str, days: float) -> int:
    """Give an unused key another duration (seconds returned). A used key's grants already run
    (add time instead); a reseller cannot, as its balance paid for the duration the key has."""
    seconds = duration_seconds(days, "expiry")
    if scope.reseller is not None:
        raise errorcodes.DURATION_PAID()
    async with db.transaction() as tx:
        row = await get(tx, scope, key)
        if not await store.set_duration_if_unused(tx, row["id"], seconds):
            raise errorcodes.KEY_USED_DURATION(key=key)
    return seconds


async def existing(db: Executor, app_id: int, keys: list[str]) -> set[str]:
    """Which of these keys the application already has, whoever generated them (a new key must
    differ from every one of them)."""
    return await store.existing_keys(db, app_id, keys)


async def change_level(
    db: Database,
    scope: Scope,
    key: str,
    *,
    sub_name: str | None,
    level: str | None,
) -> str:
    """Give an unused key another level (a subscription's, or a level directly); the new level."""
    if (sub_name is None) == (level is None):
        raise errorcodes.SUB_OR_LEVEL()
    async with db.transaction() as tx:
        row = await get(tx, scope, key)
        if sub_name is not None:
            new_level: str = (await get_subscription(tx, scope.app_id, sub_name))["level"]
        else:
            assert level is not None
            new_level = level
            await _require_level(tx, scope.app_id, new_level)
        if scope.reseller is not None:
            team.check_level(scope.reseller, new_level)
        if not await store.set_level_if_unused(tx, row["id"], new_level):
            raise errorcodes.KEY_ALREADY_USED(key=key)
    return new_level


async def ban(
    db: Database,
    scope: Scope,
    key: str,
    reason: str,
    *,
    user_too: bool,
    now: int,
    blacklist_as: str | None,
) -> None:
    """Ban the key (a new reason replaces an old one) and end the sessions logged in with it; with
    `user_too` also ban the user who redeemed it (for a reseller, only its own user), which ends
    all their sessions and, with `blacklist_as`, blacklists their HWIDs and IP."""
    async with db.transaction() as tx:
        row = await get(tx, scope, key)
        await store.set_ban(tx, row["id"], reason)
        await events.about_key(tx, scope.app_id, "key.banned", now, row, reason=reason)
        if row["used_by_user_id"] is not None:
            ended = await session_store.end_for_credential(
                tx,
                row["used_by_user_id"],
                row["key"],
                why=session_store.Ended(session_store.KEY_BANNED, reason),
            )
            await events.sessions_ended_by(tx, scope.app_id, now, ended, "key_banned", key=events.key_of(row))
        user_id = await _redeemer(tx, scope, row) if user_too else None
        if user_id is not None:
            await users_domain.ban(tx, scope.app_id, user_id, reason, now, blacklist_as=blacklist_as)


async def unban(db: Database, scope: Scope, key: str, *, lift_blacklist: bool, now: int) -> None:
    """Lift the key's ban and, when it was redeemed, the ban of the user who redeemed it (for a
    reseller, only its own user; see `users.unban` for `lift_blacklist`)."""
    async with db.transaction() as tx:
        row = await get(tx, scope, key)
        if row["banned_reason"] is None:
            raise errorcodes.KEY_NOT_BANNED(key=key)
        await store.set_ban(tx, row["id"], None)
        await events.about_key(tx, scope.app_id, "key.unbanned", now, row)
        user_id = await _redeemer(tx, scope, row)
        if user_id is not None:
            await users_domain.unban(tx, scope.app_id, user_id, lift_blacklist=lift_blacklist, now=now)


# --- browsing (the dashboard's list) ------------------------------------------------------------

COUNT_CAP = 10_000  # a list counts this far; beyond, it says "more than"


def _scoped(query: KeyQuery, scope: Scope) -> KeyQuery:
    """A reseller sees only the keys it generated, whatever the query asks."""
    return replace(query, reseller_id=scope.reseller_id)


async def browse(db: Executor, scope: Scope, query: KeyQuery, request: PageRequest) -> Page:
    if request.sort not in store.SORTS:
        raise errorcodes.INVALID_VIEW(f"Keys can be sorted by {', '.join(store.SORTS)}.")
    rows, matched = await store.browse(db, scope.app_id, _scoped(query, scope), request)
    page = finish(rows, request)
    return page if matched is None else replace(page, total=matched)


async def count_matching(db: Executor, scope: Scope, query: KeyQuery, *, cap: int = COUNT_CAP) -> int:
    return await store.count_matching(db, scope.app_id, _scoped(query, scope), cap)


async def keys_matching(db: Executor, scope: Scope, query: KeyQuery, limit: int) -> list[str]:
    return await store.keys_matching(db, scope.app_id, _scoped(query, scope), limit)


def position_after(row: Row) -> Position:
    """Where the page after this row starts, in creation order."""
    return Position(row["id"], row["id"])


async def key_of_user(db: Executor, scope: Scope, username: str) -> str:
    """The key a user redeemed first (for a reseller, among the keys it generated)."""
    key = await store.key_of_user(db, scope.app_id, username, reseller_id=scope.reseller_id)
    if key is None:
        raise errorcodes.KEY_NOT_FOUND("License not found")
    return key


# --- one key, and a user's keys (the dashboard's detail pages) --------------------------------


async def by_id(db: Executor, scope: Scope, key_id: int) -> dict[str, Any]:
    """One key with its latest expiry (a reseller: only a key it generated)."""
    row = await store.find_by_id(db, scope.app_id, key_id, reseller_id=scope.reseller_id)
    if row is None:
        raise errorcodes.KEY_NOT_FOUND("This key does not exist, or is not yours.")
    return dict(row)


async def of_user(db: Executor, scope: Scope, user_id: int) -> list[dict[str, Any]]:
    """The keys a user redeemed (a reseller: those it generated)."""
    return [
        dict(row) for row in await store.of_user(db, scope.app_id, user_id, reseller_id=scope.reseller_id)
    ]
