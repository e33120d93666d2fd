"""End users of an application: accounts, HWIDs, bans and their subscriptions, as the owner
manages them and as a logged-in user changes their own account from the client (rename, ban).

The seller-side functions take the caller's `Scope`; a reseller's covers only the users it
owns (it created them): any other user is "not found", and bulk operations (`all`) act on its
own users only. Time a reseller gives (new users, extensions) is paid from its balance in the
same transaction (domain.team).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from licensegate.domain import errorcodes, events, passwordcheck, subscriptions, team, tokens
from licensegate.domain.apps import ClientApp
from licensegate.domain.messages import Messages
from licensegate.domain.paging import Page, PageRequest, Position, finish
from licensegate.domain.permissions import Scope
from licensegate.passwords import Passwords
from licensegate.secretbox import SecretBox
from licensegate.store import apps as app_store
from licensegate.store import blacklists as blacklist_store
from licensegate.store import grants as grant_store
from licensegate.store import logins as login_store
from licensegate.store import panel as panel_store
from licensegate.store import sessions as session_store
from licensegate.store import users as store
from licensegate.store.database import Database, Executor, Row
from licensegate.store.grants import ActiveGrant
from licensegate.store.users import SORTS as SORTS  # the dashboard's list is made of these
from licensegate.store.users import UserDetails as UserDetails  # the rows it returns
from licensegate.store.users import UserQuery as UserQuery
from licensegate.store.users import UserRef


async def ban(
    db: Executor,
    app_id: int,
    user_id: int,
    reason: str,
    now: int,
    *,
    blacklist_as: str | None,
    blacklist_ip: bool = True,
) -> None:
    """Ban the user and end their sessions. With `blacklist_as` (who bans, for the blacklist's
    record) also blacklist their HWIDs and last IP, so a new account from the same machine is
    refused too (KeyAuth's rule); entries that list a value already stay as they are. Callers
    that may not manage the blacklists (a reseller, a manager without the area) pass None: a
    reseller could otherwise blacklist any HWID it gives its own user. Without `blacklist_ip`
    the last IP stays off the blacklist (a shared address: a café, a school, a carrier's NAT).
    Run inside a transaction."""
    await store.set_ban(db, user_id, reason)
    ended = await session_store.end_for_user(
        db, user_id, why=session_store.Ended(session_store.BANNED, reason)
    )
    row = await store.find_by_id(db, app_id, user_id)
    who = event_user(row, user_id)
    await events.record(db, app_id, "user.banned", now, {"user": who, "reason": reason})
    await events.sessions_ended_by(db, app_id, now, ended, "user_banned", user=who)
    if blacklist_as is None:
        return
    entries = [(HWID, hwid) for hwid in await store.hwids(db, user_id)]
    if row is not None and row["last_ip"] and blacklist_ip:
        entries.append((IP, row["last_ip"]))
    for kind, value in entries:
        await blacklist_store.add(
            db, app_id, kind, value, reason, now, added_by=blacklist_as, banned_user_id=user_id
        )


async def unban(db: Executor, app_id: int, user_id: int, *, lift_blacklist: bool, now: int) -> None:
    """Lift the ban and, with `lift_blacklist`, what this user's bans added to the blacklist (never
    an entry added directly or by another ban). `user.unbanned` only when a ban was lifted (a key
    unbanned whose user was not banned reports no user). Run inside a transaction."""
    if await store.lift_ban(db, user_id):
        row = await store.find_by_id(db, app_id, user_id)
        await events.record(db, app_id, "user.unbanned", now, {"user": event_user(row, user_id)})
    if lift_blacklist:
        await blacklist_store.remove_added_by_ban(db, app_id, user_id)


async def delete(db: Executor, app_id: int, user_id: int, now: int) -> None:
    """Run inside a transaction (the event is written with the deletion)."""
    row = await store.find_by_id(db, app_id, user_id)
    await events.record(db, app_id, "user.deleted", now, {"user": event_user(row, user_id)})
    await store.delete(db, user_id)


def event_user(row: UserRef | None, user_id: int) -> dict[str, Any]:
    """The user `user_id` (its row as `store.users.find_by_id` reads it: None when it is gone) as
    events show it."""
    return events.user_ref(user_id, None, None) if row is None else _who(row)


def _who(user: UserRef) -> dict[str, Any]:
    """The user as events show it."""
    return events.user_ref(user["id"], user["username"], user["created_by"])


# --- the seller's view of users ----------------------------------------------------------------

# `all` addresses every user in bulk operations (extend, subtract, setvar), so no user may be named so.
ALL_USERS = frozenset({"all", "ALL"})
DEFAULT_BAN_REASON = "Banned by the application owner"
CLIENT_PROGRAM = "client program"  # who a ban the program asked for blacklists as
HWID, IP = "hwid", "ip"  # blacklist kinds a ban adds
SELF_BAN_REASON = "Banned by the client program"
MAX_USERNAME = 64
SECONDS_PER_DAY = 86400


# Characters that show nothing of their own yet make a name differ: control, format (zero-width
# characters, bidi controls), surrogate, private-use and unassigned code points, line and
# paragraph separators, and invisible letters and selectors of other categories.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_INVISIBLE = frozenset(
    {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0}
    | set(range(0x180B, 0x1810))
    | set(range(0xFE00, 0xFE10))
    | set(range(0xE0100, 0xE01F0))
)
# Scripts whose letters look alike: one name may use letters of only one of them.
_LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")


def normalise_username(name: str) -> str:
    """The name in NFKC (fullwidth and other compatibility forms become their plain letters),
    refused when it holds an invisible or bidi control character or mixes Latin, Cyrillic and
    Greek letters (`аdmin` with a Cyrillic а)."""
    normalised = unicodedata.normalize("NFKC", name)
    for ch in name + normalised:  # as sent (the refusal names it) and as it would be stored
        if ord(ch) < 32 or ord(ch) == 127:
            raise errorcodes.INVALID_USERNAME()
        if unicodedata.category(ch) in _INVISIBLE_CATEGORIES or ord(ch) in _INVISIBLE:
            raise errorcodes.USERNAME_INVISIBLE_CHARACTER(codepoint=f"U+{ord(ch):04X}")
    scripts: set[str] = set()
    for ch in normalised:
        if ch.isalpha():
            script = unicodedata.name(ch, "").partition(" ")[0]
            if script in _LOOKALIKE_SCRIPTS:
                scripts.add(script)
    if len(scripts) > 1:
        raise errorcodes.USERNAME_MIXED_SCRIPTS(scripts=" and ".join(sorted(scripts)).title())
    return normalised


def fold(name: str) -> str:
    """The name as case-insensitive applications compare it (NFKC, case-folded, NFKC again)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def lookup_key(name: str, *, case_insensitive: bool) -> str:
    """What a name given at login is looked up by (`users.username_key`)."""
    return fold(name) if case_insensitive else unicodedata.normalize("NFKC", name)


async def find_named(
    db: Executor, app_id: int, name: str, *, reseller_id: int | None = None
) -> UserRef | None:
    """The user `name` names: the one of exactly that name, else the one a client login would find
    by it (its NFKC form, case-folded where the application compares names case-insensitively).
    The exact name first, so a name as the seller lists it always names that user, even one
    stored before names were normalised beside a newer user of its NFKC form."""
    return await store.find_named(
        db, app_id, name, fold(name), unicodedata.normalize("NFKC", name), reseller_id=reseller_id
    )


async def stored_name(db: Executor, scope: Scope, name: str) -> str:
    """The name, as stored, of the user in the caller's scope that `name` names (`find_named`);
    else `name` itself, so that a refusal reads as it would have (and a reseller learns nothing of
    another's users). `all` (every user, to the bulk operations) stays `all`."""
    if name in ALL_USERS:
        return name
    found = await find_named(db, scope.app_id, name, reseller_id=scope.reseller_id)
    return name if found is None else found["username"]


def check_username(name: str) -> str:
    """The name to store (normalised), or a refusal."""
    if name in ALL_USERS:
        raise errorcodes.USERNAME_NOT_ALLOWED(name=name)
    return normalise_username(name)


def check_new_username(app: ClientApp, username: str, msg: Messages) -> str:
    """The name a client asked for, normalised and checked against the application's rules."""
    username = check_username(username)
    if len(username) < app.min_username_length:
        raise errorcodes.USERNAME_TOO_SHORT(msg("unTooShort"))
    if len(username) > MAX_USERNAME:
        raise errorcodes.USERNAME_TOO_LONG(maximum=MAX_USERNAME)
    return username


def check_email(email: str) -> str:
    local, at, domain = email.partition("@")
    if (
        not at
        or not local
        or not domain
        or "@" in domain
        or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in email)
    ):
        raise errorcodes.INVALID_EMAIL(email=email[:64])
    return email


