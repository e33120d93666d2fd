"""The client API's ways in: register, login, License Login and Upgrade Access.

Every refusal carries the application's own message for it (see `domain/messages.py`) and a
stable error code. Reads come first and decide; writes happen last, in one short transaction,
and every write that depends on what was read is conditional (a key is marked used only if it is
still unused, an HWID is bound only while the user has room for one), so concurrent requests
cannot redeem a key twice or bind two devices where one is allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypedDict, cast

import orjson

from licensegate.appcache import AppCache
from licensegate.domain import blacklists, errorcodes, events, lockout, passwordcheck, seats, tokens, totp
from licensegate.domain import licenses as license_rules
from licensegate.domain import users as user_rules
from licensegate.domain.apps import ClientApp
from licensegate.domain.errors import NotFound, Refusal
from licensegate.domain.messages import Messages
from licensegate.domain.recheck import Held
from licensegate.domain.timefmt import datetime_text, unix_text
from licensegate.domain.usedkeys import UsedKeys
from licensegate.passwords import Passwords
from licensegate.secretbox import SecretBox, is_sealed
from licensegate.store import licenses as license_store
from licensegate.store import logins as store
from licensegate.store import overview as overview_store
from licensegate.store import sessions as session_store
from licensegate.store import subscriptions as subscription_store
from licensegate.store import tokens as token_store
from licensegate.store import users as user_store
from licensegate.store.database import Database, Executor, UniqueViolation
from licensegate.store.logins import AccountRow, GrantRow, KeyUserRow, UserRow
from licensegate.store.sessions import LoginRecord
from licensegate.store.users import LICENSE_USER


@dataclass(frozen=True, slots=True)
class Client:
    """Who is calling: the session, the address, and what the program told about the machine."""

    session_id: str
    ip: str
    hwid: str | None = None
    details: dict[str, Any] = field(default_factory=dict)  # os, architecture, device, ...
    recorded: LoginRecord | None = None  # the login the session records already, if any
    report_login: bool = False  # an endpoint wants `user.logged_in`: write it with the login


@dataclass(frozen=True, slots=True)
class Account:
    """A user as a login sees them: their own columns, their HWIDs and their grants. `appended`:
    those of the HWIDs that are a KeyAuth user's appended HWID string (every HWID KeyAuth
    appended, with no separator), which a device matches by being contained in it."""

    user: UserRow
    hwids: list[str]
    grants: list[GrantRow]
    appended: tuple[str, ...] = ()

    def holds(self, hwid: str | None) -> bool:
        """Whether the device is one of the user's: its HWID is one of theirs, or contained in an
        appended HWID string (as KeyAuth matched it)."""
        if hwid is None:
            return False
        return hwid in self.hwids or any(hwid in string for string in self.appended)


def account_of(rows: Sequence[AccountRow]) -> Account | None:
    """From the rows of `store.logins.user_by_name` / `key_with_user` (one per grant)."""
    if not rows or rows[0]["user_id"] is None:
        return None
    first = rows[0]
    grants = cast("list[GrantRow]", [row for row in rows if row["expires_at"] is not None])
    hwids: list[str | list[str]] = orjson.loads(first["hwids"])
    if all(isinstance(hwid, str) for hwid in hwids):
        return Account(first, cast("list[str]", hwids), grants)
    appended = tuple(hwid[0] for hwid in hwids if isinstance(hwid, list))
    plain = [hwid[0] if isinstance(hwid, list) else hwid for hwid in hwids]
    return Account(first, plain, grants, appended)


class LastLogin(TypedDict):
    """What recording a login reads of its user (a `UserRow` holds it)."""

    user_id: int
    last_login_at: int | None
    last_ip: str | None


@dataclass(frozen=True, slots=True)
class KnownLogin:
    """A License Login as a worker holds it with its session (`domain.recheck`): the key, HWID and
    address it came with, and what was read for it (the key with its user, their HWIDs and
    grants), none of them blacklisted. A re-check with the same three uses them while the
    session's login versions are unchanged."""

    key: str
    hwid: str | None
    ip: str
    key_row: KeyUserRow
    account: Account


@dataclass(frozen=True, slots=True)
class Login:
    user_id: int
    username: str
    info: dict[str, Any]


# --- checks -------------------------------------------------------------------------------------


