"""The customer panel: an application's end users sign in with their username and password (the
client API's rules: argon2id, the lock-out after wrong passwords in a row, bans, two-factor
codes), see their subscriptions, reset their HWID within the application's cooldown, and hand the
web loader a token.

A panel session is a random token (256 bits) in the browser; only its SHA-256 is stored. The
web-loader token (KeyAuth printed a static MD5 of the user's password hash into the page) is
random (192 bits), issued on request, held by one panel session (a new one replaces it; signing
out or the session ending drops it), stored as its SHA-256, valid `HANDOFF_SECONDS`, and
consumed by the first client login that presents it (`consume_handoff`, one conditional UPDATE).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Any

from licensegate import ids
from licensegate.domain import apps, audit, errorcodes, lockout, logins, passwordcheck
from licensegate.domain.apps import ClientApp
from licensegate.domain.messages import Messages
from licensegate.passwords import Passwords
from licensegate.secretbox import SecretBox
from licensegate.store import panel as store
from licensegate.store import sessions as session_store
from licensegate.store.database import Database, Executor
from licensegate.store.users import LICENSE_USER

LIFETIME = 8 * 3600  # a panel session's absolute limit
IDLE = 30 * 60  # ... and how long it lasts without a request
TOUCH_INTERVAL = 60  # seconds between `last_seen_at` writes of one session
HANDOFF_SECONDS = 120  # how long a web-loader token may wait for the loader's login
SESSION_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")
HANDOFF_TOKEN = re.compile(r"[A-Za-z0-9_-]{32}")
MAX_USERNAME = 64
MAX_PASSWORD = 256


@dataclass(frozen=True, slots=True)
class Panel:
    """An application whose customer panel is on."""

    client: ClientApp
    download: str | None  # the web loader's download link
    cooldown: int  # the application's HWID-reset cooldown, seconds

    @property
    def id(self) -> int:
        return self.client.id

    @property
    def name(self) -> str:
        return self.client.name


@dataclass(frozen=True, slots=True)
class PanelSession:
    id: int
    user_id: int
    username: str
    cooldown: int  # this user's HWID-reset cooldown (their own, or the application's)
    hwid_reset_at: int | None
    expires_at: int

    def next_reset(self) -> int:
        """When the user may next reset their HWID (Unix seconds; 0: now)."""
        return 0 if self.hwid_reset_at is None else self.hwid_reset_at + self.cooldown


async def open_panel(db: Executor, app_id: int) -> Panel | None:
    """The application's panel, or None when it has none (unknown, or its panel is off)."""
    row = await apps.get(db, app_id)
    if row is None or not row["customer_panel"]:
        return None
    return Panel(await apps.client_app(db, app_id), row["web_loader_download"], row["hwid_reset_cooldown"])


