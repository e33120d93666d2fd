"""Applications and the owner accounts they belong to, and the application a client call belongs
to, as the client API sees it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from licensegate import ids
from licensegate.domain import appkeys, errorcodes, files
from licensegate.domain.filestore import FileStore
from licensegate.domain.sellerkeys import issue_key
from licensegate.secretbox import SecretBox
from licensegate.store import accounts as account_store
from licensegate.store import apps as app_store
from licensegate.store import subscriptions as subscription_store
from licensegate.store.apps import ClientAppRow
from licensegate.store.database import Database, Executor, Row, UniqueViolation

MAX_NAME = 64
DEFAULT_SUBSCRIPTION = ("default", "1")  # every new application can redeem level-1 keys at once


class ClientApp(NamedTuple):
    """An application as the client API sees it: read on every client call, so an immutable
    tuple (built in C), not a frozen dataclass (one `object.__setattr__` per field)."""

    id: int
    ownerid: str
    name: str
    owner: str
    version: str
    download_link: str | None
    enabled: bool
    paused: bool
    hwid_lock: bool
    force_hwid: bool
    min_hwid_length: int
    max_hwids: int
    session_seconds: int
    min_username_length: int
    hash_check: bool
    tamper_action: str
    client_rate_limit: int
    client_rate_window: int
    auth_rate_limit: int
    auth_rate_window: int
    chat_history: int
    log_webhook_url: str | None
    token_validation: bool
    case_insensitive_usernames: bool
    signing_key: str | None  # sealed (None: made before keys existed; see appkeys.sealed_keys)
    secret: str  # sealed, or in clear while signing_key is None
    seats: bool = False  # a seat rule exists: logins count seats (domain.seats)
    named_limits: bool = False  # a named rate limit exists: calls count it (domain.namedlimits)
    heartbeat_interval: int = 0  # > 0: logged-in sessions must beat (domain.heartbeats)

    @classmethod
    def from_row(cls, row: ClientAppRow) -> ClientApp:
        return cls(
            id=row["app_id"],
            ownerid=row["ownerid"],
            name=row["app_name"],
            owner=row["owner"],
            version=row["version"],
            download_link=row["download_link"],
            enabled=bool(row["enabled"]),
            paused=row["app_paused_at"] is not None,
            hwid_lock=bool(row["hwid_lock"]),
            force_hwid=bool(row["force_hwid"]),
            min_hwid_length=row["min_hwid_length"],
            max_hwids=row["max_hwids"],
            session_seconds=row["session_seconds"],
            min_username_length=row["min_username_length"],
            hash_check=bool(row["hash_check"]),
            tamper_action=row["tamper_action"],
            client_rate_limit=row["client_rate_limit"],
            client_rate_window=row["client_rate_window"],
            auth_rate_limit=row["auth_rate_limit"],
            auth_rate_window=row["auth_rate_window"],
            chat_history=row["chat_history"],
            log_webhook_url=row["log_webhook_url"],
            token_validation=bool(row["token_validation"]),
            case_insensitive_usernames=bool(row["case_insensitive_usernames"]),
            signing_key=row["signing_key"],
            secret=row["app_secret"],
            seats=bool(row["seats"]),
            named_limits=bool(row["named_limits"]),
            heartbeat_interval=row["heartbeat_interval"],
        )


@dataclass(frozen=True)
class CreatedApp:
    app_id: int
    ownerid: str
    name: str
    sellerkey: str
    public_key: str  # what an integrator pastes into a client library (Ed25519, 64 hex)
    secret: str  # what API 1.2 and legacy 1.0 clients are built with (64 hex)


def check_name(value: str, what: str) -> str:
    value = value.strip()
    if not value:
        raise errorcodes.INVALID_NAME(f"The {what} must not be empty.")
    if len(value) > MAX_NAME:
        raise errorcodes.INVALID_NAME(f"The {what} must be at most {MAX_NAME} characters.")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise errorcodes.INVALID_NAME(what=what)
    return value


async def create_application(db: Database, box: SecretBox, *, owner: str, name: str, now: int) -> CreatedApp:
    """Create the application, creating its seller account first if there is none.

    The application starts with the subscription `default` (level 1), one seller key with every
    permission (returned once; only its digest is kept), and its own secret and Ed25519 key pair
    (sealed under the deployment key).
    """
    owner = check_name(owner, "owner name")
    name = check_name(name, "application name")
    async with db.transaction() as tx:
        account = await account_store.find_by_username(tx, owner)
        if account is None:
            ownerid = ids.ownerid()
            account_id = await account_store.insert(
                tx, username=owner, role="seller", ownerid=ownerid, parent_id=None, now=now
            )
        elif account["role"] != "seller":
            raise errorcodes.NOT_A_SELLER(owner=owner, role=account["role"])
        else:
            account_id, ownerid = account["id"], account["ownerid"]
        if await app_store.exists_for_account(tx, account_id, name):
            raise errorcodes.APP_EXISTS(owner=owner, name=name)
        keys = appkeys.make_keys(box)
        app_id = await app_store.insert(
            tx,
            account_id=account_id,
            ownerid=ownerid,
            name=name,
            secret=keys.sealed_secret,
            signing_key=keys.sealed_signing_key,
            public_key=keys.public_key,
            now=now,
        )
        sub_name, sub_level = DEFAULT_SUBSCRIPTION
        await subscription_store.insert(tx, app_id=app_id, name=sub_name, level=sub_level, now=now)
        sellerkey = await issue_key(tx, app_id=app_id, name="initial", permissions=None, now=now)
    return CreatedApp(
        app_id=app_id,
        ownerid=ownerid,
        name=name,
        sellerkey=sellerkey,
        public_key=keys.public_key,
        secret=keys.secret,
    )


async def find_for_client(db: Executor, ownerid: str, name: str | None) -> ClientApp:
    """The application a client names by its owner's id and its name."""
    if not name:
        raise errorcodes.MISSING_NAME()
    row = await app_store.find_for_client(db, ownerid, name)
    if row is None:
        raise errorcodes.UNKNOWN_APPLICATION()
    return ClientApp.from_row(row)