def check_hwid(app: ClientApp, hwid: str | None, msg: Messages) -> None:
    if hwid is None:
        if app.force_hwid:
            raise errorcodes.HWID_REQUIRED(msg("hwidrequired"))
        return
    if len(hwid) < app.min_hwid_length:
        raise errorcodes.HWID_TOO_SHORT(msg("hwidtooshort", minimum=app.min_hwid_length))


def hwid_to_bind(
    app: ClientApp,
    user_locked: bool,
    held: list[str],
    hwid: str | None,
    msg: Messages,
    appended: Sequence[str] = (),
) -> str | None:
    """Whether a device may log in as a user who holds the HWIDs `held`, and the HWID to bind to
    the user now (None: nothing to bind). Only a user locked in an application that locks HWIDs
    is held to their devices; a new device takes a free place, if the user has one. A KeyAuth
    appended HWID string (in `held` and `appended`) takes one place and admits every device whose
    HWID it contains."""
    if not (app.hwid_lock and user_locked):
        return None
    if hwid is None:
        if held:
            raise errorcodes.HWID_MISMATCH(msg("hwidmismatch"))
        return None
    if hwid in held or any(hwid in string for string in appended):
        return None
    if len(held) >= app.max_hwids:
        raise errorcodes.HWID_MISMATCH(msg("hwidmismatch") if held else msg("hwidlimit"))
    return hwid


async def check_blacklist(db: Executor, app: ClientApp, client: Client, msg: Messages) -> None:
    hwids = [client.hwid] if client.hwid else []
    if await blacklists.blocked(db, app.id, hwids=hwids, ip=client.ip):
        raise errorcodes.BLACKLISTED(msg("hwidblacked"))


def running_grants(grants: Sequence[GrantRow], app: ClientApp, now: int) -> tuple[list[dict[str, Any]], bool]:
    """The subscription entries of grants that give access now, and whether any grant with time
    left is frozen by a pause (of the user, its subscription or the application)."""
    entries: list[dict[str, Any]] = []
    frozen = False
    for grant in grants:
        paused_at = grant["paused_at"] or grant["sub_paused_at"]
        if paused_at is not None or app.paused:
            if grant["expires_at"] > (paused_at or now):
                frozen = True
            continue
        if grant["expires_at"] > now:
            entries.append(
                {
                    "subscription": grant["subscription"],
                    "key": grant["grant_key"],
                    "expiry": unix_text(grant["expires_at"]),
                    "timeleft": grant["expires_at"] - now,
                }
            )
    return entries, frozen


def info(
    username: str, created_at: int, entries: list[dict[str, Any]], client: Client, hwid: str, now: int
) -> dict[str, Any]:
    """The `info` object of a login, in the interface document's User shape."""
    return {
        "username": username,
        "subscriptions": entries,
        "ip": client.ip,
        "hwid": hwid,
        "createdate": datetime_text(created_at),
        "lastlogin": unix_text(now),
    }


# --- admitting a known user ---------------------------------------------------------------------


