"""Seller API — Settings: read and change the application's settings and client messages, the
accepted program hashes, pause and unpause the application, statistics and details."""

from __future__ import annotations

from typing import Any

from licensegate.domain import errorcodes, settings
from licensegate.domain import messages as catalogue
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Settings"
AREA: Area = "settings"


def _flag(name: str, column: str, doc: str, aliases: tuple[str, ...] = ()) -> tuple[Param, str]:
    return Param(name, "bool", max_length=5, aliases=aliases, doc=f"{doc} (1/0 or true/false)"), column


def _int(name: str, column: str, doc: str, aliases: tuple[str, ...] = ()) -> tuple[Param, str]:
    setting = settings.BY_COLUMN[column]
    return (
        Param(
            name,
            "int",
            max_length=12,
            minimum=setting.minimum,
            maximum=setting.maximum,
            aliases=aliases,
            doc=f"{doc} ({setting.minimum} to {setting.maximum})",
        ),
        column,
    )


# updatesettings parameter -> `apps` column. KeyAuth's names first, then this service's own.
SETTING_PARAMS: tuple[tuple[Param, str], ...] = (
    _flag("enabled", "enabled", "0 disables the application: the client API refuses it"),
    _flag("hwidcheck", "hwid_lock", "HWID lock: users may sign in only from their registered devices"),
    (
        Param("ver", max_length=settings.MAX_VERSION, aliases=("version",), doc="current program version"),
        "version",
    ),
    (
        Param(
            "download",
            max_length=settings.MAX_URL,
            doc="auto-update download link (http/https URL) given to outdated clients",
        ),
        "download_link",
    ),
    (
        Param(
            "webhook",
            max_length=settings.MAX_URL,
            secret=True,
            doc="Discord-compatible URL client logs are forwarded to (http/https); never shown back",
        ),
        "log_webhook_url",
    ),
    _flag("forcehwid", "force_hwid", "1: a login without a HWID is refused"),
    _int("minhwid", "min_hwid_length", "minimum HWID length"),
    _int("maxhwids", "max_hwids", "devices (HWIDs) one user may hold"),
    _int("hwidcooldown", "hwid_reset_cooldown", "seconds between HWID resets", aliases=("cooldown",)),
    _int("session", "session_seconds", "client session lifetime in seconds"),
    _int("minusernamelength", "min_username_length", "minimum username length at registration"),
    _flag("hashcheck", "hash_check", "1: `init` must send an accepted program hash"),
    _flag("sellerlogs", "seller_log", "1: record every seller API call in the seller log"),
    _flag(
        "tokensystem",
        "token_validation",
        "token validation: 1 = `init` must send a valid `token` and the token file's hash `thash`",
    ),
    (
        Param(
            "tamperaction",
            max_length=16,
            choices=settings.TAMPER_ACTIONS,
            doc="what a tamper report does: `log` it, or also `ban` the user",
        ),
        "tamper_action",
    ),
    _int("clientratelimit", "client_rate_limit", "client API requests per window per application"),
    _int("clientratewindow", "client_rate_window", "the client rate-limit window in seconds"),
    _int("authratelimit", "auth_rate_limit", "login attempts per window per credential and IP"),
    _int("authratewindow", "auth_rate_window", "the login rate-limit window in seconds"),
    _int("chathistory", "chat_history", "chat messages a channel keeps and `chatget` returns"),
    _flag(
        "caseinsensitiveusernames",
        "case_insensitive_usernames",
        "1: usernames compare case-insensitively (unique by their case fold; a login, and a seller "
        "operation naming a user, finds the user whatever the case); refused while two names "
        "differ only in case",
    ),
    _int(
        "logretention",
        "log_retention_days",
        "days client logs and tamper reports are kept; older ones are deleted in the background",
    ),
    (
        Param(
            "webdownload",
            max_length=settings.MAX_URL,
            doc="web loader: where the customer panel sends end users for the loader (http/https URL)",
        ),
        "web_loader_download",
    ),
    _flag(
        "customerpanel",
        "customer_panel",
        "1: end users may sign in to the customer panel (`/panel/<application id>/`)",
    ),
)
MESSAGE_PARAMS = tuple(
    Param(
        name,
        max_length=catalogue.MAX_LENGTH,
        strip=False,
        doc=f"text of the client message `{target}`",
    )
    for name, target in catalogue.KEYAUTH_SETTING_NAMES.items()
)
CLEAR_PARAMS = (
    Param("clearwebhook", "bool", max_length=5, doc="1: remove the log forwarding URL"),
    Param("cleardownload", "bool", max_length=5, doc="1: remove the download link"),
    Param("clearwebdownload", "bool", max_length=5, doc="1: remove the web loader's download link"),
)
SETTINGS_FIELDS = (
    "{version, download_link, enabled, paused, paused_at, hwid_lock, force_hwid, min_hwid_length, "
    "max_hwids, hwid_reset_cooldown, session_seconds, min_username_length, hash_check, seller_log, "
    "log_webhook (set | unset), tamper_action, client_rate_limit, client_rate_window, "
    "auth_rate_limit, auth_rate_window, chat_history, log_retention_days, token_validation, "
    "case_insensitive_usernames, web_loader_download, customer_panel}; flags are 0/1"
)


