"""Client API — authentication and licensing: register, Login, License Login, Upgrade Access."""

from __future__ import annotations

from typing import Any, Literal

from licensegate.domain import errorcodes, events, lockout, logins, panel
from licensegate.domain.errors import Refusal
from licensegate.domain.messages import Messages
from licensegate.operations.client import credits, entitlements, heartbeats
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

AUTH = "Authentication"
USERNAME = Param("username", required=True, max_length=64, doc="the username")
PASSWORD = Param("pass", required=True, max_length=256, strip=False, secret=True, doc="the password")
KEY = Param("key", required=True, max_length=128, secret=True, doc="the license key")
HWID = Param("hwid", max_length=256, doc="the machine's hardware id")
CODE = Param("code", max_length=16, doc="the current two-factor code, when the user turned them on")
LOGIN_PASSWORD = Param(
    "pass",
    max_length=256,
    strip=False,
    secret=True,
    doc="the password; required unless `token` is the web loader's token",
)
TOKEN = Param(
    "token",
    max_length=128,
    secret=True,
    doc="without `pass`: the web loader's one-time token from the customer panel (see docs/clients.md); "
    "with `pass`: recorded with the session",
)
CLIENT_DETAILS = (
    TOKEN,
    Param("os", max_length=64, doc="recorded with the session"),
    Param("architecture", max_length=32, doc="recorded with the session"),
    Param("device", max_length=128, doc="recorded with the session"),
    Param("cpu_cores", max_length=16, doc="recorded with the session"),
    Param("ram", max_length=32, doc="recorded with the session"),
    Param("version", max_length=32, doc="the client program's version; recorded with the session"),
)
CLIENT_DETAIL_NAMES = tuple(param.name for param in CLIENT_DETAILS)
INFO = (
    "the user: {username, subscriptions: [{subscription, key, expiry (Unix seconds, string), "
    "timeleft (integer, seconds)}], ip, hwid, createdate (YYYY-MM-DD HH:MM:SS, UTC), lastlogin "
    "(Unix seconds, string)}"
)


async def _client(call: ClientCall, *, token_is_credential: bool = False) -> logins.Client:
    details = call.args.texts(CLIENT_DETAIL_NAMES)
    if token_is_credential:
        details.pop("token", None)  # a secret, even used up: never recorded
    # Cached per worker (events.login_cache): an application without such an endpoint asks nothing.
    kept = call.services.event_wants.kept(call.app.id)
    wants = kept[1] if kept is not None else await call.services.event_wants.get(call.db, call.app.id)
    return logins.Client(
        session_id=call.live_session.id,
        ip=call.ip,
        hwid=call.args.opt_text("hwid"),
        details=details,
        recorded=call.live_session.recorded,
        report_login="user.logged_in" in wants,
    )


async def _attempt(call: ClientCall) -> tuple[str, Messages]:
    """The username tried, once the stricter limit on attempts at it from this address allows the
    attempt, and the application's messages for the answer."""
    username = call.args.text("username")
    await call.limit_attempts(username)
    return username, await call.messages()


def _count(call: ClientCall, outcome: str) -> None:
    """Count a login's outcome for the overview (in the worker's memory: no database work)."""
    call.services.logins.count(call.app.id, call.now(), outcome)


async def _with_password(call: ClientCall, way: Literal["register", "login"]) -> dict[str, Any]:
    """register and Login: the same attempt at a username and password, into a new or an existing
    user."""
    username, msg = await _attempt(call)
    try:
        return await _sign_in(call, way, username, msg)
    except Refusal as refusal:
        await call.failed_attempt()
        await _refused(call, refusal, username)
        raise


