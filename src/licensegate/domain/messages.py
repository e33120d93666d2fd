"""The messages the client API answers refusals (and a login) with. Each application may replace
any of them (seller API `updatesettings` / `setmessage`); the defaults are the texts KeyAuth
clients and their users know. `{reason}` is replaced by the stored ban reason. Custom messages
are cached per worker process and forgotten everywhere when they change (`invalidation.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from licensegate.appcache import AppCache
from licensegate.invalidation import BACKSTOP, Invalidation
from licensegate.store import messages as message_store

TOPIC = "messages"

DEFAULTS: dict[str, str] = {
    "appdisabled": "This application is disabled",
    "pausedApp": "Application is currently paused, please wait for the developer to say otherwise.",
    "hashcheckfail": "This program hash does not match, make sure you're using latest version",
    "usernametaken": "Username already taken, choose a different one",
    "keynotfound": "Invalid license key",
    "keyused": "License key has already been used",
    "keybanned": "Your license is banned: {reason}",
    "nosublevel": "There is no subscription created for your key level. Contact application developer.",
    "unTooShort": "Username too short, try longer one.",
    "hwidblacked": "You've been blacklisted from our application",
    "usernamenotfound": "Invalid username",
    "passmismatch": "Password does not match.",
    "userbanned": "The user is banned: {reason}",
    "hwidmismatch": "HWID doesn't match. Ask for a HWID reset",
    "noactivesubs": "No active subscription(s) found",
    "pausedsub": "Your subscription is paused and can't be used right now",
    "loggedInMsg": "Logged in!",
    "sessionunauthed": "Session is not validated",
    "chatHitDelay": "Chat slower, you've hit the delay limit",
    "hwidtooshort": "HWID must be at least {minimum} characters long.",
    "hwidrequired": "A HWID is required to log in to this application.",
    "hwidlimit": "This account is already bound to the maximum number of devices.",
    "otprequired": "Two-factor authentication code required.",
    "otpinvalid": "Invalid two-factor authentication code.",
    "ratelimited": "Too many attempts; try again later.",
    # One answer for an unknown username and a wrong password, so logins cannot probe for names.
    "invalidcredentials": "Invalid username or password.",
    "upgraded": "Upgraded successfully",
    "seatlimit": "This account is already in use on as many machines or sessions as it may be.",
    "nocredits": "Not enough credits left: {balance} remaining.",
    # The token system (init with token validation on).
    "tokeninvalid": "Token Invalid",
    "tokenrequired": "Token Must Be Provided",
    "thashrequired": "Hash Must Be Provided",
    "tokenbanned": "The Token Has Been Blacklisted For The Following Reason: {reason} "
    "Contact Application Developer If This Is A Mistake",
    "tokenhashmismatch": "Token File Hashes Must Be The Same",
}

# KeyAuth's `updatesettings` parameter names for the messages it lets sellers change.
KEYAUTH_SETTING_NAMES: dict[str, str] = {
    "appdisabled": "appdisabled",
    "usernametaken": "usernametaken",
    "keynotfound": "keynotfound",
    "keyused": "keyused",
    "nosublevel": "nosublevel",
    "usernamenotfound": "usernamenotfound",
    "passmismatch": "passmismatch",
    "hwidmismatch": "hwidmismatch",
    "noactivesubs": "noactivesubs",
    "hwidblacked": "hwidblacked",
    "keypaused": "pausedsub",
    "keyexpired": "noactivesubs",
}

MAX_LENGTH = 300


def render(name: str, overrides: Mapping[str, str], **values: str) -> str:
    """The application's text for `name` (or the default), with `{placeholders}` filled in.
    Only known placeholders are replaced, so a seller's braces cannot break formatting."""
    text = overrides.get(name) or DEFAULTS[name]
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


class MessageCache(AppCache[dict[str, str]]):
    """Each application's custom messages, kept per worker process (see `appcache.AppCache`)."""

    def __init__(self, invalidation: Invalidation, keep: float = BACKSTOP) -> None:
        super().__init__(invalidation, TOPIC, message_store.for_app, keep)


class Messages:
    """One call's view of its application's messages."""

    def __init__(self, overrides: dict[str, str]) -> None:
        self._overrides = overrides

    def __call__(self, name: str, **values: Any) -> str:
        return render(name, self._overrides, **{k: str(v) for k, v in values.items()})
