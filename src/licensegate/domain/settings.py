"""Application settings: what an owner configures for the client API of one application (version,
download link, HWID rules, session length, rate limits, custom messages, accepted program
hashes), pausing the whole application, and its statistics.

Each setting is declared once here with its allowed range; the seller API's parameters take
their ranges from these declarations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from licensegate.domain import errorcodes, events
from licensegate.domain import messages as catalogue
from licensegate.secretbox import SecretBox, is_sealed
from licensegate.store import apps as app_store
from licensegate.store import hashes as hash_store
from licensegate.store import messages as message_store
from licensegate.store import sessions as session_store
from licensegate.store import users as user_store
from licensegate.store.database import Database, Executor, Row, UniqueViolation

SettingKind = Literal["flag", "int", "text", "url", "secret_url", "choice"]

MAX_URL = 2048
MAX_VERSION = 32
MAX_HASH = 128
MAX_HASHES = 100  # program hashes per application
HASH_FORMAT = re.compile(r"[A-Za-z0-9]+")
TAMPER_ACTIONS = ("log", "ban")


@dataclass(frozen=True, slots=True)
class Setting:
    column: str  # the `apps` column
    name: str  # its name in answers and audit notes
    kind: SettingKind
    minimum: int = 0
    maximum: int = 0  # for text and URLs: the maximum length
    choices: tuple[str, ...] = ()


SETTINGS: tuple[Setting, ...] = (
    Setting("version", "version", "text", maximum=MAX_VERSION),
    Setting("download_link", "download_link", "url", maximum=MAX_URL),
    Setting("enabled", "enabled", "flag"),
    Setting("hwid_lock", "hwid_lock", "flag"),
    Setting("force_hwid", "force_hwid", "flag"),
    Setting("min_hwid_length", "min_hwid_length", "int", 0, 256),
    Setting("max_hwids", "max_hwids", "int", 1, 100),
    Setting("hwid_reset_cooldown", "hwid_reset_cooldown", "int", 0, 31_536_000),
    Setting("session_seconds", "session_seconds", "int", 60, 604_800),
    Setting("min_username_length", "min_username_length", "int", 1, 64),
    Setting("hash_check", "hash_check", "flag"),
    Setting("seller_log", "seller_log", "flag"),
    # The forwarding URL carries a token: it is only ever reported as set or unset.
    Setting("log_webhook_url", "log_webhook", "secret_url", maximum=MAX_URL),
    Setting("tamper_action", "tamper_action", "choice", choices=TAMPER_ACTIONS),
    Setting("client_rate_limit", "client_rate_limit", "int", 1, 1_000_000),
    Setting("client_rate_window", "client_rate_window", "int", 1, 86_400),
    Setting("auth_rate_limit", "auth_rate_limit", "int", 1, 1_000_000),
    Setting("auth_rate_window", "auth_rate_window", "int", 1, 86_400),
    Setting("chat_history", "chat_history", "int", 1, 1000),
    Setting("log_retention_days", "log_retention_days", "int", 1, 3650),
    Setting("token_validation", "token_validation", "flag"),
    Setting("case_insensitive_usernames", "case_insensitive_usernames", "flag"),
    Setting("web_loader_download", "web_loader_download", "url", maximum=MAX_URL),
    Setting("customer_panel", "customer_panel", "flag"),
)
BY_COLUMN: dict[str, Setting] = {setting.column: setting for setting in SETTINGS}
assert set(BY_COLUMN) == app_store.SETTING_COLUMNS


# --- validation -------------------------------------------------------------------------------


def _has_control(text: str, allowed: str = "") -> bool:
    return any((ord(ch) < 32 or ord(ch) == 127) and ch not in allowed for ch in text)


def check_url(value: str, what: str) -> str:
    """An absolute http(s) URL of at most MAX_URL characters, without spaces."""
    if len(value) > MAX_URL:
        raise errorcodes.INVALID_URL(f"The {what} must be at most {MAX_URL} characters.")
    if _has_control(value) or any(ch.isspace() for ch in value):
        raise errorcodes.INVALID_URL(f"The {what} must not contain spaces or control characters.")
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
        raise errorcodes.INVALID_URL(what=what)
    return value


def check_value(setting: Setting, value: Any) -> Any:
    """The value as the column stores it, or a refusal that says what is allowed."""
    label = setting.name.replace("_", " ")
    if setting.kind == "flag":
        if not isinstance(value, bool):
            raise errorcodes.INVALID_SETTING(label=label)
        return 1 if value else 0
    if setting.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise errorcodes.INVALID_SETTING(f"The {label} setting must be a whole number.")
        if not setting.minimum <= value <= setting.maximum:
            raise errorcodes.NUMBER_OUT_OF_RANGE(
                f"The {label} setting must be between {setting.minimum} and {setting.maximum}."
            )
        return value
    if setting.kind in ("url", "secret_url"):
        if value is None:  # cleared
            return None
        if not isinstance(value, str):
            raise errorcodes.INVALID_URL(f"The {label} must be a URL.")
        return check_url(value, label)
    if not isinstance(value, str):
        raise errorcodes.INVALID_SETTING(f"The {label} setting must be text.")
    if setting.kind == "choice":
        if value not in setting.choices:
            raise errorcodes.INVALID_SETTING(
                f"The {label} setting must be one of: {', '.join(setting.choices)}."
            )
        return value
    if not value.strip() or len(value) > setting.maximum or _has_control(value):
        raise errorcodes.INVALID_SETTING(
            f"The {label} must be 1 to {setting.maximum} characters without control characters."
        )
    return value


def check_message_name(name: str) -> str:
    if name not in catalogue.DEFAULTS:
        raise errorcodes.UNKNOWN_MESSAGE(name=name[:64], known=", ".join(catalogue.DEFAULTS))
    return name


def check_message_text(text: str | None) -> str | None:
    """The replacement text to store, or None to go back to the default (empty or blank text)."""
    if text is None or text.strip() == "":
        return None
    if len(text) > catalogue.MAX_LENGTH:
        raise errorcodes.INVALID_MESSAGE(f"A message must be at most {catalogue.MAX_LENGTH} characters.")
    if _has_control(text, "\t\n\r"):
        raise errorcodes.INVALID_MESSAGE()
    return text


def from_keyauth_names(given: Mapping[str, str]) -> dict[str, str]:
    """KeyAuth's `updatesettings` message parameters, by catalogue name. Two parameters that
    name the same message (`keyexpired` and `noactivesubs`) must agree."""
    out: dict[str, str] = {}
    for param, text in given.items():
        name = catalogue.KEYAUTH_SETTING_NAMES[param]
        if name in out and out[name] != text:
            raise errorcodes.CONFLICTING_PARAMETERS(
                f"Two parameters set the message '{name}' to different texts; give one of them."
            )
        out[name] = text
    return out


def check_hash(value: str) -> str:
    if len(value) > MAX_HASH or not HASH_FORMAT.fullmatch(value):
        raise errorcodes.INVALID_HASH(maximum=MAX_HASH)
    return value


# --- reading ----------------------------------------------------------------------------------


def shown(setting: Setting, value: Any) -> Any:
    """A stored value as answers and audit notes show it."""
    if setting.kind == "secret_url":
        return "set" if value else "unset"
    if setting.kind == "flag":
        return 1 if value else 0
    return value


def view(row: Row) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for setting in SETTINGS:
        out[setting.name] = shown(setting, row[setting.column])
        if setting.column == "enabled":
            out["paused"] = 1 if row["paused_at"] is not None else 0
            out["paused_at"] = row["paused_at"]
    return out


async def app_row(db: Executor, app_id: int) -> Row:
    row = await app_store.get(db, app_id)
    if row is None:  # the seller key's application was deleted during the call
        raise errorcodes.APP_NOT_FOUND()
    return row


def effective_messages(overrides: Mapping[str, str]) -> dict[str, str]:
    return {name: overrides.get(name) or default for name, default in catalogue.DEFAULTS.items()}


@dataclass(frozen=True, slots=True)
class AllSettings:
    row: Row
    settings: dict[str, Any]
    messages: dict[str, str]
    hashes: list[str]


async def get_all(db: Executor, app_id: int) -> AllSettings:
    row = await app_row(db, app_id)
    overrides = await message_store.for_app(db, app_id)
    hashes = [h["hash"] for h in await hash_store.list_for_app(db, app_id)]
    return AllSettings(row=row, settings=view(row), messages=effective_messages(overrides), hashes=hashes)


# --- changing ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Changed:
    """The state after a change, and the before/after of what actually changed."""

    settings: dict[str, Any]
    before: dict[str, Any]
    after: dict[str, Any]


LOG_WEBHOOK = "apps.log_webhook_url"  # the purpose the log forwarding URL is sealed for


def open_secret_url(box: SecretBox, stored: str | None) -> str | None:
    """A sealed URL setting in clear (in clear already if stored before URLs were sealed and not
    yet sealed by `licensegate migrate` or `serve`)."""
    if stored is None or not is_sealed(stored):
        return stored
    return box.open(stored, LOG_WEBHOOK)


async def update(
    db: Database,
    box: SecretBox,
    app_id: int,
    *,
    values: Mapping[str, Any],
    texts: Mapping[str, str | None],
    now: int,
) -> Changed:
    """Change the given settings (by column; None clears a URL) and messages (None: back to
    the default). Values equal to the current ones are not counted as changes."""
    if not values and not texts:
        raise errorcodes.NOTHING_TO_UPDATE()
    checked: dict[str, Any] = {}
    for column, value in values.items():
        checked[column] = check_value(BY_COLUMN[column], value)
    wanted = {check_message_name(name): check_message_text(text) for name, text in texts.items()}
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    async with db.transaction() as tx:
        await app_store.lock(tx, app_id)
        row = await app_row(tx, app_id)
        changes = {column: value for column, value in checked.items() if _current(box, row, column) != value}
        for column, value in changes.items():
            if BY_COLUMN[column].kind == "secret_url" and value is not None:
                changes[column] = box.seal(value, LOG_WEBHOOK)
        if changes:
            await app_store.update_settings(tx, app_id, changes, now)
        if CASE_INSENSITIVE in changes:
            await _rekey_usernames(tx, app_id, case_insensitive=bool(changes[CASE_INSENSITIVE]))
        for column, value in changes.items():
            setting = BY_COLUMN[column]
            before[setting.name] = shown(setting, row[column])
            after[setting.name] = shown(setting, value)
        overrides = await message_store.for_app(tx, app_id)
        text_before: dict[str, str] = {}
        text_after: dict[str, str] = {}
        for name, text in wanted.items():
            if overrides.get(name) == text:
                continue
            if text is None:
                await message_store.delete(tx, app_id, name)
            else:
                await message_store.put(tx, app_id, name, text)
            text_before[name] = overrides.get(name) or catalogue.DEFAULTS[name]
            text_after[name] = text or catalogue.DEFAULTS[name]
        if text_before:
            before["messages"] = text_before
            after["messages"] = text_after
        current = await app_row(tx, app_id)
    return Changed(settings=view(current), before=before, after=after)


CASE_INSENSITIVE = "case_insensitive_usernames"
MAX_TWINS_SHOWN = 10


async def _rekey_usernames(tx: Executor, app_id: int, *, case_insensitive: bool) -> None:
    """Compare the application's usernames by their case fold (or exactly again). Refused while
    two users' names differ only in case (or compatibility forms): rename or delete one first."""
    if case_insensitive:
        twins = await user_store.case_twins(tx, app_id, MAX_TWINS_SHOWN)
        if twins:
            raise errorcodes.USERNAMES_DIFFER_ONLY_IN_CASE(names=", ".join(twins))
    try:
        await user_store.rekey(tx, app_id, case_insensitive=case_insensitive)
    except UniqueViolation:  # a user registered meanwhile under a name that differs only in case
        raise errorcodes.USERNAMES_DIFFER_ONLY_IN_CASE(names="a name registered meanwhile") from None