def days_to_seconds(days: float) -> int:
    seconds = round(days * SECONDS_PER_DAY)
    if days <= 0 or seconds < 1:
        raise errorcodes.INVALID_EXPIRY()
    return seconds


def _clock_base(sub: Row, now: int) -> int:
    """Where a new grant's time starts. While its subscription is paused, time stands still at
    the pause, so the grant keeps its full length until the subscription is unpaused."""
    paused_at: int | None = sub["paused_at"]
    return now if paused_at is None else paused_at


async def get(db: Executor, scope: Scope, username: str) -> UserRef:
    row = await store.find(db, scope.app_id, username, reseller_id=scope.reseller_id)
    if row is None:
        raise errorcodes.USER_NOT_FOUND(username=username)
    return row


async def create(
    db: Database,
    passwords: Passwords,
    box: SecretBox,
    scope: Scope,
    *,
    username: str,
    sub_name: str,
    days: float,
    password: str | None,
    email: str | None,
    hwid_lock: bool,
    now: int,
) -> int:
    """Create a user holding one grant of `sub_name` for `days`. Returns its expiry.

    With no password, the user's first login sets it. A reseller's user belongs to it; the
    reseller needs the subscription's level among its own and pays one unit of the bucket
    matching the duration."""
    reseller = scope.reseller
    username = check_username(username)
    if email is not None:
        check_email(email)
    seconds = days_to_seconds(days)
    bucket = "" if reseller is None else team.bucket_for(seconds)
    # Hashing is slow on purpose: do it before the transaction opens.
    password_hash = await passwords.hash(password, queue=scope.app_id) if password is not None else None
    created_by = "SellerAPI" if reseller is None else reseller.username
    async with db.transaction() as tx:
        sub = await _subscription_for(tx, scope, sub_name)
        await app_store.lock(tx, scope.app_id)
        user_id = await store.insert(
            tx,
            app_id=scope.app_id,
            username=username,
            username_fold=fold(username),
            password_hash=password_hash,
            email=email,
            hwid_lock=hwid_lock,
            created_by=created_by,
            owner_account_id=scope.reseller_id,
            now=now,
        )
        if user_id is None:
            raise errorcodes.USER_EXISTS(username=username)
        await tokens.issue(
            tx, box, app_id=scope.app_id, kind="user", assigned=username, user_id=user_id, now=now
        )
        if reseller is not None:
            await team.spend(tx, reseller, bucket, 1, reason=f"user {username} created", now=now)
        expires_at = _clock_base(sub, now) + seconds
        await grant_store.insert(tx, user_id=user_id, sub_id=sub["id"], expires_at=expires_at, now=now)
        await events.record(
            tx,
            scope.app_id,
            "user.created",
            now,
            {
                "user": events.user_ref(user_id, username, created_by),
                "subscription": sub_name,
                "expires_at": expires_at,
                "created_by": created_by,
            },
        )
    return expires_at


