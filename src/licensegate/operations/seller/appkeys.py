"""Seller API — Client Keys: show and rotate what client libraries are built with: the
application's Ed25519 public key (verifies every client answer) and its secret (API 1.2 HMAC and
legacy 1.0 encryption). Owner-only (area `sellerkeys`); the seller log keeps no answers, and the
audit log records a rotation without the secret."""

from __future__ import annotations

from typing import Any

from licensegate.domain import appkeys
from licensegate.domain.permissions import Area
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Client Keys"
AREA: Area = "sellerkeys"


@registry.operation(
    "getappkeys",
    group=GROUP,
    summary="Show Client Keys",
    area=AREA,
    returns={
        "public_key": "the Ed25519 public key (64 hex) clients verify answers with",
        "secret": "the application secret (64 hex) API 1.2 and legacy 1.0 clients are built with",
    },
)
async def show(call: SellerCall) -> dict[str, Any]:
    """The keys to paste into a client library (see docs/clients.md for where each goes)."""
    keys = await appkeys.client_keys(call.db, call.services.secrets, call.app_id)
    return {
        "message": "Successfully retrieved client keys",
        "public_key": keys.public_key,
        "secret": keys.secret,
    }


@registry.operation(
    "rotatesigningkey",
    group=GROUP,
    summary="Rotate Signing Key",
    area=AREA,
    mutates=True,
    returns={"public_key": "the new Ed25519 public key (64 hex)"},
)
async def rotate_signing_key(call: SellerCall) -> dict[str, Any]:
    """A new Ed25519 key pair: every answer from now on is signed with it, so clients built with the
    old public key stop accepting answers until they ship the new one."""
    before = (await appkeys.client_keys(call.db, call.services.secrets, call.app_id)).public_key
    public_key = await appkeys.rotate_signing_key(call.db, call.services.secrets, call.app_id, call.now())
    call.record("app", before={"public_key": before}, after={"public_key": public_key})
    return {"message": "Successfully rotated the signing key", "public_key": public_key}


@registry.operation(
    "rotatesecret",
    group=GROUP,
    summary="Rotate Application Secret",
    area=AREA,
    mutates=True,
    returns={"secret": "the new application secret (64 hex); API 1.2 and legacy 1.0 clients need it"},
)
async def rotate_secret(call: SellerCall) -> dict[str, Any]:
    """A new application secret: API 1.2 and legacy 1.0 clients built with the old one stop
    accepting answers until they ship the new one."""
    secret = await appkeys.rotate_secret(call.db, call.services.secrets, call.app_id, call.now())
    call.record("app", after={"secret": "rotated"})
    return {"message": "Successfully rotated the application secret", "secret": secret}
