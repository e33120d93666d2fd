"""KeyAuth 1.0 libraries on `/api/1.0/`: requests whose `type` is the hex of an operation.

Such a library hex-encodes `type`, `name`, `ownerid` and `sessionid`, and encrypts its other
values with AES-256-CBC: the key is the ASCII of the first 32 hex digits of SHA-256 of the
application secret (at `init`) or of the session's `enckey` (after it), the IV the ASCII of the
first 16 hex digits of SHA-256 of the request's `init_iv`. It expects the whole answer encrypted
the same way, as hex. The interface document's plain dialect on the same path is unaffected: a
plain request names its operation in clear.
"""

from __future__ import annotations

import binascii
import hashlib
from collections.abc import Callable

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from licensegate.domain import errorcodes

HEX_FIELDS = ("type", "name", "ownerid", "sessionid")
# The values each operation's 1.0 library sends encrypted; everything else is in clear.
ENCRYPTED: dict[str, tuple[str, ...]] = {
    "init": ("ver", "enckey"),
    "register": ("username", "key", "pass", "email", "hwid"),
    "login": ("username", "pass", "hwid"),
    "license": ("key", "hwid"),
    "upgrade": ("username", "key"),
    "setvar": ("var", "data"),
    "getvar": ("var",),
    "var": ("varid",),
    "checkblacklist": ("hwid",),
    "chatget": ("channel",),
    "chatsend": ("channel", "message"),
    "log": ("message", "pcuser"),
    "webhook": ("webid", "params", "body", "conttype"),
    "file": ("fileid",),
    "ban": ("hwid",),
}
MAX_HEX_TYPE = 64
UNKNOWN_APPLICATION = b"KeyAuth_Invalid"  # the answer such a library reads as "no such application"


def _unhex(value: str) -> str | None:
    try:
        return bytes.fromhex(value).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def decoded_type(raw: dict[str, str], known: Callable[[str], bool]) -> str | None:
    """The operation a legacy request names, or None when this is not a legacy request."""
    value = raw.get("type", "")
    if known(value) or not value or len(value) > MAX_HEX_TYPE or len(value) % 2:
        return None
    decoded = _unhex(value)
    return decoded if decoded is not None and known(decoded) else None


def decode_identifiers(raw: dict[str, str]) -> dict[str, str]:
    decoded = dict(raw)
    for name in HEX_FIELDS:
        if name in raw:
            value = _unhex(raw[name])
            if value is None:
                raise errorcodes.INVALID_ENCODING(f"Parameter '{name}' is not hex-encoded.", param=name)
            decoded[name] = value
    return decoded


class Cipher10:
    """One legacy request's cipher: its key string and its `init_iv`."""

    __slots__ = ("_iv", "_key")

    def __init__(self, key_string: str, init_iv: str) -> None:
        self._key = hashlib.sha256(key_string.encode("utf-8")).hexdigest()[:32].encode("ascii")
        self._iv = hashlib.sha256(init_iv.encode("utf-8")).hexdigest()[:16].encode("ascii")

    def encrypt(self, data: bytes) -> bytes:
        padder = padding.PKCS7(128).padder()
        padded = padder.update(data) + padder.finalize()
        encryptor = Cipher(algorithms.AES(self._key), modes.CBC(self._iv)).encryptor()
        return (encryptor.update(padded) + encryptor.finalize()).hex().encode("ascii")

    def decrypt(self, hex_text: str) -> str:
        try:
            decryptor = Cipher(algorithms.AES(self._key), modes.CBC(self._iv)).decryptor()
            padded = decryptor.update(bytes.fromhex(hex_text)) + decryptor.finalize()
            unpadder = padding.PKCS7(128).unpadder()
            return (unpadder.update(padded) + unpadder.finalize()).decode("utf-8")
        except (ValueError, UnicodeDecodeError, binascii.Error) as exc:
            raise errorcodes.INVALID_ENCRYPTION() from exc

    def decrypt_params(self, op_type: str, raw: dict[str, str]) -> dict[str, str]:
        decrypted = dict(raw)
        for name in ENCRYPTED.get(op_type, ()):
            if raw.get(name):
                decrypted[name] = self.decrypt(raw[name])
        return decrypted