@registry.operation(
    "getsettings",
    group=GROUP,
    summary="Get Application Settings",
    area=AREA,
    returns={
        "settings": SETTINGS_FIELDS,
        "messages": "{name: current text} for every client message",
        "hashes": "[accepted program hashes]",
        "enabled": "boolean (KeyAuth's flat field)",
        "hwid-lock": "boolean (KeyAuth's flat field)",
        "version": "string (KeyAuth's flat field)",
        "download": "download link or empty string (KeyAuth's flat field)",
        "webdownload": "the web loader's download link or empty string (KeyAuth's flat field)",
    },
)
async def get_settings(call: SellerCall) -> dict[str, Any]:
    """Every setting, the text of every client message and the accepted program hashes. The log
    forwarding URL holds a token, so it is reported only as `set` or `unset`."""
    current = await settings.get_all(call.db, call.app_id)
    row = current.row
    return {
        "message": "Retrieved Settings Successfully",
        "settings": current.settings,
        "messages": current.messages,
        "hashes": current.hashes,
        "enabled": bool(row["enabled"]),
        "hwid-lock": bool(row["hwid_lock"]),
        "version": row["version"],
        "download": row["download_link"] or "",
        "webdownload": row["web_loader_download"] or "",
    }


@registry.operation(
    "updatesettings",
    group=GROUP,
    summary="Update Application Settings",
    area=AREA,
    mutates=True,
    params=[*(param for param, _ in SETTING_PARAMS), *CLEAR_PARAMS, *MESSAGE_PARAMS],
    returns={"settings": SETTINGS_FIELDS},
)
async def update_settings(call: SellerCall) -> dict[str, Any]:
    """Change the settings given; the others keep their values (an empty parameter counts as
    not given, so `clearwebhook=1` / `cleardownload=1` / `clearwebdownload=1` remove a URL). The
    message parameters are KeyAuth's; `setmessage` changes any client message by its own name."""
    args = call.args
    given = args.as_dict()
    values = {column: given[param.name] for param, column in SETTING_PARAMS if param.name in args}
    for param, column in SETTING_PARAMS:
        if param.name in args:  # checked here too, so a refusal names the parameter at fault
            try:
                settings.check_value(settings.BY_COLUMN[column], given[param.name])
            except Refusal as refusal:
                refusal.extra.setdefault("param", param.name)
                raise
    for flag, column, url_param in (
        ("clearwebhook", "log_webhook_url", "webhook"),
        ("cleardownload", "download_link", "download"),
        ("clearwebdownload", "web_loader_download", "webdownload"),
    ):
        if args.flag(flag):
            if url_param in args:
                raise errorcodes.CONFLICTING_PARAMETERS(f"Give either '{url_param}' or '{flag}=1', not both.")
            values[column] = None
    texts = settings.from_keyauth_names(
        {param.name: args.text(param.name) for param in MESSAGE_PARAMS if param.name in args}
    )
    changed = await settings.update(
        call.db, call.services.secrets, call.app_id, values=values, texts=texts, now=call.now()
    )
    await call.services.messages.changed(call.app_id)  # every worker's clients see new texts at once
    call.record("settings", before=changed.before, after=changed.after)
    return {"message": "Settings Update Successful", "settings": changed.settings}


MESSAGE_NAME = Param(
    "name", required=True, max_length=32, doc=f"the message's name, one of: {', '.join(catalogue.DEFAULTS)}"
)


@registry.operation(
    "setmessage",
    group=GROUP,
    summary="Set Client Message",
    area=AREA,
    mutates=True,
    params=[
        MESSAGE_NAME,
        Param(
            "text",
            max_length=catalogue.MAX_LENGTH,
            strip=False,
            doc="the new text, kept as given; empty restores the default. `{reason}` in the ban "
            "messages and `{minimum}` in `hwidtooshort` are filled in.",
        ),
    ],
    returns={"name": "the message's name", "text": "its text now", "default": "1 if it is the default text"},
)
async def set_message(call: SellerCall) -> dict[str, Any]:
    """Replace the text the client API answers with in one situation (or restore the default)."""
    name = call.args.text("name")
    changed = await settings.set_message(
        call.db, call.services.secrets, call.app_id, name, call.args.opt_text("text"), call.now()
    )
    await call.services.messages.changed(call.app_id)
    call.record(
        f"message:{name}",
        before=changed.before.get("messages"),
        after=changed.after.get("messages"),
    )
    return {"message": "Successfully set message", **changed.settings}


