"""Time-based one-time passwords (RFC 6238: HMAC-SHA1, 30-second steps, 6 digits), as every
authenticator app implements them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
from urllib.parse import quote

STEP_SECONDS = 30
DIGITS = 6
# Codes of the previous and the next step are accepted too, for clocks a little apart.
WINDOW = 1


def new_secret() -> str:
    """160 random bits, base32 without padding (32 characters)."""
    return base64.b32encode(secrets.token_bytes(20)).decode().rstrip("=")


def _key(secret: str) -> bytes:
    padded = secret.upper() + "=" * (-len(secret) % 8)
    return base64.b32decode(padded)


def code_at(secret: str, step: int, digits: int = DIGITS) -> str:
    digest = hmac.new(_key(secret), struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    number = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return str(number % 10**digits).zfill(digits)


def step_of(unix_seconds: int) -> int:
    return unix_seconds // STEP_SECONDS


def matching_step(secret: str, code: str, now: int) -> int | None:
    """The time step whose code this is (within the window), or None."""
    code = code.strip()
    # ASCII only: str.isdigit() also accepts other scripts' digits, which compare_digest refuses.
    if len(code) != DIGITS or not code.isascii() or not code.isdigit():
        return None
    current = step_of(now)
    for step in range(current - WINDOW, current + WINDOW + 1):
        if hmac.compare_digest(code_at(secret, step), code):
            return step
    return None


def provisioning_uri(secret: str, account: str, issuer: str) -> str:
    """The otpauth:// URI authenticator apps read from a QR code."""
    label = quote(f"{issuer}:{account}", safe="")
    query = f"secret={secret}&issuer={quote(issuer, safe='')}&digits={DIGITS}&period={STEP_SECONDS}"
    return f"otpauth://totp/{label}?{query}"