def _current(box: SecretBox, row: Row, column: str) -> Any:
    if BY_COLUMN[column].kind == "secret_url":
        return open_secret_url(box, row[column])
    return row[column]


async def list_messages(db: Executor, app_id: int) -> list[dict[str, Any]]:
    overrides = await message_store.for_app(db, app_id)
    return [
        {"name": name, "text": overrides.get(name) or default, "default": 0 if overrides.get(name) else 1}
        for name, default in catalogue.DEFAULTS.items()
    ]


async def set_message(
    db: Database, box: SecretBox, app_id: int, name: str, text: str | None, now: int
) -> Changed:
    """Replace one message; empty text restores the default. `settings` of the answer holds the
    message's new {name, text, default}."""
    changed = await update(db, box, app_id, values={}, texts={check_message_name(name): text}, now=now)
    stored = check_message_text(text)
    entry = {"name": name, "text": stored or catalogue.DEFAULTS[name], "default": 0 if stored else 1}
    return Changed(settings=entry, before=changed.before, after=changed.after)


# --- program hashes ---------------------------------------------------------------------------


async def list_hashes(db: Executor, app_id: int) -> list[dict[str, Any]]:
    return [
        {"hash": row["hash"], "created": row["created_at"]}
        for row in await hash_store.list_for_app(db, app_id)
    ]


