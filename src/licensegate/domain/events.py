"""Events: what happened in an application, told to the seller's systems by signed webhooks.

Every event has a stable name from `CATALOGUE`, an id (`evt_...`, also the idempotency id a
receiver dedupes on), a time and a JSON payload with a `version`: ids, names and times, never a
secret, a password or a full license key (a key is shown masked; endpoints set to include keys
get the full key as `key.key`, added at delivery). A user a License Login made is named by its
key: `user_ref` shows that name masked, for every endpoint (the user's id identifies it).

`record` writes the event, and one pending delivery per endpoint that wants it, with the handle
of the transaction of the change it reports: a change rolled back takes its event with it, and a
change committed cannot lose its event. An application with no endpoint that wants the event
writes nothing. Delivery is `domain.eventdelivery`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import orjson

from licensegate import ids
from licensegate.appcache import AppCache
from licensegate.invalidation import Invalidation
from licensegate.store import bulk
from licensegate.store import events as store
from licensegate.store.database import Database, Executor, Row
from licensegate.store.users import LICENSE_USER

PAYLOAD_VERSION = 1


class EventKind(NamedTuple):
    doc: str
    opt_in: bool = False  # not sent to endpoints that want "all": only to those naming it


CATALOGUE: dict[str, EventKind] = {
    "user.created": EventKind("the seller (API, dashboard or a reseller) created a user"),
    "user.registered": EventKind("a user registered from the client program with a key"),
    "user.logged_in": EventKind("a user logged in (many a second: opt-in)", opt_in=True),
    "user.login_refused": EventKind(
        "a login was refused: HWID mismatch, banned, expired (opt-in)", opt_in=True
    ),
    "user.banned": EventKind("a user was banned (by the seller or the client program)"),
    "user.unbanned": EventKind("a user's ban was lifted"),
    "user.paused": EventKind("a user's subscriptions were paused"),
    "user.unpaused": EventKind("a user's paused subscriptions run again"),
    "user.deleted": EventKind("a user was deleted"),
    "user.password_reset": EventKind(
        "a user's password was set or cleared by the seller, or reset by e-mail"
    ),
    "user.hwid_reset": EventKind("a user's HWIDs were reset"),
    "key.created": EventKind("license keys were created"),
    "key.redeemed": EventKind("a license key was redeemed"),
    "key.banned": EventKind("a license key was banned"),
    "key.unbanned": EventKind("a license key's ban was lifted"),
    "key.deleted": EventKind("license keys were deleted"),
    "subscription.granted": EventKind("a user was given a subscription they did not hold"),
    "subscription.extended": EventKind("users were given more time on a subscription"),
    "subscription.expiring_soon": EventKind("a user's subscription runs out within the set number of days"),
    "subscription.expired": EventKind("a user's subscription ran out"),
    "subscription.paused": EventKind("a subscription was paused for all its users"),
    "session.ended": EventKind("client sessions were ended by the seller, a ban or a pause"),
    "credits.changed": EventKind("the seller set, added to, refilled or removed a credit balance"),
    "credits.spent": EventKind("the client program spent credits (one per spend: opt-in)", opt_in=True),
    "tamper.reported": EventKind("the client program reported tampering"),
    "blacklist.hit": EventKind("a blacklisted HWID or address was refused"),
    "app.paused": EventKind("the application was paused"),
    "app.resumed": EventKind("the application was resumed"),
    "import.finished": EventKind("an import (from KeyAuth) finished"),
    "team.member_added": EventKind("a reseller or manager joined the seller's team"),
    "sellerkey.created": EventKind("a seller key was created"),
    "endpoint.test": EventKind("a test event sent from the dashboard or the seller API"),
}


# Events of the login path: written only when an endpoint wants them, which a per-worker cache
# says without a statement per login (`login_cache`). `user.logged_in` goes in the login's own
# transaction (domain.logins); a refusal, which changes nothing, has its event alone
# (`report_refusal`).
LOGIN_PATH = ("user.logged_in", "user.login_refused", "blacklist.hit")
# A key's first use (License Login or register): the cache says which path to take (the
# first-use paths check exactly, in their own transaction or statement, before they skip them).
FIRST_USE = ("key.redeemed", "user.registered", "subscription.granted")
HOT_PATH = (*LOGIN_PATH, "credits.spent")  # what the per-worker cache knows (Spend Credits too)
TOPIC = "event-wants"


def login_cache(invalidation: Invalidation) -> AppCache[frozenset[str]]:
    """Which of `HOT_PATH` an application's enabled endpoints want; a change of its endpoints
    announces itself (`AppCache.changed`). A stale answer costs at most one statement that
    writes nothing (`record` checks the endpoints itself), never a wrong event."""
    return _wants_cache(invalidation, HOT_PATH)


def first_use_cache(invalidation: Invalidation) -> AppCache[frozenset[str]]:
    """Which of `FIRST_USE` an application's enabled endpoints want (forgotten with
    `login_cache`, on the same topic). Only a hint: the first-use paths make sure exactly before
    they write no event (`domain.logins`)."""
    return _wants_cache(invalidation, FIRST_USE)


def _wants_cache(invalidation: Invalidation, names: tuple[str, ...]) -> AppCache[frozenset[str]]:
    async def load(db: Executor, app_id: int) -> frozenset[str]:
        lists = await store.enabled_event_lists(db, app_id)  # one statement, whatever the names
        return frozenset(
            name
            for name in names
            for stored in lists
            if f",{name}," in stored or (stored.startswith(store.ALL) and not CATALOGUE[name].opt_in)
        )

    return AppCache(invalidation, TOPIC, load)


def known(name: str) -> bool:
    return name in CATALOGUE


def masked_key(key: str) -> str:
    """Enough of a key to recognise it, not enough to use it."""
    keep = 4 if len(key) >= 16 else 2
    return f"{key[:keep]}…{key[-keep:]}"


def shown_name(username: str, created_by: str | None) -> str:
    """A user's name as events show it: a License Login's user (`created_by` LICENSE_USER) is
    named by its key, so it is shown masked, as every event shows keys."""
    return masked_key(username) if created_by == LICENSE_USER else username


def user_ref(user_id: int | None, username: str | None, created_by: str | None) -> dict[str, Any]:
    """A user as every event shows it (`created_by`, the user row's: see `shown_name`)."""
    return {"id": user_id, "username": None if username is None else shown_name(username, created_by)}


def credential_shown(credential: str | None, user: Mapping[str, Any] | None) -> str | None:
    """What a session was logged in with, as events show it: the user's name whole when it is a
    name that is not a key (a Login), else masked (a License Login's key, or a key that logged
    in a user named otherwise). `user`: the session's user row (`username`, `created_by`)."""
    if credential is None:
        return None
    if user is not None and credential == user["username"]:
        return shown_name(credential, user["created_by"])
    return masked_key(credential)


def key_ref(key: str, **more: Any) -> dict[str, Any]:
    return {"masked": masked_key(key), **more}


def key_of(row: Mapping[str, Any]) -> dict[str, Any]:
    """A key's row (its `key`, `id` and `level`) as events show it: masked."""
    return key_ref(row["key"], id=row["id"], level=row["level"])


async def about_key(
    tx: Executor, app_id: int, name: str, now: int, row: Mapping[str, Any], **more: Any
) -> bool:
    """An event about one license key (`row`), the key masked in the payload and kept whole for
    endpoints that include keys."""
    return await record(tx, app_id, name, now, {"key": key_of(row), **more}, license_key=row["key"])


def encode(data: Mapping[str, Any]) -> str:
    return orjson.dumps({"version": PAYLOAD_VERSION, **data}).decode()


async def record(
    tx: Executor,
    app_id: int,
    name: str,
    now: int,
    data: Mapping[str, Any],
    *,
    license_key: str | None = None,
) -> bool:
    """Write the event with `tx`, the transaction of the change it reports (two statements: run
    it outside a transaction and a crash between them could leave an event nobody is sent). True
    when an endpoint wants it."""
    kind = CATALOGUE[name]
    return await store.record(
        tx,
        app_id=app_id,
        event_id=ids.event_id(),
        name=name,
        payload=encode(data),
        license_key=license_key,
        now=now,
        opt_in=kind.opt_in,
    )


async def report_refusal(
    db: Database, wants: AppCache[frozenset[str]], app_id: int, name: str, now: int, data: Mapping[str, Any]
) -> None:
    """A refused login's event (`user.login_refused`, `blacklist.hit`), written when an endpoint
    wants it. A refusal changes nothing, so there is no transaction to share: the event is its
    own, and the refusal's only record; the caller writes it before answering. (`user.logged_in`
    is written in the login's own transaction: `domain.logins.Client.report_login`.)"""
    if name in await wants.get(db, app_id):
        async with db.transaction() as tx:
            await record(tx, app_id, name, now, data)


async def wanted(db: Executor, app_id: int, names: tuple[str, ...]) -> bool:
    """Whether an enabled endpoint of the application wants any of these events (for a path that
    has a faster way that writes no event)."""
    return await store.wanted(db, app_id, with_opt_in(names))


def with_opt_in(names: tuple[str, ...]) -> list[tuple[str, bool]]:
    """(name, opt-in) of each event: what `store.events` matches endpoints by."""
    return [(name, CATALOGUE[name].opt_in) for name in names]


async def batch_reporter(
    db: Executor,
    app_id: int,
    name: str,
    now: int,
    data: Mapping[str, Any],
    *,
    listed: str,
    entry: Callable[[Row], dict[str, Any]],
) -> bulk.Report | None:
    """For a bulk change that runs in batches, each its own transaction (store/bulk.py): what
    writes one event per batch, in that batch's transaction, with the batch's rows (`listed`:
    `entry` of each row) and their `count`. So every row deleted is reported by the transaction
    that deleted it, and a delete stopped mid-way reports what it did. None when no endpoint
    wants the event (the change then runs unreported, as one statement on PostgreSQL)."""
    if not await wanted(db, app_id, (name,)):
        return None

    async def report(tx: Executor, rows: list[Row]) -> None:
        await record(
            tx, app_id, name, now, {**data, listed: [entry(row) for row in rows], "count": len(rows)}
        )

    return report


async def users_deleted(db: Executor, app_id: int, which: str, now: int) -> bulk.Report | None:
    """`user.deleted` for each batch of a bulk delete (`which`: all, expired, reseller)."""

    def entry(row: Row) -> dict[str, Any]:  # store.users.DELETED_COLUMNS
        return user_ref(row["id"], row["username"], row["created_by"])

    data = {"user": None, "which": which}
    return await batch_reporter(db, app_id, "user.deleted", now, data, listed="users", entry=entry)


async def keys_deleted(db: Executor, app_id: int, which: str, now: int, **more: Any) -> bulk.Report | None:
    """`key.deleted` for each batch of a bulk delete (`which`: unused, used, all, subscription,
    reseller), its keys masked."""

    data = {"key": None, "which": which, **more}  # store.licenses.DELETED_COLUMNS for key_of
    return await batch_reporter(db, app_id, "key.deleted", now, data, listed="keys", entry=key_of)


async def sessions_ended(
    db: Executor, app_id: int, reason: str, now: int, ip: str | None = None
) -> bulk.Report | None:
    """`session.ended` for each batch of sessions ended in bulk (`reason`: seller, app_paused)."""

    def entry(row: Row) -> dict[str, Any]:  # store.sessions.ENDED_COLUMNS
        return {"user_id": row["user_id"], "ip": row["ip"]}

    data = {"credential": None, "ip": ip, "reason": reason}
    return await batch_reporter(db, app_id, "session.ended", now, data, listed="sessions", entry=entry)


async def granted_by_key(
    tx: Executor,
    app_id: int,
    now: int,
    *,
    extended: bool,
    user: dict[str, Any],
    subscription: str,
    seconds: int,
    key: str,
    key_data: dict[str, Any],
) -> bool:
    """`subscription.granted` (or `.extended`, a running grant lengthened) for one subscription a
    redeemed key gave its user, with the transaction that gave it."""
    name = "subscription.extended" if extended else "subscription.granted"
    data = {"user": user, "subscription": subscription, "seconds": seconds, "users": 1, "key": key_data}
    return await record(tx, app_id, name, now, data, license_key=key)


async def sessions_ended_by(
    tx: Executor, app_id: int, now: int, count: int, reason: str, **about: Any
) -> None:
    """`session.ended` for the `count` sessions a ban or a pause ended (`reason`: user_banned,
    key_banned, user_paused, subscription_paused), with the transaction that ended them; `about`
    names whose (user, key or subscription). Nothing when none ended."""
    if count:
        data = {"credential": None, "ip": None, "count": count, "reason": reason, **about}
        await record(tx, app_id, "session.ended", now, data)


async def import_finished(
    tx: Executor, app_id: int, now: int, *, source: str, counts: Mapping[str, int]
) -> bool:
    """For importers (domain/keyauthimport): report an import that finished, with what it brought
    in (`counts`, e.g. {"users": 120, "keys": 400}); call it in the transaction that marks the
    import finished."""
    return await record(tx, app_id, "import.finished", now, {"source": source, "counts": dict(counts)})