async def add_hwid(db: Executor, scope: Scope, username: str, hwid: str, now: int) -> bool:
    """Let the user sign in from one more device. False when they already held this HWID."""
    user = await get(db, scope, username)
    return await store.add_hwid(db, user["id"], hwid, now) == 1


async def delete_by_name(db: Database, scope: Scope, username: str, now: int) -> None:
    async with db.transaction() as tx:
        user = await get(tx, scope, username)
        await delete(tx, scope.app_id, user["id"], now)


async def delete_all(db: Database, scope: Scope, now: int) -> int:
    report = await events.users_deleted(db, scope.app_id, "all", now)
    return await store.delete_all(db, scope.app_id, reseller_id=scope.reseller_id, report=report)


async def delete_expired(db: Database, scope: Scope, now: int) -> int:
    """Delete the users with no time left; a paused user is not expired."""
    report = await events.users_deleted(db, scope.app_id, "expired", now)
    return await store.delete_expired(db, scope.app_id, now, reseller_id=scope.reseller_id, report=report)


class UserPage(NamedTuple):
    """One page of users (never their password hashes), their HWIDs by user id, and how many
    users there are in all."""

    users: list[UserDetails]
    hwids: dict[int, list[str]]
    total: int


async def list_page(db: Executor, scope: Scope, *, limit: int, offset: int) -> UserPage:
    rows = await store.page(db, scope.app_id, limit=limit, offset=offset, reseller_id=scope.reseller_id)
    hwids = await store.hwids_of_page(
        db, scope.app_id, limit=limit, offset=offset, reseller_id=scope.reseller_id
    )
    return UserPage(rows, hwids, await store.count(db, scope.app_id, reseller_id=scope.reseller_id))