async def admit(
    db: Database,
    box: SecretBox,
    app: ClientApp,
    account: Account,
    client: Client,
    *,
    credential: str,
    otp_code: str | None,
    msg: Messages,
    now: int,
    otp_checked: bool = False,
    blacklist_checked: bool = False,
    blacklisted: bool | None = None,
) -> Login:
    """Everything after the user is known and their secret checked: ban, blacklist (unless
    `blacklist_checked`: a held login found this client not blacklisted; `blacklisted`: what
    the statement that read the key found), one-time code (unless `otp_checked`: the customer
    panel asked for it), HWID, subscriptions; then bind the HWID if one is due and log the
    session in."""
    user = account.user
    user_id: int = user["user_id"]
    if user["user_banned"] is not None:
        raise errorcodes.USER_BANNED(msg("userbanned", reason=user["user_banned"]))
    if blacklisted:
        raise errorcodes.BLACKLISTED(msg("hwidblacked"))
    if blacklisted is None and not blacklist_checked:
        await check_blacklist(db, app, client, msg)
    if user["otp_enabled"] and not otp_checked:
        await consume_otp(db, box, user_id, user["otp_secret"], otp_code, msg, now)

    held = account.hwids
    bind = hwid_to_bind(app, bool(user["user_hwid_lock"]), held, client.hwid, msg, account.appended)
    entries, frozen = running_grants(account.grants, app, now)
    if not entries:
        if frozen:
            raise errorcodes.SUBSCRIPTION_PAUSED(msg("pausedsub"))
        raise errorcodes.NO_ACTIVE_SUBSCRIPTION(msg("noactivesubs"))

    # An appended HWID string presented whole is one device's HWID: it becomes an ordinary one.
    settle = client.hwid is not None and client.hwid in account.appended
    if bind is None and not settle and not app.seats and _only_time_to_refresh(user, client, credential, now):
        # A program re-checking its licence after a minute or more, from the same address, on a
        # session that records this very login: only the time of the last login moves. Real
        # programs re-check every few minutes, so this, not the held re-check, is their common
        # case; it costs one write that need not wait for a disk sync (`refresh_last_login`).
        await store.refresh_last_login(db, user_id, now)
        user["last_login_at"] = now
    elif bind is None and not settle and not app.seats and not _login_to_record(user, client, now):
        # The common case: only the session changes, one statement, no transaction around it
        # (unless an endpoint wants `user.logged_in`, written with that change).
        if not client.report_login:
            await _validate(db, app.id, user_id, client, credential, msg)
        else:
            async with db.transaction() as tx:
                await _validate(tx, app.id, user_id, client, credential, msg)
                await _logged_in(tx, app.id, _who(user_id, user), client, now)
    else:
        async with db.transaction() as tx:
            if bind is not None or app.seats:
                await store.lock_user(tx, user_id)
            if bind is not None and not await store.bind_hwid(tx, user_id, bind, app.max_hwids, now):
                raise errorcodes.HWID_MISMATCH(msg("hwidmismatch"))
            if app.seats:  # counted after the lock: concurrent logins of the user queue here
                await seats.hold(tx, app.id, user_id, credential, client.session_id, client.hwid, msg, now)
            if settle and client.hwid is not None:
                await store.settle_hwid(tx, user_id, client.hwid)
            await _log_in(tx, app.id, user, client, credential, now, msg)
            await _logged_in(tx, app.id, _who(user_id, user), client, now)
    hwid = client.hwid or (held[0] if held else "")
    return Login(user_id, user["username"], info(credential, user["created_at"], entries, client, hwid, now))


def _who(user_id: int, user: UserRow) -> dict[str, Any]:
    """The user as events show it (a License Login's user, named by its key, masked)."""
    return events.user_ref(user_id, user["username"], user["created_by"])


async def _logged_in(tx: Executor, app_id: int, who: dict[str, Any], client: Client, now: int) -> None:
    if client.report_login:
        data = {"user": who, "ip": client.ip, "hwid": client.hwid}
        await events.record(tx, app_id, "user.logged_in", now, data)


RECORD_EVERY = 60  # seconds: a user's last login from the same address is written this often at most


def _login_to_record(user: LastLogin, client: Client, now: int) -> bool:
    # A program re-checking its licence from the same address is recorded once a minute, not at
    # every call (a transaction each); a login from another address is recorded at once.
    last = user["last_login_at"]
    return last is None or user["last_ip"] != client.ip or not 0 <= now - last < RECORD_EVERY


def _only_time_to_refresh(user: LastLogin, client: Client, credential: str, now: int) -> bool:
    # Nothing but bookkeeping to write: the same address as the last login, the session already
    # recording this login, and no endpoint wanting `user.logged_in` (written with the login).
    return (
        not client.report_login
        and user["last_login_at"] is not None
        and user["last_ip"] == client.ip
        and _login_to_record(user, client, now)
        and client.recorded
        == session_store.login_record(user["user_id"], credential, client.hwid, client.details)
    )


async def _validate(
    db: Executor, app_id: int, user_id: int, client: Client, credential: str, msg: Messages
) -> None:
    if client.recorded == session_store.login_record(user_id, credential, client.hwid, client.details):
        return  # the session already records exactly this login (a program re-checking its licence)
    validated = await session_store.validate(
        db,
        client.session_id,
        user_id=user_id,
        credential=credential,
        hwid=client.hwid,
        client=client.details,
    )
    if not validated:
        user = await user_store.find_by_id(db, app_id, user_id)
        if user is not None and user["banned_reason"] is not None:  # banned while this login was under way
            raise errorcodes.USER_BANNED(msg("userbanned", reason=user["banned_reason"]))


