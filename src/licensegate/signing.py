"""Ed25519 answer signatures (API 1.3 style) and HMAC-SHA256 signatures (API 1.2 style).

Signing runs on every client answer, so it is libsodium through PyNaCl's thin binding (about
15 us for a typical body here, a quarter less than the `cryptography` package), and each
worker keeps the decrypted signing keys it has used (`SignerCache`), keyed by their sealed form:
a rotated key is a new sealed string, so no cache entry ever outlives its key.
"""

from __future__ import annotations

import secrets

from nacl.bindings import crypto_sign, crypto_sign_seed_keypair

from licensegate_client.signing import SIGNATURE_HEX, hmac_hex, verify

__all__ = [
    "SEED_BYTES",
    "SIGNATURE_HEX",
    "Signer",
    "SignerCache",
    "hmac_hex",
    "new_seed",
    "public_key_of",
    "verify",
]
SEED_BYTES = 32


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