def remaining_text(seconds: int) -> str:
    """A wait as a person says it, in its two largest units, rounded up: '6 days 23 hours',
    '43 minutes 20 seconds', '7 days' (for a second less than 7 days)."""
    units = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))
    seconds = max(seconds, 1)
    first = next(index for index, (_name, size) in enumerate(units) if seconds >= size)
    step = units[min(first + 1, len(units) - 1)][1]
    seconds = -(-seconds // step) * step
    parts: list[str] = []
    for name, size in units:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {name}{'' if count == 1 else 's'}")
    return " ".join(parts[:2])


# --- signing in -----------------------------------------------------------------------------------


async def sign_in(
    db: Database,
    passwords: Passwords,
    box: SecretBox,
    panel: Panel,
    *,
    username: str,
    password: str,
    otp_code: str | None,
    ip: str,
    user_agent: str | None,
    msg: Messages,
    guard: lockout.Guard,
    now: int,
) -> str:
    """Check the user's password (as the client API's Login does, lock-out included) and, when it
    is right, start a panel session: its token."""
    if not username or not password:
        raise errorcodes.INVALID_CREDENTIALS(msg("invalidcredentials"))
    account = await logins.find_account(db, panel.client, username[:MAX_USERNAME])
    refused = errorcodes.INVALID_CREDENTIALS(msg("invalidcredentials"))
    if account is None:
        await guard.refuse_unknown(panel.id, username, msg)
        await passwords.verify(passwords.dummy_hash, password, queue=panel.id)
        await guard.unknown_failed(panel.id, username)
        raise refused
    user = account.user
    await guard.refuse_locked(user, False, ip, msg, now)
    stored = user["password_hash"]
    if stored is None or user["created_by"] == LICENSE_USER:
        # No password yet (the program's first Login sets it) or a key's user: nothing to check.
        await passwords.verify(passwords.dummy_hash, password, queue=panel.id)
        raise refused
    if not await passwordcheck.matches(
        db, passwords, user["user_id"], stored, password[:MAX_PASSWORD], queue=panel.id
    ):
        await guard.failed(db, user, now)
        raise refused
    await guard.succeeded(db, user)
    if user["user_banned"] is not None:
        raise errorcodes.USER_BANNED(msg("userbanned", reason=user["user_banned"]))
    if user["otp_enabled"]:
        await logins.consume_otp(db, box, user["user_id"], user["otp_secret"], otp_code, msg, now)
    token = secrets.token_urlsafe(32)
    await store.insert(
        db,
        app_id=panel.id,
        user_id=user["user_id"],
        token_hash=ids.digest(token),
        ip=ip,
        user_agent=(user_agent or "")[:256] or None,
        now=now,
        expires_at=now + LIFETIME,
    )
    await _record(db, panel.id, user["username"], "panelsignin", ip, now)
    return token


async def _record(db: Database, app_id: int, username: str, action: str, ip: str | None, now: int) -> None:
    """What a user did in the customer panel, in the audit log: the dashboard shows it there and
    on the user's timeline (an audit entry whose target is the user)."""
    entry = audit.Entry(
        app_id=app_id,
        account_id=None,
        actor=f"{username} (customer panel)",
        action=action,
        target=f"user:{username}",
        before=None,
        after=None,
        ip=ip,
        created_at=now,
    )
    await audit.append(db, entry)


async def resume(db: Executor, panel: Panel, token: str, now: int) -> PanelSession | None:
    """The live session of this panel the token opens, or None (unknown, ended, expired, idle too
    long, or its user banned; such a session is deleted)."""
    if not SESSION_TOKEN.fullmatch(token):
        return None
    row = await store.find(db, panel.id, ids.digest(token))
    if row is None:
        return None
    if row["expires_at"] <= now or now - row["last_seen_at"] >= IDLE or row["banned_reason"] is not None:
        await store.delete(db, row["session_id"])
        return None
    if now - row["last_seen_at"] >= TOUCH_INTERVAL:
        await store.touch(db, row["session_id"], now)
    cooldown = row["hwid_cooldown"] if row["hwid_cooldown"] is not None else panel.cooldown
    return PanelSession(
        row["session_id"], row["user_id"], row["username"], cooldown, row["hwid_reset_at"], row["expires_at"]
    )


async def end(db: Executor, session: PanelSession) -> None:
    await store.delete(db, session.id)


async def purge_expired(db: Executor, now: int) -> int:
    return await store.purge_expired(db, now, now - IDLE)


# --- what the panel shows -----------------------------------------------------------------------


async def subscriptions(
    db: Executor, panel: Panel, username: str, now: int
) -> tuple[list[dict[str, Any]], int]:
    """The user's running subscriptions (as a login lists them) and how many HWIDs they hold."""
    account = await logins.find_account(db, panel.client, username)
    if account is None:
        return [], 0
    entries, _frozen = logins.running_grants(account.grants, panel.client, now)
    return entries, len(account.hwids)


async def reset_hwid(db: Database, panel: Panel, session: PanelSession, ip: str | None, now: int) -> int:
    """Forget the user's HWIDs (their next login records the machine it comes from) and end their
    client sessions, as the seller's reset does, once the cooldown since their last reset has
    passed: how many were forgotten (in the audit log too)."""
    async with db.transaction() as tx:
        if not await store.try_reset_hwids(tx, session.user_id, now, now - session.cooldown):
            wait = max(session.next_reset() - now, 1)
            raise errorcodes.HWID_RESET_COOLDOWN(remaining=remaining_text(wait))
        await session_store.end_for_user(tx, session.user_id)
        forgotten = await store.delete_hwids(tx, session.user_id)
    await _record(db, panel.id, session.username, "panelresethwid", ip, now)
    return forgotten


# --- the web loader's token -------------------------------------------------------------------------


async def issue_handoff(db: Executor, session: PanelSession, now: int) -> str:
    """A new web-loader token for this session (the one before it stops working)."""
    token = secrets.token_urlsafe(24)
    await store.set_handoff(db, session.id, ids.digest(token), now + HANDOFF_SECONDS)
    return token


async def consume_handoff(db: Executor, app_id: int, token: str, now: int) -> int | None:
    """The user a web-loader token was issued to, using it up; None for a token that is unknown,
    expired, used already or whose panel session ended."""
    if not HANDOFF_TOKEN.fullmatch(token):
        return None
    return await store.consume_handoff(db, app_id, ids.digest(token), now, now - IDLE)


async def login_with_handoff(
    db: Database,
    box: SecretBox,
    app: ClientApp,
    client: logins.Client,
    *,
    username: str,
    token: str,
    msg: Messages,
    now: int,
) -> logins.Login:
    """The client API's Login with the web loader's `token` in place of the password: the token is
    used up whatever happens next, and must have been issued to this user; then the rules of every
    login (ban, blacklist, HWID, subscriptions). The panel checked the two-factor code when the
    user signed in to it."""
    logins.check_hwid(app, client.hwid, msg)
    user_id = await consume_handoff(db, app.id, token, now)
    account = None if user_id is None else await logins.find_account(db, app, username)
    if account is None or account.user["user_id"] != user_id:
        raise errorcodes.LOADER_TOKEN_INVALID()
    return await logins.admit(
        db,
        box,
        app,
        account,
        client,
        credential=account.user["username"],
        otp_code=None,
        otp_checked=True,
        msg=msg,
        now=now,
    )