async def add_hash(db: Database, app_id: int, value: str, now: int) -> None:
    value = check_hash(value)
    async with db.transaction() as tx:
        await app_store.lock(tx, app_id)  # the count check and the insert are one step
        if await hash_store.count(tx, app_id) >= MAX_HASHES:
            raise errorcodes.TOO_MANY_HASHES(maximum=MAX_HASHES)
        if not await hash_store.insert(tx, app_id, value, now):
            raise errorcodes.HASH_EXISTS()


async def delete_hash(db: Executor, app_id: int, value: str) -> None:
    if await hash_store.delete(db, app_id, value) == 0:
        raise errorcodes.HASH_NOT_FOUND()


async def reset_hashes(db: Executor, app_id: int) -> int:
    return await hash_store.delete_all(db, app_id)


# --- pausing the application ------------------------------------------------------------------


async def pause(db: Database, app_id: int, now: int) -> None:
    """Pause the application: the client API refuses `init` and every call of a session (the
    flag comes with the session's own row), no grant counts down, and the sessions end."""
    async with db.transaction() as tx:
        if await app_store.pause(tx, app_id, now) == 0:
            await app_row(tx, app_id)
            raise errorcodes.ALREADY_PAUSED()
        await events.record(tx, app_id, "app.paused", now, {})
    await session_store.delete_all(
        db, app_id, report=await events.sessions_ended(db, app_id, "app_paused", now)
    )


