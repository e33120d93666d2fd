"""Client sessions. `init` opens one (after the application's gatekeeping), a login validates it,
`logout` ends it; the application owner lists, counts and ends them. A session id is 128 bits
from the CSPRNG; a session lives the application's session length from its start, however
active it is. An unexpired session with `validated` 1 is a user online."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from licensegate import ids
from licensegate.domain import apps, errorcodes, events
from licensegate.domain import users as user_rules
from licensegate.domain.apps import ClientApp
from licensegate.domain.blacklists import parse_ip
from licensegate.domain.errors import Refusal
from licensegate.domain.messages import Messages
from licensegate.domain.openedapps import OpenedApps
from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.store import hashes as hash_store
from licensegate.store import sessions as store
from licensegate.store import tamper as tamper_store
from licensegate.store import users as user_store
from licensegate.store.database import Database, Executor
from licensegate.store.loginversions import Versions
from licensegate.store.sessions import ListedSession as ListedSession  # the rows it lists
from licensegate.store.sessions import LoginRecord
from licensegate.store.users import LICENSE_USER

ONLINE_LIMIT = 1000  # fetchOnline lists at most this many users

ENCKEY = "sessions.enckey"  # the purpose a session's enckey is sealed for (secretbox)


@dataclass(frozen=True, slots=True)
class ClientSession:
    id: str  # the digest of the id the client holds: what the database keys the session by
    user_id: int | None
    credential: str | None
    validated: bool
    expires_at: int
    recorded: LoginRecord | None = None  # what its login recorded
    enckey: str | None = None  # API 1.2 / legacy 1.0: the key the client sent at init, sealed
    beat_state: str | None = None  # what its last login or heartbeat answered (domain.heartbeats)
    # The login versions of its application, user and itself it was read at (None: no user),
    # which domain/recheck.py holds it by.
    versions: Versions | None = None


Found = Callable[[ClientApp], Awaitable[None]]
MessagesOf = Callable[[int], Awaitable[Messages]]  # an application's messages, by its id


async def _nothing(_app: ClientApp) -> None:
    return None


async def _default_messages(_app_id: int) -> Messages:
    return Messages({})


async def _gone(db: Executor, digest: str, ownerid: str, name: str | None, messages: MessagesOf) -> Refusal:
    """`session_not_found`, saying why when a ban or a pause ended the session: the program's
    next call (a heartbeat, a check) learns it, with the application's message and the ban's
    reason. Asked only once the session is missing, so a live session's call never pays for it."""
    row = await store.ended(db, digest)
    if row is None or row["ownerid"] != ownerid or (name is not None and row["app_name"] != name):
        return errorcodes.SESSION_GONE()
    msg = await messages(row["app_id"])
    reason = row["reason"]
    if reason == store.PAUSED:
        return errorcodes.SESSION_GONE(msg("pausedsub"), extra={"ended": store.PAUSED})
    detail = row["detail"] or ""
    message = msg("keybanned" if reason == store.KEY_BANNED else "userbanned", reason=detail)
    return errorcodes.SESSION_GONE(message, extra={"ended": store.BANNED, "reason": detail})


async def identify(
    db: Executor,
    *,
    ownerid: str,
    name: str | None,
    session_id: str | None,
    now: int,
    found: Found = _nothing,
    messages: MessagesOf = _default_messages,
    opened: OpenedApps | None = None,
) -> tuple[ClientApp, ClientSession | None]:
    """The application a client call belongs to and, unless `session_id` is None (the operation
    needs none), its live session. `found` hears of the application as soon as it is known, even
    when the call is then refused (its answer is signed with the application's key).

    With a session the application comes from the session's own row (one query for both); the
    ownerid (and name, when sent) must be that session's application's. A session a ban or a
    pause ended is refused with why, in the application's `messages`. Without a session (`init`)
    the application may be one `opened` holds (see `domain.openedapps`).
    """
    if not ownerid:
        raise errorcodes.MISSING_OWNERID()
    if session_id is None:
        app = await (
            apps.find_for_client(db, ownerid, name) if opened is None else opened.find(db, ownerid, name)
        )
        await found(app)
        return app, None
    digest = ids.digest(session_id[:128])
    row = await store.find_with_app(db, digest) if session_id else None
    if row is None or row["ownerid"] != ownerid or (name is not None and row["app_name"] != name):
        if name is not None:
            await found(await apps.find_for_client(db, ownerid, name))  # an unknown application is 401
        if not session_id:
            raise errorcodes.MISSING_SESSION()
        if row is not None:
            raise errorcodes.SESSION_GONE()
        raise await _gone(db, digest, ownerid, name, messages)
    app = ClientApp.from_row(row)
    await found(app)
    user_version = row["user_login_version"]
    session = ClientSession(
        id=row["session_id"],
        user_id=row["user_id"],
        credential=row["credential"],
        validated=bool(row["validated"]),
        expires_at=row["session_expires_at"],
        recorded=store.recorded_login(row),
        enckey=row["session_enckey"],
        beat_state=row["session_beat_state"],
        versions=None
        if user_version is None
        else (row["app_login_version"], user_version, row["session_login_version"]),
    )
    check_unexpired(session, now)
    return app, session