async def _log_in(
    tx: Executor, app_id: int, user: LastLogin, client: Client, credential: str, now: int, msg: Messages
) -> None:
    await _validate(tx, app_id, user["user_id"], client, credential, msg)
    if _login_to_record(user, client, now):
        await store.record_login(tx, user["user_id"], client.ip, now)
        # What a held login remembers (a bookkeeping write bumps no login version).
        user["last_login_at"], user["last_ip"] = now, client.ip


OTP_SECRET = "users.otp_secret"  # noqa: S105 (the purpose a user's two-factor secret is sealed for)


def open_otp_secret(box: SecretBox, stored: str) -> str:
    """A user's two-factor secret from its column: sealed, or in clear if stored before secrets
    were sealed and not yet sealed by `licensegate migrate` (or `serve`)."""
    return box.open(stored, OTP_SECRET) if is_sealed(stored) else stored


async def consume_otp(
    db: Executor, box: SecretBox, user_id: int, stored: str | None, code: str | None, msg: Messages, now: int
) -> None:
    """Accept a one-time code of the user's (sealed) secret, once."""
    if not code:
        raise errorcodes.OTP_REQUIRED(msg("otprequired"))
    step = None if stored is None else totp.matching_step(open_otp_secret(box, stored), code, now)
    if step is None or not await store.use_otp_step(db, user_id, step):
        raise errorcodes.OTP_INVALID(msg("otpinvalid"))


# --- login with username and password ---------------------------------------------------------


async def login(
    db: Database,
    passwords: Passwords,
    box: SecretBox,
    app: ClientApp,
    client: Client,
    *,
    username: str,
    password: str,
    otp_code: str | None,
    msg: Messages,
    now: int,
    guard: lockout.Guard,
) -> Login:
    """A password sign-in; wrong passwords in a row lock it for a while (`domain.lockout`)."""
    check_hwid(app, client.hwid, msg)
    account = account_of(await _user_rows(db, app, username))
    refused = errorcodes.INVALID_CREDENTIALS(msg("invalidcredentials"))
    if account is None:
        await guard.refuse_unknown(app.id, username, msg)
        await passwords.verify(passwords.dummy_hash, password, queue=app.id)  # as long as a wrong password
        await guard.unknown_failed(app.id, username)
        raise refused
    user = account.user
    await guard.refuse_locked(user, account.holds(client.hwid), client.ip, msg, now)
    stored: str | None = user["password_hash"]
    if stored is None:
        if user["created_by"] == LICENSE_USER:
            raise refused  # made by a License Login: it signs in with its key
        # Created without a password (seller API `adduser`): the first login sets it.
        await store.set_first_password(db, user["user_id"], await passwords.hash(password, queue=app.id))
    elif not await passwordcheck.matches(db, passwords, user["user_id"], stored, password, queue=app.id):
        await guard.failed(db, user, now)
        raise refused
    await guard.succeeded(db, user)
    return await admit(
        db, box, app, account, client, credential=user["username"], otp_code=otp_code, msg=msg, now=now
    )


async def find_account(db: Executor, app: ClientApp, username: str) -> Account | None:
    """The user a client (or the customer panel) names, by the application's rule for names."""
    return account_of(await _user_rows(db, app, username))


async def _user_rows(db: Executor, app: ClientApp, username: str) -> list[AccountRow]:
    """`store.user_by_name` by the name a client gave, compared by the application's rule (NFKC,
    and case-folded where it asks). A name stored before names were normalised is still found
    by its exact spelling."""
    key = user_rules.lookup_key(username, case_insensitive=app.case_insensitive_usernames)
    rows = await store.user_by_name(db, app.id, key)
    if not rows and key != username and not app.case_insensitive_usernames:
        rows = await store.user_by_name(db, app.id, username)
    return rows


# --- register and License Login: redeeming a key --------------------------------------------


async def _usable_key(
    db: Executor, app: ClientApp, key: str, msg: Messages
) -> tuple[KeyUserRow, Account | None]:
    """The key (not banned) and, when it was redeemed and its user still exists, that user."""
    rows = await store.key_with_user(db, app.id, key)
    if not rows:
        raise errorcodes.KEY_NOT_FOUND(msg("keynotfound"))
    _refuse_banned(rows[0], msg)
    return rows[0], account_of(rows)


