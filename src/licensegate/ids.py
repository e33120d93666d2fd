"""Identifiers and secrets, all from the operating system's CSPRNG."""

from __future__ import annotations

import hashlib
import os
import secrets
import string
from contextvars import ContextVar

ALNUM = string.ascii_letters + string.digits


def ownerid() -> str:
    """The 10-character account identifier clients send as `ownerid`."""
    return "".join(secrets.choice(ALNUM) for _ in range(10))


def seller_key() -> str:
    """A seller key: 32 lowercase hex characters (128 bits)."""
    return secrets.token_hex(16)


def app_secret() -> str:
    """An application's secret (API 1.2 HMAC key, legacy 1.0 AES key): 64 lowercase hex."""
    return secrets.token_hex(32)


def session_id() -> str:
    """A client session id: 32 lowercase hex characters (128 bits)."""
    return secrets.token_hex(16)


def nonce() -> str:
    """32 lowercase hex characters (128 bits), on every client answer: `os.urandom` directly,
    which is what `secrets.token_hex` calls, without its two calls on the way."""
    return os.urandom(16).hex()


# The id of the request this task serves, when the access log gave it one.
current_request: ContextVar[str] = ContextVar("current_request", default="")


def new_request_id() -> str:
    return secrets.token_hex(8)


def request_id() -> str:
    """The current request's id in the access log, else a new one."""
    return current_request.get() or new_request_id()


def digest(secret: str) -> str:
    """A fast digest for long random secrets (seller keys, tokens).

    A 128-bit random secret cannot be guessed, so a slow password hash adds nothing;
    SHA-256 keeps the lookup one indexed equality.
    """
    return hashlib.sha256(secret.encode()).hexdigest()


def event_id() -> str:
    """An event's id, also the idempotency id its receivers dedupe on: "evt_" and 24 hex (96 bits)."""
    return "evt_" + secrets.token_hex(12)
