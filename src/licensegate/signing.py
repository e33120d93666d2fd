"""Ed25519 answer signatures (API 1.3 style) and HMAC-SHA256 signatures (API 1.2 style).

Signing runs on every client answer, so it is libsodium through PyNaCl's thin binding (about
15 us for a typical body here, a quarter less than the `cryptography` package), and each
worker keeps the decrypted signing keys it has used (`SignerCache`), keyed by their sealed form:
a rotated key is a new sealed string, so no cache entry ever outlives its key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from nacl.bindings import crypto_sign, crypto_sign_open, crypto_sign_seed_keypair
from nacl.exceptions import BadSignatureError

SEED_BYTES = 32
SIGNATURE_HEX = 128


class Signer:
    """One Ed25519 private key, ready to sign."""

    __slots__ = ("_secret", "public_key")

    def __init__(self, seed: bytes) -> None:
        public, self._secret = crypto_sign_seed_keypair(seed)
        self.public_key = public.hex()

    def sign(self, message: bytes) -> str:
        """Lowercase hex of the detached signature (128 characters)."""
        signed: bytes = crypto_sign(message, self._secret)
        return signed[:64].hex()


def new_seed() -> bytes:
    return secrets.token_bytes(SEED_BYTES)


def public_key_of(seed: bytes) -> str:
    public, _secret = crypto_sign_seed_keypair(seed)
    return public.hex()


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


class SignerCache:
    """Signers by the sealed text of their seed; bounded so a flood of applications cannot grow it."""

    def __init__(self, limit: int = 10_000) -> None:
        self._limit = limit
        self._signers: dict[str, Signer] = {}

    def get(self, sealed: str) -> Signer | None:
        return self._signers.get(sealed)

    def put(self, sealed: str, signer: Signer) -> Signer:
        if len(self._signers) >= self._limit:
            self._signers.clear()
        self._signers[sealed] = signer
        return signer
