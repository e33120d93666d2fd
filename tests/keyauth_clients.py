"""Independent client implementations of KeyAuth's API 1.0 (AES, hex), API 1.2 (HMAC) and API 1.3
(Ed25519), written from the protocol reference (keyauth-client-api.md §1.5 and §1.6) and from what
the published libraries are known to check and how they read an answer (keyauth-sdk-compat.md),
not from licensegate's server code, so the tests check the server against the protocol rather than
against itself. Only httpx, hashlib/hmac, PyNaCl's Ed25519 and the `cryptography` package's AES
are used here.

`LibraryExit` stands for what those libraries do on a failure: print a line and end the program.
Their `init` compares the answer with `KeyAuth_Invalid` ("The application doesn't exist") after
the signature check and before anything else; otherwise an unsuccessful answer's `message` is
printed."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

# Values a 1.0 client encrypts, per type; everything else but the hex-encoded identifiers is clear.
ENCRYPTED_1_0: dict[str, tuple[str, ...]] = {
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
HEX_ENCODED_1_0 = ("type", "name", "ownerid", "sessionid")
NO_SUCH_APPLICATION = "KeyAuth_Invalid"
# The types whose answers KeyAuth's Python 1.3 library does not verify.
UNCHECKED_1_3 = ("log", "file", "2faenable", "2fadisable")
MAX_AGE_1_3 = 25


class LibraryExit(Exception):
    """A KeyAuth library printed this line and ended the program."""


def read_init(text: str) -> dict[str, Any]:
    """How every KeyAuth library reads a verified `init` answer."""
    if text == NO_SUCH_APPLICATION:
        raise LibraryExit("The application doesn't exist")
    body: dict[str, Any] = orjson.loads(text)
    if not body["success"]:
        raise LibraryExit(body["message"])
    return body


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def aes_encrypt(plain: str, key_string: str, iv_string: str) -> str:
    """KeyAuth 1.0: AES-256-CBC, key = ASCII of the first 32 hex digits of SHA-256(key string),
    IV = ASCII of the first 16 hex digits of SHA-256(iv string), PKCS#7, lowercase hex out."""
    key = _sha256_hex(key_string)[:32].encode("ascii")
    iv = _sha256_hex(iv_string)[:16].encode("ascii")
    padder = padding.PKCS7(128).padder()
    data = padder.update(plain.encode("utf-8")) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return (encryptor.update(data) + encryptor.finalize()).hex()


def aes_decrypt(hex_text: str, key_string: str, iv_string: str) -> str:
    key = _sha256_hex(key_string)[:32].encode("ascii")
    iv = _sha256_hex(iv_string)[:16].encode("ascii")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    data = decryptor.update(bytes.fromhex(hex_text)) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    return (unpadder.update(data) + unpadder.finalize()).decode("utf-8")


@dataclass
class Legacy10Client:
    """A KeyAuth 1.0 library: hex identifiers, AES-encrypted values and answers."""

    http: httpx.AsyncClient
    ownerid: str
    name: str
    secret: str
    path: str = "/api/1.0/"
    sessionid: str | None = None
    enckey: str = field(default_factory=lambda: secrets.token_hex(16))
    last_status: int = 0
    last_headers: httpx.Headers | None = None
    last_raw: bytes = b""

    async def call(self, type_: str, /, **params: str) -> dict[str, Any]:
        init_iv = _sha256_hex(secrets.token_hex(4))  # as the old libraries did
        key_string = self.secret if type_ == "init" else self.enckey
        form: dict[str, str] = {
            "type": type_.encode().hex(),
            "name": self.name.encode().hex(),
            "ownerid": self.ownerid.encode().hex(),
            "init_iv": init_iv,
        }
        if self.sessionid is not None and type_ != "init":
            form["sessionid"] = self.sessionid.encode().hex()
        encrypted = ENCRYPTED_1_0.get(type_, ())
        for name, value in params.items():
            form[name] = aes_encrypt(value, key_string, init_iv) if name in encrypted else value
        response = await self.http.post(self.path, data=form)
        self.last_status, self.last_headers, self.last_raw = (
            response.status_code,
            response.headers,
            response.content,
        )
        text = response.text
        if text == NO_SUCH_APPLICATION:
            raise LibraryExit("The application doesn't exist")
        if text.startswith("{"):  # answered before it could encrypt
            return {"plain": True, **orjson.loads(text)}
        body: dict[str, Any] = orjson.loads(aes_decrypt(text, key_string, init_iv))
        return body

    async def init(self, **params: str) -> dict[str, Any]:
        body = await self.call("init", enckey=self.enckey, **params)
        if body.get("success"):
            self.sessionid = body["sessionid"]
        return body