def check_unexpired(session: ClientSession, now: int) -> None:
    """A session lives its application's session length from its start."""
    if session.expires_at <= now:
        raise errorcodes.SESSION_EXPIRED()


async def start(
    db: Executor,
    app: ClientApp,
    *,
    ip: str,
    version: str | None,
    program_hash: str | None,
    messages: Callable[[], Awaitable[Messages]],
    now: int,
    enckey: str | None = None,
    opened: OpenedApps | None = None,
) -> str:
    """Open a session; `enckey` (sealed) is an API 1.2 or legacy 1.0 client's half of its key.
    `opened`: the worker's held applications, `app` perhaps one of them; then the session is
    written only while the application is as held, and a refusal is answered only once the
    application is confirmed unchanged (else `StaleApp`: the call runs again)."""
    if app.paused or (version is not None and version != app.version) or app.hash_check:
        refusal = await _refusal(db, app, version, program_hash, messages)
        if refusal is not None:
            if opened is not None:
                await opened.confirm_refusal(db, app)
            if errorcodes.HASH_MISMATCH.refuses(refusal):
                await tamper_store.insert(
                    db,
                    app.id,
                    user_id=None,
                    credential=None,
                    hwid=None,
                    ip=ip,
                    reason="program hash mismatch",
                    details=f"hash sent: {program_hash or '(none)'}",
                    now=now,
                )
            raise refusal
    session_id = ids.session_id()
    held = None if opened is None else opened.version_of(app)
    started = await store.start(
        db,
        session_id=ids.digest(session_id),  # the database never holds a usable session id
        app_id=app.id,
        ip=ip,
        now=now,
        expires_at=now + app.session_seconds,
        enckey=enckey,
        app_version=held,
    )
    if not started:
        assert opened is not None
        raise opened.stale(app)
    return session_id


async def _refusal(
    db: Executor,
    app: ClientApp,
    version: str | None,
    program_hash: str | None,
    messages: Callable[[], Awaitable[Messages]],
) -> Refusal | None:
    """Why `init` is refused: a paused application, another version of the program, or (hash
    checking on) a program file whose hash is not one of the application's."""
    if app.paused:
        return errorcodes.APP_PAUSED((await messages())("pausedApp"))
    if version is not None and version != app.version:
        return errorcodes.VERSION_MISMATCH(extra={"download": app.download_link or ""})
    if not app.hash_check or (
        program_hash is not None and await hash_store.contains(db, app.id, program_hash)
    ):
        return None
    return errorcodes.HASH_MISMATCH((await messages())("hashcheckfail"))


async def online(db: Executor, app: ClientApp, now: int) -> list[dict[str, str]]:
    """The usernames of the users online, never key material: a user whose name is a license key
    (every user a License Login made) is left out, not masked."""
    return [{"credential": name} for name in await online_names(db, app.id, now)]


async def end(db: Executor, session_id: str) -> None:
    await store.end(db, session_id)


# --- the application owner's view ------------------------------------------------------------


async def list_page(
    db: Executor, app_id: int, *, now: int, include_expired: bool, limit: int, offset: int
) -> tuple[list[ListedSession], int]:
    """One page of sessions, newest first, and the total number (unexpired only, unless
    `include_expired`)."""
    rows = await store.list_page(
        db, app_id, now=now, include_expired=include_expired, limit=limit, offset=offset
    )
    return rows, await store.count(db, app_id, now=now, include_expired=include_expired)


async def count_live(db: Executor, app_id: int, now: int) -> tuple[int, int]:
    """(unexpired sessions, of which validated: the users online)."""
    return await store.count_live(db, app_id, now)


