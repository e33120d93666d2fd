"""Client API — initialization and sessions: init, Session Check, Logout, Fetch Online, fetchStats."""

from __future__ import annotations

from typing import Any

from licensegate.domain import sessions, settings, tokens
from licensegate.operations.client import heartbeats
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

NOT_COUNTED = "N/A - Use fetchStats()"


def _appinfo(call: ClientCall, users: str, online: str, keys: str) -> dict[str, str]:
    # KeyAuth clients read these five members as strings.
    return {
        "numUsers": users,
        "numOnlineUsers": online,
        "numKeys": keys,
        "version": call.app.version,
        "customerPanelLink": "",
    }


@registry.operation(
    "init",
    group="Initialization",
    summary="init",
    requires="app",
    params=[
        Param(
            "ver", max_length=32, doc="the program's version; a different one is refused with `invalidver`"
        ),
        Param("hash", max_length=128, doc="hash of the program file, checked when the application asks"),
        Param(
            "enckey",
            max_length=64,
            doc="API 1.2 and legacy 1.0 clients: their half of the session's key (HMAC key "
            "`<enckey>-<secret>` on 1.2); kept sealed with the session",
        ),
        Param("token", max_length=128, doc="token validation: the token from the program's token file"),
        Param("thash", max_length=256, doc="token validation: the hash of the token file"),
    ],
    returns={
        "sessionid": "the new session's id (32 hex characters)",
        "appinfo": "{numUsers, numOnlineUsers, numKeys, version, customerPanelLink} as strings",
        "newSession": "always true: every init opens a fresh session",
    },
)
async def init(call: ClientCall) -> dict[str, Any]:
    """Open a session. Refused when the application is paused (`app_paused`), when `ver` differs
    from the application's version (message `invalidver`, error `version_mismatch`, and the
    application's download link in `download`), or when hash checking is on and `hash` is not
    one of the application's allowed program hashes (`hash_mismatch`; recorded in the tamper log).
    With token validation on, `token` and `thash` are required (`token_required`,
    `token_hash_required`); an unknown token (`token_invalid`), a banned one or one whose key or user
    is banned (`token_banned`, with the reason), or a `thash` other than the one bound at the token's
    first use (`token_hash_mismatch`) is refused with the application's messages.
    """
    if call.app.token_validation:  # never on an application the worker holds (domain.openedapps)
        await tokens.check_at_init(
            call.db,
            call.app.id,
            call.args.opt_text("token"),
            call.args.opt_text("thash"),
            await call.messages(),
            call.now(),
        )
    session_id = await sessions.start(
        call.db,
        call.app,
        ip=call.ip,
        version=call.args.opt_text("ver"),
        program_hash=call.args.opt_text("hash"),
        messages=call.messages,
        now=call.now(),
        enckey=_sealed_enckey(call),
        opened=call.services.opened_apps,
    )
    return {
        "message": "Initialized",
        "sessionid": session_id,
        "appinfo": _appinfo(call, NOT_COUNTED, NOT_COUNTED, NOT_COUNTED),
        "newSession": True,
    }


def _sealed_enckey(call: ClientCall) -> str | None:
    enckey = call.args.opt_text("enckey")
    return None if enckey is None else call.services.secrets.seal(enckey, sessions.ENCKEY)


@registry.operation("check", group="Sessions", summary="Session Check", requires="session")
async def check(call: ClientCall) -> dict[str, Any]:
    """Succeeds when the session is logged in; otherwise 403 `session_not_validated`. A beat
    when the application wants heartbeats."""
    await call.require_logged_in()
    await heartbeats.beat_if_wanted(call)
    return {"message": "Session is validated."}


@registry.operation("logout", group="Authentication", summary="Logout", requires="session")
async def logout(call: ClientCall) -> dict[str, Any]:
    """End the session."""
    await sessions.end(call.db, call.live_session.id)
    return {"message": "Successfully logged out."}


@registry.operation(
    "fetchOnline",
    group="Sessions",
    summary="Fetch Online",
    requires="validated",
    returns={
        "users": "[{credential}]: the usernames of the users with a logged-in, unexpired session; "
        "users named by a license key are left out"
    },
)
async def fetch_online(call: ClientCall) -> dict[str, Any]:
    """Who is logged in now (at most 1,000 usernames); needs a logged-in session. Never key
    material: a user whose name is a license key (every user a License Login made) is left out
    rather than masked, since any part of a key helps guess it."""
    return {
        "message": "Successfully fetched online users.",
        "users": await sessions.online(call.db, call.app, call.now()),
    }


@registry.operation(
    "fetchStats",
    group="Sessions",
    summary="Fetch Stats",
    requires="session",
    returns={"appinfo": "{numUsers, numOnlineUsers, numKeys, version, customerPanelLink}, counts as strings"},
)
async def fetch_stats(call: ClientCall) -> dict[str, Any]:
    """The application's users, users online and license keys."""
    counts = await settings.stats(call.db, call.app.id, call.now())
    online = counts["sessions"]["online"]
    if call.keyauth:  # KeyAuth's C++ library reads that many entries of fetchOnline's list
        online = len(await sessions.online(call.db, call.app, call.now()))
    return {
        "message": "Successfully fetched stats",
        "appinfo": _appinfo(call, str(counts["users"]), str(online), str(counts["keys"]["total"])),
    }
