"""Secrets at rest: AES-256-GCM under the deployment key (`keyring`).

    box = services.secrets
    sealed = box.seal("a value", "apps.secret")   # -> "lg1:<key id>:<base64url>"
    value = box.open(sealed, "apps.secret")

The purpose (say, the column the value lives in) is authenticated with the ciphertext, so a value
copied into another column does not decrypt there. Each ciphertext names the deployment key that
made it, so the key can be rotated (`licensegate rotate-key`) while old values still open.
"""

from __future__ import annotations

import base64
import binascii
import os
import time

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from licensegate.keyring import Keyring, key_id, read_key_file

PREFIX = "lg1"
NONCE_BYTES = 12
RELOAD_INTERVAL = 5.0  # seconds between re-reads of the key file for an unknown key id


class SecretBoxError(Exception):
    """A sealed value cannot be opened: malformed, tampered with, or sealed under a key this
    process does not have. The message never contains the value."""


def is_sealed(text: str | None) -> bool:
    return text is not None and text.startswith(PREFIX + ":")


class SecretBox:
    def __init__(self, keyring: Keyring) -> None:
        self._keyring = keyring
        self._ciphers = {kid: AESGCM(key) for kid, key in keyring.by_id().items()}
        self._current = keyring.current_id
        self._reloaded_at = 0.0

    @property
    def keyring(self) -> Keyring:
        return self._keyring

    @property
    def current_key_id(self) -> str:
        return self._current

    def seal(self, plaintext: str, purpose: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._ciphers[self._current].encrypt(nonce, plaintext.encode("utf-8"), _aad(purpose))
        payload = base64.urlsafe_b64encode(nonce + sealed).rstrip(b"=").decode("ascii")
        return f"{PREFIX}:{self._current}:{payload}"

    def open(self, sealed: str, purpose: str) -> str:
        parts = sealed.split(":")
        if len(parts) != 3 or parts[0] != PREFIX:
            raise SecretBoxError(f"not a sealed value (for {purpose})")
        kid, payload = parts[1], parts[2]
        cipher = self._ciphers.get(kid) or self._reload(kid)
        if cipher is None:
            raise SecretBoxError(
                f"a value for {purpose} was sealed under deployment key {kid}, which this process "
                "does not have: every node needs the same deployment key (see docs/operations.md)"
            )
        try:
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
            return cipher.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], _aad(purpose)).decode("utf-8")
        except (InvalidTag, ValueError, binascii.Error) as exc:
            raise SecretBoxError(f"a sealed value for {purpose} does not open (damaged or moved)") from exc

    def needs_resealing(self, sealed: str) -> bool:
        return not sealed.startswith(f"{PREFIX}:{self._current}:")

    def _reload(self, kid: str) -> AESGCM | None:
        """Another process rotated the key file: pick up its keys (at most every few seconds)."""
        path = self._keyring.path
        if path is None or time.monotonic() - self._reloaded_at < RELOAD_INTERVAL:
            return None
        self._reloaded_at = time.monotonic()
        keyring = read_key_file(path)
        self._keyring = keyring
        self._ciphers = {key_id(key): AESGCM(key) for key in keyring.keys}
        self._current = keyring.current_id
        return self._ciphers.get(kid)


def _aad(purpose: str) -> bytes:
    return b"licensegate\x00" + purpose.encode("utf-8")