async def kill(db: Database, app_id: int, session_id: str, now: int) -> dict[str, Any]:
    """End one session, named by the id its client holds or by the digest the listing shows;
    returns what it was (credential, ip, validated)."""
    async with db.transaction() as tx:
        row = await store.delete(tx, app_id, session_id, ids.digest(session_id))
        if row is None:
            raise errorcodes.SESSION_NOT_FOUND()
        user = None if row["user_id"] is None else await user_store.find_by_id(tx, app_id, row["user_id"])
        credential = events.credential_shown(row["credential"], user)
        await events.record(
            tx,
            app_id,
            "session.ended",
            now,
            {"credential": credential, "ip": row["ip"], "count": 1, "reason": "seller"},
        )
    return {"credential": row["credential"], "ip": row["ip"], "validated": 1 if row["validated"] else 0}


async def kill_all(db: Database, app_id: int, now: int) -> int:
    report = await events.sessions_ended(db, app_id, "seller", now)
    return await store.delete_all(db, app_id, report=report)


async def kill_by_ip(db: Database, app_id: int, ip: str, now: int) -> tuple[str, int]:
    """End every session from this address (compared in canonical form); returns the canonical
    address and how many sessions ended."""
    canonical = parse_ip(ip)
    report = await events.sessions_ended(db, app_id, "seller", now, ip=canonical)
    return canonical, await store.delete_by_ip(db, app_id, canonical, report=report)


USER_SESSIONS_SHOWN = 100


async def of_user(db: Executor, app_id: int, user_id: int, now: int) -> list[dict[str, Any]]:
    """The user's open sessions, newest first (at most USER_SESSIONS_SHOWN)."""
    rows = await store.of_user(db, app_id, user_id, now, USER_SESSIONS_SHOWN)
    return [dict(row) for row in rows]


# --- the dashboard's Sessions page ------------------------------------------------------------

KEY_SHOWN = 4  # the last characters of a license key a list shows


def mask_key(key: str) -> str:
    """A license key as a list shows it: its last few characters only."""
    return "•" * 6 + key[-KEY_SHOWN:] if len(key) > 2 * KEY_SHOWN else "•" * 6


async def browse(
    db: Executor,
    app_id: int,
    *,
    now: int,
    state: str,
    username: str | None,
    ip: str | None,
    request: PageRequest,
) -> Page:
    """One keyset page of the application's sessions, newest first by default. `state`: '' (open),
    'online' (open and logged in), 'waiting' (open, not logged in), 'all' (expired ones too). Each
    row names its user and shows its credential masked when it is key material (a license key,
    or the name of a user a License Login made)."""
    user_id: int | None = None
    if username is not None:
        user = await user_rules.find_named(db, app_id, username)
        if user is None:
            return Page([], has_previous=False, has_next=False)
        user_id = user["id"]
    canonical = None if ip is None else parse_ip(ip)
    rows = await store.browse(
        db,
        app_id,
        now=now,
        live=state != "all",
        validated={"online": True, "waiting": False}.get(state),
        user_id=user_id,
        ip=canonical,
        request=request,
    )
    page = finish([dict(row) for row in rows], request)
    users = {
        row["id"]: row
        for row in await store.users_named(db, sorted({r["user_id"] for r in page.rows if r["user_id"]}))
    }
    keys = await store.keys_among(db, app_id, sorted({r["credential"] for r in page.rows if r["credential"]}))
    for row in page.rows:
        holder = users.get(row["user_id"])
        row["username"] = None
        credential = row.pop("credential")
        key_user = holder is not None and (holder["created_by"] == LICENSE_USER or holder["username"] in keys)
        if holder is not None and not key_user:
            row["username"] = holder["username"]
        if credential is None:
            row["credential"], row["masked"] = None, False
        elif credential in keys or key_user or (holder is not None and credential != holder["username"]):
            row["credential"], row["masked"] = mask_key(credential), True
        else:
            row["credential"], row["masked"] = credential, False
        row["live"] = row["expires_at"] > now
    return page


async def online_names(db: Executor, app_id: int, now: int) -> list[str]:
    """The names of the users online (a user named by a license key is left out)."""
    return await store.online_usernames(db, app_id, now, ONLINE_LIMIT)


async def open_ids_of(db: Executor, app_id: int, username: str, now: int) -> list[str] | None:
    """The ids of the unexpired sessions of the user `username` names (by the application's rule
    for names, as a client login finds them; None: no such user)."""
    user = await user_rules.find_named(db, app_id, username)
    if user is None:
        return None
    return await store.open_ids_of_user(db, app_id, user["id"], now)