async def _sign_in(
    call: ClientCall, way: Literal["register", "login"], username: str, msg: Messages
) -> dict[str, Any]:
    if way == "login" and call.args.opt_text("pass") is None:
        token = call.args.opt_text("token")
        if token is None:
            raise errorcodes.MISSING_PARAMETER(name="pass", param="pass")
        login = await panel.login_with_handoff(
            call.db,
            call.services.secrets,
            call.app,
            await _client(call, token_is_credential=True),
            username=username,
            token=token,
            msg=msg,
            now=call.now(),
        )
        return await _answer(call, msg, login)
    who = (call.db, call.services.passwords, call.services.secrets, call.app, await _client(call))
    password = call.args.text("pass")
    if way == "register":
        key, email = call.args.text("key"), call.args.opt_text("email")
        hint = await call.services.first_use_wants.get(call.db, call.app.id)
        login = await logins.register(
            *who,
            username=username,
            password=password,
            key=key,
            email=email,
            msg=msg,
            now=call.now(),
            hint=hint,
        )
    else:
        code = call.args.opt_text("code")
        guard = lockout.Guard(lockout.Policy.of(call.services.settings), call.services.limiter)
        login = await logins.login(
            *who, username=username, password=password, otp_code=code, msg=msg, now=call.now(), guard=guard
        )
    return await _answer(call, msg, login)


async def _report(call: ClientCall, name: str, data: dict[str, Any]) -> None:
    """A refusal's event: the refusal wrote nothing, so the event is its own transaction, written
    before the answer is sent."""
    data = {**data, "ip": call.ip, "hwid": call.args.opt_text("hwid")}
    await events.report_refusal(call.db, call.services.event_wants, call.app.id, name, call.now(), data)


async def _refused(call: ClientCall, refusal: Refusal, credential: str, *, is_key: bool = False) -> None:
    """`user.login_refused` (and `blacklist.hit`) for an endpoint that wants them; a license key
    is shown masked, as every event shows keys."""
    if refusal.error == errorcodes.RATE_LIMITED.code:
        return
    shown = events.masked_key(credential) if is_key else credential
    if refusal.error == errorcodes.BLACKLISTED.code:
        await _report(call, "blacklist.hit", {"credential": shown})
    await _report(call, "user.login_refused", {"credential": shown, "reason": refusal.error})


async def _answer(call: ClientCall, msg: Messages, login: logins.Login) -> dict[str, Any]:
    """A login's answer: the user, and (fields KeyAuth's libraries ignore) their entitlements and
    the credit balance the session spends. A login is a heartbeat (its `user.logged_in` event,
    if wanted, was written with the login: `logins.Client.report_login`)."""
    # An application without entitlements, balances or heartbeats (what this worker's caches
    # say without an await, on every re-check) skips their calls: they would answer [] and None.
    services, app_id = call.services, call.app.id
    entitled, credited = services.entitled.kept(app_id), services.credited.kept(app_id)
    answer = {
        "message": msg("loggedInMsg"),
        "info": login.info,
        "entitlements": []
        if entitled is not None and not entitled[1]
        else await entitlements.of_user(call, login.user_id),
        "credits": None
        if credited is not None and not credited[1]
        else await credits.of_session(call, login.user_id, login.info["username"]),
    }
    if call.app.heartbeat_interval > 0:
        await heartbeats.beat_if_wanted(call, answer)
    return answer


@registry.operation(
    "register",
    group=AUTH,
    summary="register",
    requires="session",
    params=[USERNAME, PASSWORD, KEY, HWID, Param("email", max_length=254, doc="for Forgot Password")],
    returns={"info": INFO, "entitlements": entitlements.BRIEF, "credits": credits.CREDITS},
    pinned=False,  # hashes the password
)
async def register(call: ClientCall) -> dict[str, Any]:
    """Create a user by redeeming an unused license key: the user receives every subscription of
    the key's level, and the session is logged in. Refusals: `username_taken` (409),
    `key_not_found` (404), `key_used`, `key_banned`, `no_subscription_for_level`, `blacklisted`,
    `username_too_short`, `username_not_allowed`, `invalid_email`, `hwid_too_short`,
    `hwid_required`, `rate_limited`."""
    return await _with_password(call, "register")


