"""The signed license file's format (docs/offline.md): written by the server, read by programs.

    LICENSEGATE LICENSE FILE v1 ed25519 kid=<key id>
    <base64 of the JSON payload>
    <base64 of the Ed25519 signature>

The signature covers the first two lines exactly as written (ASCII, joined by one `\\n`), so the
header (algorithm and key id) cannot be swapped either. The key id names which of the
application's public keys signed it; the program holds those keys itself (its trust store) and
never trusts a key carried by a file. Encrypted files say `aes-256-gcm+ed25519`: their second
line is base64 of nonce (12 bytes) || ciphertext || tag, under a key derived with HKDF-SHA256
from the license key (input key material) and the HWID (salt), with the header line as
associated data: a copy on another machine, or without the key, cannot be read.

This module imports nothing of the server: `licensegate_client` verifies files with it offline
(the server writes them with it, through `licensegate.licensefile`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from licensegate_client.signing import verify

MAGIC = "LICENSEGATE LICENSE FILE v1"
PLAIN = "ed25519"
ENCRYPTED = "aes-256-gcm+ed25519"
KDF_INFO = b"licensegate license file v1"
NONCE_BYTES = 12


class Signer(Protocol):
    """What signs a file (the server's `licensegate.signing.Signer`): hex Ed25519 of a message."""

    def sign(self, message: bytes) -> str: ...


DEFAULT_SKEW = 300  # seconds a verifying machine's clock may be off

Reason = Literal[
    "malformed",  # not a license file, or cut or joined wrongly
    "unknown_key",  # signed by a key id the program does not trust
    "tampered",  # the signature does not verify: the file was changed
    "cannot_decrypt",  # encrypted for another license key or HWID
    "wrong_application",  # another application's file
    "wrong_hwid",  # bound to another machine
    "expired",  # past its expiry (beyond the tolerated skew)
    "not_yet_valid",  # issued in the future of this machine's clock (beyond the skew)
]


class LicenseFileError(Exception):
    """A file that must not be trusted; `reason` says why (see `Reason`)."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message)
        self.reason: Reason = reason


def key_id(public_key_hex: str) -> str:
    """A public key's id: base64url (no padding) of the first 16 bytes of SHA-256 of its 32 bytes."""
    digest = hashlib.sha256(bytes.fromhex(public_key_hex)).digest()[:16]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def file_key(license_key: str, hwid: str) -> bytes:
    """The AES-256 key of an encrypted file: HKDF-SHA256(ikm=license key, salt=HWID)."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=hwid.encode(), info=KDF_INFO)
    return hkdf.derive(license_key.encode())


def new_serial() -> str:
    return secrets.token_hex(16)


def header(kid: str, encrypted: bool) -> str:
    return f"{MAGIC} {ENCRYPTED if encrypted else PLAIN} kid={kid}"


def write(payload: Mapping[str, Any], signer: Signer, kid: str, *, encrypt_with: bytes | None = None) -> str:
    """The file's text: `payload` signed (and, with `encrypt_with`, encrypted first)."""
    head = header(kid, encrypt_with is not None)
    body = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    if encrypt_with is not None:
        nonce = secrets.token_bytes(NONCE_BYTES)
        body = nonce + AESGCM(encrypt_with).encrypt(nonce, body, head.encode("ascii"))
    second = base64.b64encode(body).decode("ascii")
    signature = bytes.fromhex(signer.sign(f"{head}\n{second}".encode("ascii")))
    return f"{head}\n{second}\n{base64.b64encode(signature).decode('ascii')}\n"


@dataclass(frozen=True)
class LicenseFile:
    """A verified file's payload."""

    payload: dict[str, Any] = field(repr=False)
    kid: str
    encrypted: bool

    @property
    def serial(self) -> str:
        return str(self.payload["serial"])

    @property
    def user(self) -> str:
        return str(self.payload["user"])

    @property
    def expires(self) -> int:
        return int(self.payload["expires"])

    @property
    def entitlements(self) -> list[dict[str, Any]]:
        return list(self.payload.get("entitlements") or [])

    def has(self, code: str) -> bool:
        return any(item.get("code") == code for item in self.entitlements)


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise LicenseFileError("malformed", "a line of the file is not base64") from None


def read(
    text: str,
    trusted: Mapping[str, str],
    *,
    ownerid: str,
    name: str,
    hwid: str | None,
    now: float,
    license_key: str | None = None,
    skew: int = DEFAULT_SKEW,
) -> LicenseFile:
    """Verify a file offline and return its payload, or raise `LicenseFileError`.

    `trusted` maps key ids to the public keys (64 hex) the program ships; `ownerid` and `name`
    are the program's own application; `hwid` this machine's (None: only a file bound to no
    HWID is accepted); `license_key` decrypts an encrypted file."""
    lines = text.strip().splitlines()
    if len(lines) != 3:
        raise LicenseFileError("malformed", "a license file has exactly three lines")
    head, second, signature_b64 = (line.strip() for line in lines)
    parts = head.split(" ")
    if " ".join(parts[:4]) != MAGIC or len(parts) != 6 or parts[4] not in (PLAIN, ENCRYPTED):
        raise LicenseFileError("malformed", "the first line is not a licensegate license file's header")
    if not parts[5].startswith("kid="):
        raise LicenseFileError("malformed", "the header names no key id")
    kid, encrypted = parts[5][4:], parts[4] == ENCRYPTED
    public_key = trusted.get(kid)
    if public_key is None:
        raise LicenseFileError(
            "unknown_key", f"the file is signed by key {kid}, which this program does not trust"
        )
    signature = _b64(signature_b64)
    if not verify(public_key, signature.hex(), f"{head}\n{second}".encode()):
        raise LicenseFileError("tampered", "the signature does not verify: the file was altered")
    body = _b64(second)
    if encrypted:
        if license_key is None or hwid is None:
            raise LicenseFileError(
                "cannot_decrypt", "an encrypted file needs the license key and this machine's HWID"
            )
        try:
            body = AESGCM(file_key(license_key, hwid)).decrypt(
                body[:NONCE_BYTES], body[NONCE_BYTES:], head.encode("ascii")
            )
        except (InvalidTag, ValueError):
            raise LicenseFileError(
                "cannot_decrypt", "the file was encrypted for another license key or another machine"
            ) from None
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise LicenseFileError("malformed", "the payload is not JSON") from None
    if not isinstance(payload, dict):
        raise LicenseFileError("malformed", "the payload is not a JSON object")
    return LicenseFile(
        _checked(payload, ownerid=ownerid, name=name, hwid=hwid, now=now, skew=skew), kid, encrypted
    )


def _checked(
    payload: dict[str, Any], *, ownerid: str, name: str, hwid: str | None, now: float, skew: int
) -> dict[str, Any]:
    app = payload.get("app") or {}
    if app.get("ownerid") != ownerid or app.get("name") != name:
        raise LicenseFileError("wrong_application", "the file is another application's")
    if payload.get("hwid") is not None and payload.get("hwid") != hwid:
        raise LicenseFileError("wrong_hwid", "the file is bound to another machine")
    expires, issued = payload.get("expires"), payload.get("issued")
    if not isinstance(expires, int) or not isinstance(issued, int):
        raise LicenseFileError("malformed", "the payload has no issue or expiry time")
    if now > expires + skew:
        raise LicenseFileError("expired", "the file has expired: connect once to get a new one")
    if now < issued - skew:
        raise LicenseFileError(
            "not_yet_valid", "the file was issued after this machine's time: check the clock"
        )
    return payload
