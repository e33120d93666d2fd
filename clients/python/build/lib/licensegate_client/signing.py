"""Checking licensegate's signatures: Ed25519 (every client answer, license files) and API 1.2's
HMAC-SHA256. The server imports these too (`licensegate.signing`), so both sides agree."""

from __future__ import annotations

import hashlib
import hmac

from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError

SIGNATURE_HEX = 128


def verify(public_key_hex: str, signature_hex: str, message: bytes) -> bool:
    """Whether `signature_hex` is a valid Ed25519 signature of `message` by that public key."""
    if len(signature_hex) != SIGNATURE_HEX:
        return False
    try:
        public = bytes.fromhex(public_key_hex)
        signature = bytes.fromhex(signature_hex)
        crypto_sign_open(signature + message, public)
    except (ValueError, BadSignatureError, TypeError):
        return False
    return True


def hmac_hex(key: str, body: bytes) -> str:
    """API 1.2's `signature` header: lowercase hex HMAC-SHA256 of the body."""
    return hmac.new(key.encode("utf-8"), body, hashlib.sha256).hexdigest()
