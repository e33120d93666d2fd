"""Writing a client answer: the envelope's last touches, the dialect's encoding, and signatures.

Every answer of the client API, on every path and for every outcome, is signed: the header
`x-signature-timestamp` (Unix seconds when it is sent) and `x-signature-ed25519` (lowercase hex
Ed25519 signature of `timestamp || body`), with the application's key when the call named a known
application and with the deployment's own key otherwise. Signed answers are never cached. A
`clientnonce` the request carried is echoed in the signed body, binding the answer to it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.responses import Response

from licensegate.api.client.legacy import Cipher10
from licensegate.api.envelope import ClientDialect
from licensegate.domain import errorcodes
from licensegate.services import Services
from licensegate.signing import Signer, hmac_hex

MAX_CLIENTNONCE = 64
JSON = "application/json"


def read_clientnonce(raw: Mapping[str, str]) -> str | None:
    value = raw.get("clientnonce")
    if value is None or value == "":
        return None
    if len(value) > MAX_CLIENTNONCE:
        raise errorcodes.PARAMETER_TOO_LONG(
            name="clientnonce", max_length=MAX_CLIENTNONCE, param="clientnonce"
        )
    return value


def signature_headers(signer: Signer, body: bytes) -> dict[str, str]:
    timestamp = str(int(time.time()))
    return {
        "x-signature-timestamp": timestamp,
        "x-signature-ed25519": signer.sign(timestamp.encode("ascii") + body),
        "cache-control": "no-store",
    }


async def signed_response(
    services: Services,
    body: bytes,
    status: int,
    *,
    signer: Signer | None = None,
    headers: Mapping[str, str] | None = None,
    media_type: str = JSON,
) -> Response:
    """`body` as it will be sent, signed (with the deployment's key unless `signer` is given)."""
    if signer is None:
        signer = await services.signers.deployment(services.db, services.clock.now())
    all_headers = signature_headers(signer, body)
    if headers:
        all_headers.update(headers)
    return Response(body, status_code=status, media_type=media_type, headers=all_headers)


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

    def knows_app(self, signing_key: str, secret: str) -> None:
        self.signing_key, self.secret = signing_key, secret

    async def respond(
        self,
        services: Services,
        body: dict[str, Any],
        status: int,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        if self.clientnonce is not None:
            body["clientnonce"] = self.clientnonce
        raw = self.dialect.encode(orjson.dumps(body))
        media_type = JSON
        if self.cipher is not None:
            raw, media_type = self.cipher.encrypt(raw), "text/plain"
        signer = services.signers.signer(self.signing_key) if self.signing_key is not None else None
        extra = dict(headers) if headers else {}
        if self.dialect.hmac and self.secret is not None:
            secret = services.signers.secret(self.secret)
            key = secret if self.hmac_suffix is None else f"{self.hmac_suffix}-{secret}"
            extra["signature"] = hmac_hex(key, raw)
        return await signed_response(
            services, raw, status, signer=signer, headers=extra, media_type=media_type
        )
