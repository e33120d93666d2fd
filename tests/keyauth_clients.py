"""Independent client implementations of KeyAuth's API 1.0 (AES, hex) and API 1.2 (HMAC), written
from the protocol reference (keyauth-client-api.md §1.5 and §1.6), not from licensegate's server
code, so the tests check the server against the protocol rather than against itself. Only
httpx, hashlib/hmac and the `cryptography` package's AES are used here."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

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
        if text.startswith("{") or text == "KeyAuth_Invalid":  # answered before it could encrypt
            return {"plain": True, **orjson.loads(text)} if text.startswith("{") else {"plain": True}
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
            response.headers.get("signature", ""), self.expected_signature(type_, response.content)
        ):
            raise AssertionError(f"signature checksum failed for {type_}: {response.text[:200]}")
        body: dict[str, Any] = orjson.loads(response.content)
        return body

    async def init(self, **params: str) -> dict[str, Any]:
        body = await self.call("init", enckey=self.enckey, **params)
        if body.get("success"):
            self.sessionid = body["sessionid"]
        return body