async def list_usernames(db: Executor, scope: Scope, *, limit: int, offset: int) -> tuple[list[str], int]:
    names = await store.usernames(db, scope.app_id, limit=limit, offset=offset, reseller_id=scope.reseller_id)
    return names, await store.count(db, scope.app_id, reseller_id=scope.reseller_id)


async def verify(
    db: Executor, passwords: Passwords, scope: Scope, username: str, password: str | None
) -> None:
    """The user exists and, when a password is given, it is theirs."""
    user = await get(db, scope, username)
    if password is None:
        return
    stored: str | None = user["password_hash"]
    if stored is None:
        raise errorcodes.PASSWORD_NOT_SET(username=username)
    if not await passwordcheck.matches(db, passwords, user["id"], stored, password, queue=scope.app_id):
        raise errorcodes.PASSWORD_MISMATCH()


async def exists(db: Executor, scope: Scope, username: str) -> bool:
    return await store.find(db, scope.app_id, username, reseller_id=scope.reseller_id) is not None


class UserData(NamedTuple):
    """One user, the grants running now and their HWIDs."""

    user: UserDetails
    grants: list[ActiveGrant]
    hwids: list[str]


async def details(db: Executor, scope: Scope, username: str, now: int) -> UserData:
    row = await store.details(db, scope.app_id, username, reseller_id=scope.reseller_id)
    if row is None:
        raise errorcodes.USER_NOT_FOUND(username=username)
    grants = await grant_store.active_for_user(db, row["id"], now)
    return UserData(row, grants, await store.hwids(db, row["id"]))


async def ban_by_name(
    db: Database,
    scope: Scope,
    username: str,
    reason: str,
    now: int,
    *,
    blacklist_as: str | None,
    blacklist_ip: bool = True,
) -> None:
    """Ban the user (again: a new reason replaces the old), end their sessions and, with
    `blacklist_as`, blacklist their HWIDs and (with `blacklist_ip`) their IP (see `ban`)."""
    async with db.transaction() as tx:
        user = await get(tx, scope, username)
        await ban(
            tx, scope.app_id, user["id"], reason, now, blacklist_as=blacklist_as, blacklist_ip=blacklist_ip
        )


async def unlock(db: Executor, scope: Scope, username: str) -> None:
    """Lift the user's sign-in lock-out and start its count and doubling over (`domain.lockout`)."""
    user = await get(db, scope, username)
    if await login_store.clear_lockout(db, user["id"]) == 0:
        raise errorcodes.USER_NOT_FOUND(username=username)


async def unban_by_name(db: Database, scope: Scope, username: str, *, lift_blacklist: bool, now: int) -> None:
    async with db.transaction() as tx:
        user = await get(tx, scope, username)
        if user["banned_reason"] is None:
            raise errorcodes.USER_NOT_BANNED(username=username)
        await unban(tx, scope.app_id, user["id"], lift_blacklist=lift_blacklist, now=now)