def _refuse_banned(row: KeyUserRow, msg: Messages) -> None:
    if row["banned_reason"] is not None:
        raise errorcodes.KEY_BANNED(msg("keybanned", reason=row["banned_reason"]))


class NewUser(NamedTuple):
    """The user a redeemed key makes: by Register (with a password) or by a License Login."""

    username: str
    password_hash: str | None
    email: str | None
    created_by: str


async def _reports_first_use(tx: Executor, app_id: int, hint: frozenset[str] | None) -> bool:
    """Whether the first use writes its events, decided exactly inside its transaction. `hint`:
    what the worker's cache says the application's endpoints want (None: nothing known). When it
    says some: `events.record` checks each itself. When it says none: one statement makes sure
    (the cache may not have heard of an endpoint added a moment ago), instead of two."""
    if hint is None or not hint.isdisjoint(events.FIRST_USE):
        return True
    return await events.wanted(tx, app_id, events.FIRST_USE)


async def _redeem_into_new_user(
    db: Database,
    box: SecretBox,
    app: ClientApp,
    key_row: KeyUserRow,
    client: Client,
    new_user: NewUser,
    *,
    hint: frozenset[str] | None,
    msg: Messages,
    now: int,
) -> Login:
    """Create the user, redeem the key for it and log the session in, atomically. A concurrent
    redemption of the same key (or creation of the same name) makes this one refuse cleanly.

    Writers queue for the transaction (on SQLite every worker's, on one file lock), so whatever
    needs no lock happens before it: the token is made and sealed, the key level's subscriptions
    read (again inside only if the level changed meanwhile); inside are only the writes, each
    one statement (the user with its login, the key, the grants, both counters, the token, the
    HWID, the session), and no read back: the answer is built from what was written."""
    username, created_by = new_user.username, new_user.created_by
    token_hash, token_sealed = tokens.new(box)
    subs = await subscription_store.for_level(db, app.id, key_row["level"])
    try:
        async with db.transaction() as tx:
            user_id = await user_store.insert(
                tx,
                app_id=app.id,
                username=username,
                username_fold=user_rules.fold(username),
                password_hash=new_user.password_hash,
                email=new_user.email,
                hwid_lock=True,
                created_by=created_by,
                now=now,
                # A reseller's key makes a user of that reseller, so it can see and manage them.
                owner_account_id=key_row["generated_by_account_id"],
                logged_in_from=client.ip,
                counted=False,  # with the key, below
            )
            if user_id is None:
                if created_by == LICENSE_USER:
                    raise errorcodes.KEY_USED(msg("keyused"))
                raise errorcodes.USERNAME_TAKEN(msg("usernametaken"))
            who = events.user_ref(user_id, username, created_by)
            report = await _reports_first_use(tx, app.id, hint)
            redeemed = await license_rules.redeem_read_ahead(
                tx, app.id, key_row, user_id, username, subs, now, created_by=created_by, report=report
            )
            if redeemed is None:
                raise errorcodes.KEY_USED(msg("keyused"))
            await overview_store.bump(tx, app.id, now, "user", "key")
            await token_store.insert(
                tx,
                app_id=app.id,
                token_hash=token_hash,
                token_sealed=token_sealed,
                kind="user",
                assigned=username,
                user_id=user_id,
                license_key_id=None,
                now=now,
            )
            if report:
                await events.record(
                    tx,
                    app.id,
                    "user.registered",
                    now,
                    {
                        "user": who,
                        "via": "register" if created_by != LICENSE_USER else "license",
                        "key": events.key_ref(key_row["key"], id=key_row["id"], level=redeemed.level),
                    },
                    license_key=key_row["key"],
                )
            if client.hwid is not None and app.max_hwids > 0:
                await store.insert_first_hwid(tx, user_id, client.hwid, now)
            # No seat to count: a user made now holds no other session. Every later login of the
            # user, and one that lost the race for this key (`license_login`), counts this one.
            await _validate(tx, app.id, user_id, client, username, msg)
            await _logged_in(tx, app.id, who, client, now)
    except NotFound as exc:
        if exc.error == "level_has_no_subscription":
            raise errorcodes.NO_SUBSCRIPTION_FOR_LEVEL(msg("nosublevel")) from exc
        raise
    grants: list[GrantRow] = [
        {
            "subscription": name,
            "sub_paused_at": sub_paused_at,
            "expires_at": expires_at,
            "paused_at": None,
            "grant_key": key_row["key"],
        }
        for name, sub_paused_at, expires_at in redeemed.grants
    ]
    entries, _ = running_grants(grants, app, now)
    return Login(user_id, username, info(username, now, entries, client, client.hwid or "", now))