@dataclass
class Hmac12Client:
    """A KeyAuth 1.2 library: plain form POSTs; every answer's `signature` header is the HMAC-SHA256
    of the body keyed with the secret (init) or `<enckey>-<secret>` (after init)."""

    http: httpx.AsyncClient
    ownerid: str
    name: str
    secret: str
    path: str = "/api/1.2/"
    sessionid: str | None = None
    enckey: str = field(default_factory=lambda: secrets.token_hex(8))
    last_response: httpx.Response | None = None

    def expected_signature(self, type_: str, body: bytes) -> str:
        key = self.secret if type_ == "init" else f"{self.enckey}-{self.secret}"
        return hmac.new(key.encode(), body, hashlib.sha256).hexdigest()

    async def call(self, type_: str, /, **params: str) -> dict[str, Any]:
        form = {"type": type_, "name": self.name, "ownerid": self.ownerid, **params}
        if self.sessionid is not None and type_ != "init":
            form["sessionid"] = self.sessionid
        response = await self.http.post(self.path, data=form)
        self.last_response = response
        if type_ != "log" and not hmac.compare_digest(
            response.headers["signature"],  # KeyAuth's Python 1.2 library: KeyError without it
            self.expected_signature(type_, response.content),
        ):
            raise AssertionError(f"signature checksum failed for {type_}: {response.text[:200]}")
        body: dict[str, Any] = orjson.loads(response.content)
        return body

    async def init(self, **params: str) -> dict[str, Any]:
        body = await self.call("init", enckey=self.enckey, **params)
        if body.get("success"):
            self.sessionid = body["sessionid"]
        return body

    async def start(self, **params: str) -> dict[str, Any]:
        """`init` as the library's own `init` reads it (a failure ends the program)."""
        try:
            await self.call("init", enckey=self.enckey, **params)
        except AssertionError:
            raise LibraryExit(
                "Signature checksum failed. Request was tampered with or session ended most likely."
            ) from None
        assert self.last_response is not None
        body = read_init(self.last_response.text)
        self.sessionid = body["sessionid"]
        return body


@dataclass
class Ed25519Client13:
    """A KeyAuth 1.3 library: plain form POSTs; every answer but `UNCHECKED_1_3`'s must carry
    `x-signature-timestamp` (at most 25 s old) and `x-signature-ed25519` verifying, over
    `timestamp || body`, with the ONE public key the program embeds, whatever the answer says."""

    http: httpx.AsyncClient
    ownerid: str
    name: str
    public_key: str
    path: str = "/api/1.3/"
    sessionid: str | None = None

    async def call(self, type_: str, /, **params: str) -> str:
        form = {"type": type_, "name": self.name, "ownerid": self.ownerid, **params}
        if self.sessionid is not None and type_ != "init":
            form["sessionid"] = self.sessionid
        response = await self.http.post(self.path, data=form)
        if type_ in UNCHECKED_1_3:
            return response.text
        signature = response.headers.get("x-signature-ed25519")
        timestamp = response.headers.get("x-signature-timestamp")
        if not signature or not timestamp:
            raise LibraryExit("Missing headers for signature verification.")
        if time.time() - int(timestamp) > MAX_AGE_1_3:
            raise LibraryExit("Timestamp is too old (exceeded 20 seconds + buffer).")
        try:
            VerifyKey(bytes.fromhex(self.public_key)).verify(
                timestamp.encode() + response.content, bytes.fromhex(signature)
            )
        except (BadSignatureError, ValueError):
            raise LibraryExit(
                "Signature checksum failed. Request was tampered with or session ended most likely."
            ) from None
        return response.text

    async def init(self, **params: str) -> dict[str, Any]:
        body = read_init(await self.call("init", **params))
        self.sessionid = body["sessionid"]
        return body

    async def json(self, type_: str, /, **params: str) -> dict[str, Any]:
        body: dict[str, Any] = orjson.loads(await self.call(type_, **params))
        return body