@registry.operation(
    "login",
    group=AUTH,
    summary="Login",
    requires="session",
    params=[USERNAME, LOGIN_PASSWORD, HWID, CODE, *CLIENT_DETAILS],
    returns={"info": INFO, "entitlements": entitlements.BRIEF, "credits": credits.CREDITS},
    pinned=False,  # verifies the password
)
async def login(call: ClientCall) -> dict[str, Any]:
    """Log the session in with a username and password. An unknown username and a wrong password
    get the same answer. A user created without a password sets it with their first login. The
    web loader logs in with `token` (from the customer panel, valid about two minutes, once) in
    place of `pass`: `loader_token_invalid` when it is unknown, expired, used or another user's.
    Refusals, each with the application's message for it: `invalid_credentials`, `user_banned`,
    `blacklisted` (the HWID or IP address is blacklisted; checked at every login), `otp_required`,
    `otp_invalid`, `hwid_mismatch` (HWID lock: not one of the user's HWIDs and no more may be
    bound), `hwid_required`, `hwid_too_short`, `subscription_paused`, `no_active_subscription`,
    `rate_limited` (429: too many attempts from this address, or the username is locked after
    `LICENSEGATE_LOGIN_LOCK_FAILURES` wrong passwords in a row from anywhere; a locked user still
    signs in from one of their HWIDs or their last login's address, and the owner lifts a lock
    with `unlockuser`)."""
    try:
        answer = await _with_password(call, "login")
    except Refusal as refusal:
        _count(call, refusal.error)
        raise
    _count(call, "success")
    return answer


@registry.operation(
    "license",
    group=AUTH,
    summary="License Login",
    requires="session",
    params=[KEY, HWID, CODE, *CLIENT_DETAILS],
    statuses=frozenset({200, 400, 401, 403, 500}),
    returns={
        "info": INFO + "; `username` is the license key",
        "entitlements": entitlements.BRIEF,
        "credits": credits.CREDITS,
    },
)
async def license_login(call: ClientCall) -> dict[str, Any]:
    """Log in with a license key alone. The first use of an unused key creates the user named by
    the key, holding the key's subscriptions; later uses log that user in. Answers only 200, 400,
    401, 403 and 500: an unknown key is 403 `key_not_found`, and a throttled attempt is 403
    `rate_limited` with `Retry-After`. Further refusals: `key_used` (its user was deleted; a login
    that loses the race for an unused key is answered as a login of the user the winner made),
    `key_banned`, `no_subscription_for_level`, and those of Login.
    """
    key = call.args.text("key")
    try:
        await call.limit_attempts(key)
        msg = await call.messages()
        result = await logins.license_login(
            call.db,
            call.services.secrets,
            call.app,
            await _client(call),
            key=key,
            otp_code=call.args.opt_text("code"),
            msg=msg,
            now=call.now(),
            held=call.held,
            first_use_wants=call.services.first_use_wants,
            used_keys=call.services.used_keys,
        )
    except Refusal as refusal:
        _count(call, refusal.error)
        await call.failed_attempt()
        await _refused(call, refusal, key, is_key=True)
        raise
    _count(call, "success")
    return await _answer(call, msg, result)


@registry.operation(
    "upgrade",
    group="Licensing",
    summary="Upgrade Access",
    requires="session",
    params=[USERNAME, KEY],
    statuses=frozenset({200, 400, 401, 403, 404, 429, 500}),
    returns={"users": "[{name}]: the subscriptions granted", "entitlements": entitlements.BRIEF},
)
async def upgrade(call: ClientCall) -> dict[str, Any]:
    """Redeem an unused key onto an existing user: every subscription of the key's level is
    granted, or lengthened by the key's duration where the user has it running. Refusals:
    `key_not_found` (404), `user_not_found` (404), `key_used` (403), `key_banned` (403),
    `user_banned` (403), `no_subscription_for_level` (403), `rate_limited` (429)."""
    username, msg = await _attempt(call)
    names = await logins.upgrade(
        call.db, call.app, username=username, key=call.args.text("key"), msg=msg, now=call.now()
    )
    account = await logins.find_account(call.db, call.app, username)
    granted = [] if account is None else await entitlements.of_user(call, account.user["user_id"])
    return {"message": msg("upgraded"), "users": [{"name": name} for name in names], "entitlements": granted}
