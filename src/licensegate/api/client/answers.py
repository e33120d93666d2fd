"""Writing a client answer: the envelope's last touches, the dialect's encoding, and signatures.

Every answer of the client API, on every path and for every outcome, is signed: the header
`x-signature-timestamp` (Unix seconds when it is sent) and `x-signature-ed25519` (lowercase hex
Ed25519 signature of `timestamp || body`), with the application's key when the call named a known
application and with the deployment's own key otherwise. Signed answers are never cached. A
`clientnonce` the request carried is echoed in the signed body, binding the answer to it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.responses import Response

from licensegate.api.client.legacy import Cipher10
from licensegate.api.envelope import ClientDialect
from licensegate.domain import errorcodes
from licensegate.secretbox import SecretBoxError
from licensegate.services import Services
from licensegate.signing import Signer, hmac_hex
from licensegate.store.database import DatabaseError

MAX_CLIENTNONCE = 64
log = logging.getLogger("licensegate")
JSON = b"application/json"
TEXT = b"text/plain; charset=utf-8"


def read_clientnonce(raw: Mapping[str, str]) -> str | None:
    value = raw.get("clientnonce")
    if value is None or value == "":
        return None
    if len(value) > MAX_CLIENTNONCE:
        raise errorcodes.PARAMETER_TOO_LONG(
            name="clientnonce", max_length=MAX_CLIENTNONCE, param="clientnonce"
        )
    return value


class SignedAnswer(Response):
    """A client answer as it is sent: its header list written out once, in bytes.

    Starlette's `Response` turns a dict of headers into this list on every answer (lower-casing
    and encoding each name); the client API answers with a fixed set, so it is built directly
    (a few microseconds of every call, measured with `bench/signing.py`)."""

    def __init__(self, body: bytes, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.body = body
        self.status_code = status
        self.background = None
        self.raw_headers = headers


def _signed_headers(signer: Signer, body: bytes, media_type: bytes) -> list[tuple[bytes, bytes]]:
    timestamp = str(int(time.time())).encode("ascii")
    return [
        (b"content-length", str(len(body)).encode("ascii")),
        (b"content-type", media_type),
        (b"x-signature-timestamp", timestamp),
        (b"x-signature-ed25519", signer.sign(timestamp + body).encode("ascii")),
        (b"cache-control", b"no-store"),
    ]


_unsigned_said: list[bool] = []  # whether this worker has logged an unsigned answer


def _unsigned_headers(raw: bytes, media_type: bytes) -> list[tuple[bytes, bytes]]:
    """For an answer no key can sign: the call named no application this worker knows, and
    neither the database nor the data folder's copy gives the deployment's key (a node that never
    reached its database yet). Said once in the log."""
    if not _unsigned_said:
        _unsigned_said.append(True)
        log.warning(
            "answering without a signature: the database does not answer and the data folder has "
            "no copy of the deployment's signing key yet (it is made when a worker first reads it)"
        )
    return [
        (b"content-length", str(len(raw)).encode("ascii")),
        (b"content-type", media_type),
        (b"cache-control", b"no-store"),
    ]


@dataclass(slots=True)
class Answering:
    """What one call has learnt, as it proceeds, about how its answer must be written."""

    dialect: ClientDialect
    clientnonce: str | None = None
    signing_key: str | None = None  # the application's, sealed, once the application is known
    secret: str | None = None  # the application's, sealed (API 1.2 HMAC)
    hmac_suffix: str | None = None  # API 1.2 after init: the session's enckey; key = "<enckey>-<secret>"
    cipher: Cipher10 | None = None  # a legacy 1.0 request, once its key is known
    legacy: bool = False
    database_failed: bool = False  # the database did not answer this call: do not ask it again

    def knows_app(self, signing_key: str, secret: str) -> None:
        self.signing_key, self.secret = signing_key, secret

    async def respond(
        self,
        services: Services,
        body: dict[str, Any],
        status: int,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """`body` answered: encoded as the dialect and the request want, then signed (with the
        application's key once it is known, else the deployment's)."""
        if self.clientnonce is not None:
            body["clientnonce"] = self.clientnonce
        raw = self.dialect.encode(orjson.dumps(body))
        media_type = JSON
        if self.cipher is not None:
            raw, media_type = self.cipher.encrypt(raw), TEXT
        return await self.send(services, raw, media_type, status, headers)

    async def send(
        self,
        services: Services,
        raw: bytes,
        media_type: bytes,
        status: int,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        """`raw` as it goes out, signed."""
        all_headers: list[tuple[bytes, bytes]] | None = None
        if self.signing_key is not None:  # the application's key: no database to ask
            try:
                all_headers = self._signed_by(
                    services, services.signers.signer(self.signing_key), raw, media_type
                )
            except SecretBoxError as exc:
                # The application's keys do not open (sealed under another deployment key): the
                # answer is still signed, by the deployment's key, never sent unsigned.
                log.error("a client answer signed by the deployment's key instead: %s", exc)
                self.signing_key = self.secret = self.hmac_suffix = None
        if all_headers is None:
            signer = await self._deployment_signer(services)
            if signer is None:
                all_headers = _unsigned_headers(raw, media_type)
            else:
                all_headers = self._signed_by(services, signer, raw, media_type)
        if headers:
            all_headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        return SignedAnswer(raw, status, all_headers)

    async def _deployment_signer(self, services: Services) -> Signer | None:
        """The deployment's signer, or None when no key can sign (`_unsigned_headers`)."""
        if self.database_failed:
            return services.signers.deployment_known()
        try:
            return await services.signers.deployment(services.db, services.clock.now())
        except DatabaseError:
            return None

    def _signed_by(
        self, services: Services, signer: Signer, raw: bytes, media_type: bytes
    ) -> list[tuple[bytes, bytes]]:
        """The headers of `raw` signed by `signer` (and, on API 1.2, its HMAC)."""
        all_headers = _signed_headers(signer, raw, media_type)
        if self.dialect.hmac:
            if self.secret is not None:
                secret = services.signers.secret(self.secret)
                key = secret if self.hmac_suffix is None else f"{self.hmac_suffix}-{secret}"
            else:
                # No application, no secret: a 1.2 library still finds the header (without it,
                # KeyAuth's Python one crashes) and reports a failed check with the answer's text.
                key = signer.public_key
            all_headers.append((b"signature", hmac_hex(key, raw).encode("ascii")))
        return all_headers