async def rename(db: Database, scope: Scope, current: str, new: str) -> None:
    """Change a username, and the copies of it kept on keys, chat messages and tokens."""
    new = check_username(new)
    async with db.transaction() as tx:
        await app_store.lock(tx, scope.app_id)
        user = await get(tx, scope, current)
        if new == current:
            return
        if not await store.rename(tx, scope.app_id, user["id"], current, new, fold(new)):
            raise errorcodes.USER_EXISTS(username=new)


async def set_password(
    db: Database, passwords: Passwords, scope: Scope, username: str, password: str | None, now: int
) -> None:
    """Store a new password, or clear it (None) so that the user's next login sets it. The user's
    sessions (the program's and the customer panel's) end with the old password (in the same
    transaction)."""
    user = await get(db, scope, username)
    password_hash = await passwords.hash(password, queue=scope.app_id) if password is not None else None
    async with db.transaction() as tx:
        if await store.set_password(tx, user["id"], password_hash) == 0:
            raise errorcodes.USER_NOT_FOUND(username=username)
        await session_store.end_for_user(tx, user["id"])
        await panel_store.delete_for_user(tx, user["id"])
        await events.record(
            tx,
            scope.app_id,
            "user.password_reset",
            now,
            {"user": _who(user), "cleared": password is None},
        )


async def set_email(db: Executor, scope: Scope, username: str, email: str) -> None:
    check_email(email)
    user = await get(db, scope, username)
    await store.set_email(db, user["id"], email)


async def _target(tx: Executor, scope: Scope, username: str) -> UserRef | None:
    """The user a bulk-capable operation addresses; None for `all`."""
    if username in ALL_USERS:
        return None
    return await get(tx, scope, username)


async def extend(
    db: Database,
    scope: Scope,
    username: str,
    sub_name: str,
    days: float,
    *,
    active_only: bool,
    now: int,
) -> int:
    """Give a user (or `all` users) more time on a subscription. Users who still have time on it
    (paused time included) get the days added to it; the others get a new grant of that length,
    unless `active_only`, which skips them. Returns the number of users served.

    A reseller extends only its own users, needs the subscription's level among its own, and
    pays one unit of the bucket matching the days per user served (all or nothing)."""
    reseller = scope.reseller
    seconds = days_to_seconds(days)
    bucket = "" if reseller is None else team.bucket_for(seconds)
    async with db.transaction() as tx:
        sub = await _subscription_for(tx, scope, sub_name)
        target = await _target(tx, scope, username)
        user_id = None if target is None else target["id"]
        # Extend first, then create: a grant created here must not receive the days twice.
        served = await grant_store.shift_live(
            tx,
            app_id=scope.app_id,
            sub_id=sub["id"],
            seconds=seconds,
            now=now,
            user_id=user_id,
            reseller_id=scope.reseller_id,
        )
        extended_count = served
        if not (active_only or (served and user_id is not None)):
            served += await grant_store.grant_where_missing(
                tx,
                app_id=scope.app_id,
                sub_id=sub["id"],
                expires_at=_clock_base(sub, now) + seconds,
                now=now,
                user_id=user_id,
                reseller_id=scope.reseller_id,
            )
        if reseller is not None:
            await team.spend(
                tx,
                reseller,
                bucket,
                served,
                reason=f"{team.plural(served, 'user')} extended on {sub_name}",
                now=now,
            )
        if served:
            who = None if target is None else _who(target)
            extended, granted = extended_count, served - extended_count
            for name, count in (("subscription.extended", extended), ("subscription.granted", granted)):
                if count:
                    await events.record(
                        tx,
                        scope.app_id,
                        name,
                        now,
                        {"user": who, "subscription": sub_name, "seconds": seconds, "users": count},
                    )
    return served