async def meant_by_client(db: Executor, ownerid: str, name: str) -> ClientApp | None:
    """The application a client that named none most likely meant, when one stands out: KeyAuth
    libraries verify an answer with the one key they hold before they read it, so an answer about
    a mistyped `ownerid` or `name` signed with that application's key is one they can show
    ("the application doesn't exist") instead of a failed signature check. Candidates share the
    ownerid or the name; the nearest by the other one wins, a tie gives none."""
    ownerid, name = ownerid[:MAX_COMPARED], name[:MAX_COMPARED]
    ranked: dict[int, int] = {}
    for row in await app_store.near_misses(db, ownerid, name):
        ranked[row["id"]] = _distance(row["ownerid"], ownerid) + _distance(row["name"], name)
    if not ranked:
        return None
    best = min(ranked.values())
    nearest = [app_id for app_id, distance in ranked.items() if distance == best]
    if len(nearest) != 1:
        return None
    found = await app_store.find_for_client_by_id(db, nearest[0])
    return None if found is None else ClientApp.from_row(found)


MAX_COMPARED = 64


def _distance(a: str, b: str) -> int:
    """How far apart two short strings are, in linear time: the characters not covered by their
    common prefix and suffix (a single typo costs 1 or 2, as in an edit distance)."""
    shortest = min(len(a), len(b))
    prefix = 0
    while prefix < shortest and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return max(len(a), len(b)) - prefix - suffix


async def get(db: Executor, app_id: int) -> Row | None:
    return await app_store.get(db, app_id)


async def list_owned(db: Executor, account_id: int) -> list[Row]:
    return await app_store.list_for_account(db, account_id)


async def rename(db: Database, app_id: int, name: str, now: int) -> tuple[str, str]:
    """Give the application a new name (unique among its owner's); (old, new)."""
    name = check_name(name, "application name")
    row = await app_store.get(db, app_id)
    if row is None:
        raise errorcodes.APP_NOT_FOUND()
    try:
        renamed = await app_store.rename(db, app_id, name, now)
    except UniqueViolation:
        renamed = 0
    if not renamed:
        raise errorcodes.APP_EXISTS(f"You already have an application named '{name}'.")
    return row["name"], name


async def delete(db: Database, content: FileStore, app_id: int, typed_name: str) -> str:
    """Delete the application with everything it holds, its files' content included, only when
    `typed_name` is its exact name (checked here, on the server: a form that skips its own check
    changes nothing). Returns it."""
    async with db.transaction() as tx:
        row = await app_store.get(tx, app_id)
        if row is None:
            raise errorcodes.APP_NOT_FOUND()
        if typed_name != row["name"]:
            raise errorcodes.NAME_MISMATCH()
        keys = await files.storage_keys(tx, app_id)
        await app_store.delete(tx, app_id)
    # After the commit (content another application shares stays): a failure here leaves
    # unreferenced content behind, never a file without its content.
    await files.release(content, db, keys)
    name: str = row["name"]
    return name


async def client_app(db: Executor, app_id: int) -> ClientApp:
    """An application as the client API sees it (for seller operations that run client rules)."""
    row = await app_store.find_for_client_by_id(db, app_id)
    assert row is not None, "the seller key's application exists"
    return ClientApp.from_row(row)