async def unpause(db: Database, app_id: int, now: int) -> int:
    """End the pause; every grant that was running gets the paused time back. Returns the
    pause's length in seconds."""
    async with db.transaction() as tx:
        await app_store.lock(tx, app_id)
        row = await app_row(tx, app_id)
        paused_at: int | None = row["paused_at"]
        if paused_at is None:
            raise errorcodes.NOT_PAUSED()
        await app_store.unpause(tx, app_id, paused_at, now)
        await events.record(tx, app_id, "app.resumed", now, {"paused_seconds": max(0, now - paused_at)})
    return max(0, now - paused_at)


# --- statistics and details -------------------------------------------------------------------


async def stats(db: Executor, app_id: int, now: int) -> dict[str, Any]:
    row = await app_store.stats(db, app_id, now)
    return {
        "users": int(row["users"]),
        "keys": {
            "unused": int(row["keys_unused"]),
            "used": int(row["keys_used"]),
            "banned": int(row["keys_banned"]),
            "total": int(row["keys_total"]),
        },
        "sessions": {"active": int(row["sessions_active"]), "online": int(row["sessions_online"])},
        "subscriptions": int(row["subscriptions"]),
        "globalvars": int(row["globalvars"]),
        "files": int(row["files"]),
        "webhooks": int(row["webhooks"]),
        "resellers": int(row["resellers"]),
        "managers": int(row["managers"]),
    }


async def details(db: Executor, app_id: int) -> dict[str, Any]:
    """Name, owner id and version; never the application secret."""
    row = await app_row(db, app_id)
    return {"name": row["name"], "ownerid": row["ownerid"], "version": row["version"]}