async def subtract(db: Database, scope: Scope, username: str, sub_name: str, seconds: int, now: int) -> int:
    """Take time from the grants of a subscription that still have time (paused ones included),
    of one user or of `all`. Returns the number of users affected."""
    async with db.transaction() as tx:
        sub = await subscriptions.get(tx, scope.app_id, sub_name)
        target = await _target(tx, scope, username)
        user_id = None if target is None else target["id"]
        served = await grant_store.shift_live(
            tx,
            app_id=scope.app_id,
            sub_id=sub["id"],
            seconds=-seconds,
            now=now,
            user_id=user_id,
            reseller_id=scope.reseller_id,
        )
        if user_id is not None and not served:
            raise errorcodes.GRANT_NOT_FOUND(
                f"The user '{username}' has no time left on the subscription '{sub_name}'."
            )
    # Whoever has no time left now is out at once, not when their session would have expired:
    # the user's sessions, or for `all` those of the users whose grant this made run out (its
    # end now falls in (now - seconds, now]), found through the subscription's expiry index
    # rather than by reading every session of the application.
    if user_id is not None:
        while await session_store.end_without_time(db, now, app_id=scope.app_id, user_id=user_id):
            pass
        return served
    await session_store.end_run_out_between(db, sub["id"], now - seconds, now)
    return served


async def _subscription_for(tx: Executor, scope: Scope, sub_name: str) -> Row:
    """The subscription by name; a reseller is held first (the order every reseller write uses)
    and must have the subscription's level among its own."""
    reseller = scope.reseller
    if reseller is not None:
        await team.hold(tx, reseller)
    sub = await subscriptions.get(tx, scope.app_id, sub_name)
    if reseller is not None:
        team.check_level(reseller, sub["level"])
    return sub


async def pause(db: Database, scope: Scope, username: str, now: int) -> int:
    """Freeze the user's running grants and end their sessions. Returns how many were frozen."""
    async with db.transaction() as tx:
        user = await get(tx, scope, username)
        frozen = await grant_store.pause_user(tx, user["id"], now)
        if not frozen:
            raise errorcodes.NOTHING_TO_PAUSE(username=username)
        ended = await session_store.end_for_user(tx, user["id"], why=session_store.ENDED_BY_PAUSE)
        who = _who(user)
        await events.record(tx, scope.app_id, "user.paused", now, {"user": who, "grants": frozen})
        await events.sessions_ended_by(tx, scope.app_id, now, ended, "user_paused", user=who)
    return frozen


async def unpause(db: Database, scope: Scope, username: str, now: int) -> int:
    """Thaw the user's frozen grants; their expiries move forward by the pause. Returns how many."""
    async with db.transaction() as tx:
        user = await get(tx, scope, username)
        if not (thawed := await grant_store.unpause_user(tx, user["id"], now)):
            raise errorcodes.NOT_PAUSED(f"The user '{username}' has no paused subscription.")
        who = _who(user)
        await events.record(tx, scope.app_id, "user.unpaused", now, {"user": who, "grants": thawed})
    return thawed


async def reset_hwids(db: Database, scope: Scope, username: str, now: int) -> int:
    """Forget the user's HWIDs and end their client sessions: the next online check logs in anew
    (a program holding a signed license file is refused there until it does)."""
    async with db.transaction() as tx:
        user = await get(tx, scope, username)
        await session_store.end_for_user(tx, user["id"])
        removed = await store.reset_hwids(tx, user["id"], now)
        await events.record(
            tx,
            scope.app_id,
            "user.hwid_reset",
            now,
            {"user": _who(user), "removed": removed},
        )
        return removed


async def reset_all_hwids(db: Database, scope: Scope, now: int) -> int:
    async with db.transaction() as tx:
        removed = await store.reset_all_hwids(tx, scope.app_id, now, reseller_id=scope.reseller_id)
        await events.record(tx, scope.app_id, "user.hwid_reset", now, {"user": None, "removed": removed})
        return removed


async def set_cooldown(db: Executor, scope: Scope, username: str, seconds: int) -> None:
    user = await get(db, scope, username)
    await store.set_cooldown(db, user["id"], seconds)


async def remove_subscription(db: Database, scope: Scope, username: str, sub_name: str) -> int:
    """Take every grant of this subscription (expired ones too) from the user and end their
    sessions (their next login decides on what they still hold)."""
    async with db.transaction() as tx:
        user = await get(tx, scope, username)
        sub = await subscriptions.get(tx, scope.app_id, sub_name)
        removed = await grant_store.delete_for_user(tx, user["id"], sub["id"])
        if not removed:
            raise errorcodes.GRANT_NOT_FOUND(username=username, sub=sub_name)
        await session_store.end_for_user(tx, user["id"])
    return removed