@registry.operation(
    "fetchmessages",
    group=GROUP,
    summary="Get Client Messages",
    area=AREA,
    returns={"messages": "[{name, text, default (0/1)}], in catalogue order"},
)
async def fetch_messages(call: SellerCall) -> dict[str, Any]:
    """Every client message with its current text and whether that is the default."""
    return {
        "message": "Successfully retrieved messages",
        "messages": await settings.list_messages(call.db, call.app_id),
    }


HASH = Param("hash", required=True, max_length=settings.MAX_HASH, doc="a program hash (letters and digits)")


@registry.operation(
    "addhash", group=GROUP, summary="Add Program Hash", area=AREA, mutates=True, params=[HASH]
)
async def add_hash(call: SellerCall) -> dict[str, Any]:
    """Accept one more program hash at `init` (checked only while hash checking is on)."""
    value = call.args.text("hash")
    await settings.add_hash(call.db, call.app_id, value, call.now())
    call.record(f"hash:{value}", before=None, after={"hash": value})
    return {"message": "Added hash successfully"}


@registry.operation(
    "delhash", group=GROUP, summary="Delete Program Hash", area=AREA, mutates=True, params=[HASH]
)
async def delete_hash(call: SellerCall) -> dict[str, Any]:
    """Stop accepting one program hash."""
    value = call.args.text("hash")
    await settings.delete_hash(call.db, call.app_id, value)
    call.record(f"hash:{value}", before={"hash": value}, after=None)
    return {"message": "Deleted hash successfully"}


@registry.operation(
    "resethash",
    group=GROUP,
    summary="Reset Program Hashes",
    area=AREA,
    mutates=True,
    returns={"deleted": "how many hashes were removed"},
)
async def reset_hashes(call: SellerCall) -> dict[str, Any]:
    """Remove every accepted program hash."""
    deleted = await settings.reset_hashes(call.db, call.app_id)
    call.record("hashes", before={"count": deleted}, after={"count": 0})
    return {"message": "Reset hash successfully!", "deleted": deleted}


@registry.operation(
    "fetchhashes",
    group=GROUP,
    summary="Get Program Hashes",
    area=AREA,
    returns={"hashes": "[{hash, created}], oldest first"},
)
async def fetch_hashes(call: SellerCall) -> dict[str, Any]:
    """The program hashes `init` accepts while hash checking is on."""
    return {
        "message": "Successfully retrieved hashes",
        "hashes": await settings.list_hashes(call.db, call.app_id),
    }


@registry.operation("pauseapp", group=GROUP, summary="Pause Application", area=AREA, mutates=True)
async def pause_app(call: SellerCall) -> dict[str, Any]:
    """Pause the application: every client session ends, the client API refuses `init` and any
    call of a session (`app_paused`), and no user's time counts down until it is unpaused."""
    now = call.now()
    await settings.pause(call.db, call.app_id, now)
    call.record("app", before={"paused": 0}, after={"paused": 1, "paused_at": now})
    return {"message": "Subscription paused application"}


@registry.operation(
    "unpauseapp",
    group=GROUP,
    summary="Unpause Application",
    area=AREA,
    mutates=True,
    returns={"paused_seconds": "how long the application was paused"},
)
async def unpause_app(call: SellerCall) -> dict[str, Any]:
    """End the pause; every subscription that was running when it began gets the paused time
    back."""
    seconds = await settings.unpause(call.db, call.app_id, call.now())
    call.record("app", before={"paused": 1}, after={"paused": 0, "paused_seconds": seconds})
    return {"message": "Subscription unpaused application", "paused_seconds": seconds}


@registry.operation(
    "stats",
    group=GROUP,
    summary="Application Statistics",
    area=AREA,
    returns={
        "users": "number of users",
        "keys": "{unused, used, banned, total}: license keys (banned ones counted only as banned)",
        "sessions": "{active (unexpired), online (unexpired and logged in)}",
        "subscriptions": "number of subscription definitions",
        "globalvars": "number of global variables",
        "files": "number of files",
        "webhooks": "number of webhooks",
        "resellers": "number of reseller accounts",
        "managers": "number of manager accounts",
    },
)
async def stats(call: SellerCall) -> dict[str, Any]:
    """Counts of what the application holds."""
    return {
        "message": "Successfully retrieved statistics",
        **await settings.stats(call.db, call.app_id, call.now()),
    }


@registry.operation(
    "appdetails",
    group=GROUP,
    summary="Retrieve Application Details",
    area=AREA,
    returns={"appdetails": "{name, ownerid, version}"},
)
async def app_details(call: SellerCall) -> dict[str, Any]:
    """The application's name, owner id and version (never its secret)."""
    return {
        "message": "Successfully retrieved application details",
        "appdetails": await settings.details(call.db, call.app_id),
    }