async def register(
    db: Database,
    passwords: Passwords,
    box: SecretBox,
    app: ClientApp,
    client: Client,
    *,
    key: str,
    username: str,
    password: str,
    email: str | None,
    msg: Messages,
    now: int,
    hint: frozenset[str] | None = None,
) -> Login:
    """Register a user with an unused key. `hint`: which of the first use's events the worker's
    cache says the application's endpoints want (`events.first_use_cache`; None: not known)."""
    username = user_rules.check_new_username(app, username, msg)
    if email is not None:
        user_rules.check_email(email)
    check_hwid(app, client.hwid, msg)
    await check_blacklist(db, app, client, msg)
    # The key first: without a usable key nobody learns whether a username is taken.
    key_row, _ = await _usable_key(db, app, key, msg)
    if key_row["status"] != "unused":
        raise errorcodes.KEY_USED(msg("keyused"))
    if await _user_rows(db, app, username):
        raise errorcodes.USERNAME_TAKEN(msg("usernametaken"))
    password_hash = await passwords.hash(password, queue=app.id)  # slow by design: before the transaction
    new_user = NewUser(username, password_hash, email, created_by="register")
    return await _redeem_into_new_user(db, box, app, key_row, client, new_user, hint=hint, msg=msg, now=now)


async def license_login(
    db: Database,
    box: SecretBox,
    app: ClientApp,
    client: Client,
    *,
    key: str,
    otp_code: str | None,
    msg: Messages,
    now: int,
    held: Held[KnownLogin] | None = None,
    first_use_wants: AppCache[frozenset[str]] | None = None,
    used_keys: UsedKeys | None = None,
) -> Login:
    """A key is its own account: its first use creates the user named by the key, with the key's
    subscriptions; later uses log that user in. The key is a long random secret, so it is looked
    up by its index, never checked through a slow hash. `held`: the session as this worker
    holds it (`domain.recheck`, its versions just confirmed): a re-check of the login it
    remembers decides on what it holds, without reading the key, the user or the blacklist.
    `first_use_wants`: the worker's cache of the first use's events the application's endpoints
    want (`events.first_use_cache`), which picks the first use's path. `used_keys`: the keys this
    worker saw used, which take the plain read instead of the first use's statement."""
    check_hwid(app, client.hwid, msg)
    known = None if held is None else held.login
    if known is not None and (known.key, known.hwid, known.ip) == (key, client.hwid, client.ip):
        _refuse_banned(known.key_row, msg)
        return await admit(
            db,
            box,
            app,
            known.account,
            client,
            credential=key,
            otp_code=otp_code,
            msg=msg,
            now=now,
            blacklist_checked=True,
        )
    read: tuple[KeyUserRow, Account | None, bool] | None = None
    hint: frozenset[str] | None = None
    # The hint picks between PostgreSQL's two paths; SQLite has one, so it neither asks nor keeps.
    used = used_keys if db.dialect == "postgresql" else None
    seen_used = used is not None and (app.id, key) in used
    if db.dialect == "postgresql" and client.recorded is None and not seen_used:
        # A session's first login (a program starting, a key's first use): the key is read, and
        # used when it is unused, in one statement, which asks the blacklist too.
        hint = None if first_use_wants is None else await first_use_wants.get(db, app.id)
        if _in_one_statement(db, client, hint):
            try:
                tried = await _key_or_first_use(db, box, app, client, key=key, msg=msg, now=now)
            except Refusal as refused:
                if refused.error != "key_used":
                    raise
                tried = None  # redeemed meanwhile: read again below, and log its user in
            if isinstance(tried, Login):
                if used is not None:
                    used.add(app.id, key)
                return tried
            read = tried
    key_row, account = read[:2] if read is not None else await _usable_key(db, app, key, msg)
    if used is not None and key_row["status"] != "unused" and not seen_used:
        used.add(app.id, key)
    blacklisted = None if read is None else read[2]
    if key_row["status"] == "unused":
        if read is not None:  # unused, and nothing written: an endpoint wants the first use's events
            hint = frozenset(events.FIRST_USE)
        elif hint is None and first_use_wants is not None:
            hint = await first_use_wants.get(db, app.id)
        if blacklisted is None and not _in_one_statement(db, client, hint):  # else that statement asks
            await check_blacklist(db, app, client, msg)
        try:
            return await _first_use(db, box, app, key_row, client, key=key, hint=hint, msg=msg, now=now)
        except Refusal as refused:
            if refused.error != "key_used":
                raise
            # Redeemed meanwhile (by this device, a double click or a retry while the first
            # login was in flight, or by another): decided as if it came just after, as a login
            # of the user that redemption made, counted against its HWIDs and seats like any.
            key_row, account = await _usable_key(db, app, key, msg)
            if account is None:
                raise
    if account is None:  # used, but its user has been deleted since
        raise errorcodes.KEY_USED(msg("keyused"))
    login = await admit(
        db,
        box,
        app,
        account,
        client,
        credential=key,
        otp_code=otp_code,
        msg=msg,
        now=now,
        blacklisted=blacklisted,
    )
    if held is not None and _repeatable(app, account, held):
        held.login = KnownLogin(key, client.hwid, client.ip, key_row, account)
    return login