def _projected_expiry(row: Mapping[str, Any], now: int) -> int:
    """The expiry a frozen grant would have if it were unpaused now."""
    expires_at: int = row["expires_at"]
    if row["paused_at"] is not None:
        return expires_at + now - int(row["paused_at"])
    sub_paused: int | None = row["subscription_paused_at"]
    if sub_paused is not None and expires_at > sub_paused:
        return expires_at + now - sub_paused
    return expires_at


async def grants(
    db: Executor,
    scope: Scope,
    username: str | None,
    *,
    limit: int,
    offset: int,
    now: int,
) -> tuple[list[HeldGrant], int]:
    """Every grant of the application's (or a reseller's) users, or of one user, expired ones
    included, by user then grant; and the total number of them before paging."""
    user_id = None if username is None else (await get(db, scope, username))["id"]
    rows = await grant_store.list_for_app(
        db, scope.app_id, limit=limit, offset=offset, user_id=user_id, reseller_id=scope.reseller_id
    )
    held = [
        HeldGrant(
            username=row["username"],
            subscription=row["subscription"],
            subscription_id=row["subscription_id"],
            expires_at=_projected_expiry(row, now),
            banned=row["banned_reason"] is not None,
            paused=row["paused_at"] is not None or row["subscription_paused_at"] is not None,
        )
        for row in rows
    ]
    return held, await grant_store.count_for_app(
        db, scope.app_id, user_id=user_id, reseller_id=scope.reseller_id
    )


@dataclass(frozen=True, slots=True)
class HeldGrant:
    """A user's grant as the seller lists it; a frozen one's expiry is what it would be if it
    were unpaused now."""

    username: str
    subscription: str
    subscription_id: int
    expires_at: int
    banned: bool  # the user
    paused: bool  # the grant or its subscription


# --- browsing (the dashboard's list and a user's page) -------------------------------------------

COUNT_CAP = 10_000  # a list counts this far; beyond, it says "more than"


def _scoped(query: UserQuery, scope: Scope) -> UserQuery:
    """A reseller sees only the users it owns, whatever the query asks."""
    return replace(query, reseller_id=scope.reseller_id)


def _running(grant: Row, now: int) -> bool:
    return (
        grant["expires_at"] > now and grant["paused_at"] is None and grant["subscription_paused_at"] is None
    )


def _live(grant: Row, now: int) -> bool:
    """Time left, counting a frozen grant by the time it had when its clock stopped."""
    stops = [now, grant["paused_at"], grant["subscription_paused_at"], grant.get("app_paused_at")]
    return any(stop is not None and grant["expires_at"] > stop for stop in stops)


def status_of(banned_reason: str | None, grants: list[Row], now: int) -> str:
    """The user's status as the list filters it: banned, active (a subscription gives access
    now), paused (time left, but frozen), or expired (no time left)."""
    if banned_reason is not None:
        return "banned"
    if any(_running(grant, now) for grant in grants):
        return "active"
    if any(_live(grant, now) for grant in grants):
        return "paused"
    return "expired"


def shaped_grant(grant: Row, now: int) -> dict[str, Any]:
    return {
        "id": grant["id"],
        "subscription": grant["subscription"],
        "subscription_id": grant["subscription_id"],
        "level": grant["level"],
        "key_id": grant["key_id"],
        "created_at": grant["created_at"],
        "expires_at": _projected_expiry(grant, now),
        "paused": grant["paused_at"] is not None or grant["subscription_paused_at"] is not None,
        "running": _running(grant, now),
        "live": _live(grant, now),
    }


