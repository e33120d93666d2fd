"""WebAuthn security keys and passkeys as a dashboard second factor (py_webauthn does the
cryptography). Each ceremony answers one challenge, kept on the dashboard session that asked for
it for five minutes and cleared when answered, so a response cannot be replayed.

The relying party is the dashboard's public origin (`LICENSEGATE_PUBLIC_URL`): its host name is
the RP ID, so keys work only where the dashboard is reached under that name.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AttestationConveyancePreference,
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from licensegate.domain import errorcodes
from licensegate.domain.accounts import Account
from licensegate.domain.apps import check_name
from licensegate.store import passkeys as store
from licensegate.store import websessions as session_store
from licensegate.store.database import Executor, Row

CHALLENGE_SECONDS = 300
MAX_RESPONSE = 16 * 1024
RP_NAME = "licensegate"


@dataclass(frozen=True, slots=True)
class RelyingParty:
    id: str  # the host name browsers scope credentials to
    origin: str  # scheme://host[:port] the dashboard is served from


def _user_handle(account: Account) -> bytes:
    # Not the account id or name: a handle that names nobody outside this service.
    return hashlib.sha256(f"licensegate account {account.id}".encode()).digest()[:16]


def _descriptor(row: Row) -> PublicKeyCredentialDescriptor:
    transports = [AuthenticatorTransport(t) for t in row["transports"].split(",") if t in _TRANSPORTS]
    return PublicKeyCredentialDescriptor(id=base64url_to_bytes(row["credential_id"]), transports=transports)


_TRANSPORTS = frozenset(t.value for t in AuthenticatorTransport)


async def _remember(db: Executor, session_id: int, challenge: bytes, now: int) -> None:
    await session_store.set_challenge(db, session_id, bytes_to_base64url(challenge), now + CHALLENGE_SECONDS)


async def _challenge(db: Executor, session_id: int, now: int) -> bytes:
    challenge = await session_store.take_challenge(db, session_id, now)
    if challenge is None:
        raise errorcodes.CHALLENGE_EXPIRED()
    return base64url_to_bytes(challenge)


def _credential(response: str) -> dict[str, Any]:
    if len(response) > MAX_RESPONSE:
        raise errorcodes.INVALID_CREDENTIAL("The security key's answer is too large.")
    try:
        parsed = json.loads(response)
    except ValueError as exc:
        raise errorcodes.INVALID_CREDENTIAL() from exc
    if not isinstance(parsed, dict) or not isinstance(parsed.get("id"), str):
        raise errorcodes.INVALID_CREDENTIAL()
    return parsed


async def registration_options(
    db: Executor, rp: RelyingParty, account: Account, session_id: int, now: int
) -> str:
    """The options `navigator.credentials.create()` takes, as JSON."""
    existing = await store.list_for_account(db, account.id)
    options = generate_registration_options(
        rp_id=rp.id,
        rp_name=RP_NAME,
        user_name=account.username,
        user_id=_user_handle(account),
        attestation=AttestationConveyancePreference.NONE,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
        exclude_credentials=[_descriptor(row) for row in existing],
    )
    await _remember(db, session_id, options.challenge, now)
    return options_to_json(options)


async def register(
    db: Executor, rp: RelyingParty, account: Account, session_id: int, response: str, name: str, now: int
) -> int:
    """Check the browser's answer to the registration options and keep the new credential."""
    name = check_name(name or "Security key", "key name")
    credential = _credential(response)
    challenge = await _challenge(db, session_id, now)
    try:
        verified = verify_registration_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=rp.origin,
        )
    except WebAuthnException as exc:
        raise errorcodes.INVALID_CREDENTIAL(f"The security key could not be registered: {exc}") from exc
    transports = credential.get("response", {}).get("transports") or []
    passkey_id = await store.insert(
        db,
        account_id=account.id,
        credential_id=bytes_to_base64url(verified.credential_id),
        public_key=bytes_to_base64url(verified.credential_public_key),
        sign_count=verified.sign_count,
        transports=",".join(t for t in transports if isinstance(t, str) and t in _TRANSPORTS),
        name=name,
        now=now,
    )
    if passkey_id is None:
        raise errorcodes.PASSKEY_EXISTS()
    return passkey_id


async def authentication_options(
    db: Executor, rp: RelyingParty, account: Account, session_id: int, now: int
) -> str:
    """The options `navigator.credentials.get()` takes, as JSON: any key of this account."""
    keys = await store.list_for_account(db, account.id)
    options = generate_authentication_options(
        rp_id=rp.id,
        allow_credentials=[_descriptor(row) for row in keys],
        user_verification=UserVerificationRequirement.PREFERRED,
    )
    await _remember(db, session_id, options.challenge, now)
    return options_to_json(options)


async def authenticate(
    db: Executor, rp: RelyingParty, account: Account, session_id: int, response: str, now: int
) -> bool:
    """True when the answer is a valid signature of this session's challenge by one of the
    account's keys (its use is then recorded)."""
    credential = _credential(response)
    challenge = await _challenge(db, session_id, now)
    row = await store.find(db, account.id, credential["id"][:1024])
    if row is None:
        return False
    try:
        verified = verify_authentication_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=rp.origin,
            credential_public_key=base64url_to_bytes(row["public_key"]),
            credential_current_sign_count=row["sign_count"],
        )
    except WebAuthnException:
        return False
    return await store.used(db, row["id"], row["sign_count"], verified.new_sign_count, now)


async def list_for(db: Executor, account_id: int) -> list[Row]:
    return await store.list_for_account(db, account_id)


async def rename(db: Executor, account_id: int, passkey_id: int, name: str) -> None:
    if not await store.rename(db, account_id, passkey_id, check_name(name, "key name")):
        raise errorcodes.PASSKEY_NOT_FOUND()


async def remove(db: Executor, account_id: int, passkey_id: int) -> None:
    if not await store.delete(db, account_id, passkey_id):
        raise errorcodes.PASSKEY_NOT_FOUND()