def _repeatable(app: ClientApp, account: Account, held: Held[KnownLogin]) -> bool:
    """Whether a re-check of this login may decide on what was read for it: not where a login
    writes every time (seats, heartbeats, one-time codes), and only for the session's own user."""
    user = account.user
    return (
        not app.seats
        and app.heartbeat_interval == 0
        and not user["otp_enabled"]
        and user["user_id"] == held.session.user_id
    )


async def _first_use(
    db: Database,
    box: SecretBox,
    app: ClientApp,
    key_row: KeyUserRow,
    client: Client,
    *,
    key: str,
    hint: frozenset[str] | None,
    msg: Messages,
    now: int,
) -> Login:
    """The first use of an unused key: the user it makes, logged in (refused `key_used` when
    another request redeemed it first). On PostgreSQL one statement, unless an endpoint of the
    application wants the first use's events or `user.logged_in` (that statement writes none):
    the transaction does."""
    if _in_one_statement(db, client, hint):
        tried = await _key_or_first_use(db, box, app, client, key=key, msg=msg, now=now)
        if isinstance(tried, Login):
            return tried
        if tried[0]["status"] != "unused":  # redeemed since it was read
            raise errorcodes.KEY_USED(msg("keyused"))
        hint = frozenset(events.FIRST_USE)  # an endpoint wants them after all
    new_user = NewUser(username=key, password_hash=None, email=None, created_by=LICENSE_USER)
    return await _redeem_into_new_user(db, box, app, key_row, client, new_user, hint=hint, msg=msg, now=now)


def _in_one_statement(db: Executor, client: Client, hint: frozenset[str] | None) -> bool:
    """Whether a first use tries the one statement (which also asks the blacklist): on PostgreSQL,
    unless an endpoint wants `user.logged_in` or (as far as the worker knows) the first use's
    events."""
    return (
        db.dialect == "postgresql"
        and not client.report_login
        and (hint is None or hint.isdisjoint(events.FIRST_USE))
    )