async def _with_details(db: Executor, rows: list[Row], now: int) -> None:
    """Add each user's grants, HWIDs, status and latest expiry to the rows, in two statements."""
    ids = [row["id"] for row in rows]
    grants: dict[int, list[Row]] = {}
    for grant in await store.grants_of(db, ids):
        grants.setdefault(grant["user_id"], []).append(grant)
    hwids: dict[int, list[str]] = {}
    for found in await store.hwids_of(db, ids):
        hwids.setdefault(found["user_id"], []).append(found["hwid"])
    for row in rows:
        held = grants.get(row["id"], [])
        shaped = [shaped_grant(grant, now) for grant in held]
        row["grants"] = shaped
        row["hwids"] = hwids.get(row["id"], [])
        row["status"] = status_of(row["banned_reason"], held, now)
        live = [grant["expires_at"] for grant in shaped if grant["live"]]
        row["expires_at"] = max(live) if live else max((g["expires_at"] for g in shaped), default=None)
        row["label"] = row["username"]


async def browse(db: Executor, scope: Scope, query: UserQuery, request: PageRequest) -> Page:
    if request.sort not in store.SORTS:
        raise errorcodes.INVALID_VIEW(f"Users can be sorted by {', '.join(store.SORTS)}.")
    if query.status not in store.STATUSES:
        raise errorcodes.INVALID_VIEW(f"A user's status is one of {', '.join(store.STATUSES)}.")
    rows = await store.browse(db, scope.app_id, _scoped(query, scope), request)
    page = finish(rows, request)
    await _with_details(db, page.rows, query.now)
    return page


async def count_matching(db: Executor, scope: Scope, query: UserQuery, *, cap: int = COUNT_CAP) -> int:
    return await store.count_matching(db, scope.app_id, _scoped(query, scope), cap)


def position_after(row: Row) -> Position:
    """Where the page after this row starts, in creation order."""
    return Position(row["id"], row["id"])


async def by_id(db: Executor, scope: Scope, user_id: int, now: int) -> dict[str, Any]:
    """One user with their grants and HWIDs (a reseller: only a user it owns)."""
    row = await store.one(db, scope.app_id, user_id, reseller_id=scope.reseller_id)
    if row is None:
        raise errorcodes.USER_NOT_FOUND("This user does not exist, or is not yours.")
    found = dict(row)
    await _with_details(db, [found], now)
    return found


def time_preview(
    user: dict[str, Any], sub_name: str, seconds: int, now: int
) -> tuple[int | None, int | None]:
    """What extending (seconds > 0) or subtracting (seconds < 0) time on a subscription would make
    of the user's expiry there: (the expiry now, or None without time left; the expiry after, or
    None when there is no time to subtract from). Extending a user without time left starts a
    new grant from now; subtracting may end the time (an expiry in the past)."""
    live = [g["expires_at"] for g in user["grants"] if g["subscription"] == sub_name and g["live"]]
    before = max(live) if live else None
    if before is None:
        return None, now + seconds if seconds > 0 else None
    return before, before + seconds


# --- what a logged-in user does to their own account (client API) ----------------------------


async def change_username(db: Database, app: ClientApp, user_id: int, new_name: str, msg: Messages) -> None:
    """Rename the user (and the copies of the name kept elsewhere), then end their sessions."""
    new_name = check_new_username(app, new_name, msg)
    async with db.transaction() as tx:
        await app_store.lock(tx, app.id)
        user = await store.find_by_id(tx, app.id, user_id)
        if user is None:
            raise errorcodes.SESSION_USER_GONE()
        if not await store.rename(tx, app.id, user_id, user["username"], new_name, fold(new_name)):
            raise errorcodes.USERNAME_TAKEN(msg("usernametaken"))
        await session_store.end_for_user(tx, user_id)


async def ban_self(
    db: Database, app: ClientApp, user_id: int, *, reason: str | None, hwid: str | None, ip: str, now: int
) -> None:
    """Ban the session's user, blacklist their HWIDs, the HWID sent and the caller's address, and
    end their sessions, so the ban holds at once."""
    reason = reason or SELF_BAN_REASON
    async with db.transaction() as tx:
        await ban(tx, app.id, user_id, reason, now, blacklist_as=CLIENT_PROGRAM)
        sent = [(HWID, hwid)] if hwid else []
        for kind, value in [*sent, (IP, ip)]:
            await blacklist_store.add(
                tx, app.id, kind, value, reason, now, added_by=CLIENT_PROGRAM, banned_user_id=user_id
            )