async def _key_or_first_use(
    db: Database,
    box: SecretBox,
    app: ClientApp,
    client: Client,
    *,
    key: str,
    msg: Messages,
    now: int,
) -> Login | tuple[KeyUserRow, Account | None, bool]:
    """The key read and, when it is unused, its first use (`_redeem_into_new_user`'s writes,
    decided by the same conditions) in one round trip on PostgreSQL (see
    `store.logins.key_or_first_use`). The login it made; else the key, its user and whether the
    blacklist refuses the client, as `_usable_key` finds them (the key unused only when an
    endpoint wants the first use's events: nothing was written). Refused as a first use would be
    (`blacklisted`, `no_subscription_for_level`; `key_used` when another request redeemed the
    key meanwhile or a user has its name)."""
    token_hash, token_sealed = tokens.new(box)
    details = session_store.login_record(0, key, client.hwid, client.details)[3:]
    asked = blacklists.probe([client.hwid] if client.hwid else [], client.ip)
    try:
        rows = await store.key_or_first_use(
            db,
            app_id=app.id,
            key=key,
            key_fold=user_rules.fold(key),
            created_by=LICENSE_USER,
            token_hash=token_hash,
            token_sealed=token_sealed,
            hwid=client.hwid,
            max_hwids=app.max_hwids,
            session_id=client.session_id,
            details=details,
            ip=client.ip,
            now=now,
            events=_FIRST_USE_EVENTS,
            blacklist_hwids=asked.hwids,
            blacklist_ip=asked.ip,
            blacklist_ranges=asked.ranges,
        )
    except UniqueViolation:  # a user already has the key's name: nothing was written
        raise errorcodes.KEY_USED(msg("keyused")) from None
    if not rows:
        raise errorcodes.KEY_NOT_FOUND(msg("keynotfound"))
    row = rows[0]
    _refuse_banned(row, msg)
    made = row["made_user_id"]
    if made is not None:
        grants = cast(
            "list[GrantRow]",
            [{**grant, "grant_key": key} for grant in orjson.loads(row["made_grants"] or "[]")],
        )
        entries, _ = running_grants(grants, app, now)
        return Login(made, key, info(key, now, entries, client, client.hwid or "", now))
    if row["status"] == "unused":
        if row["blacklisted"]:  # decided first, as when the blacklist was asked before the first use
            raise errorcodes.BLACKLISTED(msg("hwidblacked"))
        if row["no_subscription"]:
            raise errorcodes.NO_SUBSCRIPTION_FOR_LEVEL(msg("nosublevel"))
        if not row["events_wanted"]:
            raise errorcodes.KEY_USED(msg("keyused"))
    return row, account_of(rows), bool(row["blacklisted"])


_FIRST_USE_EVENTS = tuple(events.with_opt_in(events.FIRST_USE))


# --- Upgrade Access ---------------------------------------------------------------------------


async def upgrade(
    db: Database, app: ClientApp, *, username: str, key: str, msg: Messages, now: int
) -> list[str]:
    """Redeem an unused key onto an existing user: every subscription of the key's level is
    granted, a running grant of it lengthened by the key's duration. Returns their names."""
    key_row, _ = await _usable_key(db, app, key, msg)
    account = account_of(await _user_rows(db, app, username))
    if account is None:
        raise errorcodes.USER_NOT_FOUND(msg("usernamenotfound"))
    user = account.user
    if key_row["status"] != "unused":
        raise errorcodes.KEY_USED(msg("keyused"))
    if user["user_banned"] is not None:
        raise errorcodes.USER_BANNED(msg("userbanned", reason=user["user_banned"]))
    async with db.transaction() as tx:
        used = await license_store.mark_used(
            tx, app.id, key_row["id"], user_id=user["user_id"], username=user["username"], now=now
        )
        if used is None:
            raise errorcodes.KEY_USED(msg("keyused"))
        subs = await subscription_store.for_level(tx, app.id, used["level"])
        if not subs:
            raise errorcodes.NO_SUBSCRIPTION_FOR_LEVEL(msg("nosublevel"))
        key_data = events.key_ref(key, id=key_row["id"], level=used["level"])
        user_data = events.user_ref(user["user_id"], user["username"], user["created_by"])
        await events.record(
            tx, app.id, "key.redeemed", now, {"key": key_data, "user": user_data}, license_key=key
        )
        for sub in subs:
            extended = await store.extend_running_grant(tx, user["user_id"], sub["id"], used["duration"], now)
            if not extended:
                start = now if sub["paused_at"] is None else sub["paused_at"]
                await license_store.insert_grant(
                    tx,
                    user_id=user["user_id"],
                    subscription_id=sub["id"],
                    expires_at=start + used["duration"],
                    key_id=key_row["id"],
                    now=now,
                )
            await events.granted_by_key(
                tx,
                app.id,
                now,
                extended=bool(extended),
                user=user_data,
                subscription=sub["name"],
                seconds=used["duration"],
                key=key,
                key_data=key_data,
            )
    return [sub["name"] for sub in subs]
