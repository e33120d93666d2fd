"""OTP Verify: a user turns on two-factor codes in two steps (ask for a secret, then prove the
authenticator app has it) and turns them off with a valid code. Once on, login and License Login
need a code, and a code is accepted once."""

from __future__ import annotations

from typing import Any

from licensegate.domain import errorcodes, totp
from licensegate.domain.apps import ClientApp
from licensegate.domain.logins import OTP_SECRET, consume_otp, open_otp_secret
from licensegate.domain.messages import Messages
from licensegate.secretbox import SecretBox
from licensegate.store import logins as store
from licensegate.store.database import Database, Row

ENROLMENT_SECONDS = 600


async def _state(db: Database, user_id: int) -> Row:
    row = await store.otp_state(db, user_id)
    if row is None:
        raise errorcodes.SESSION_USER_GONE()
    return row


async def enable(
    db: Database, box: SecretBox, app: ClientApp, user_id: int, code: str | None, msg: Messages, now: int
) -> dict[str, Any] | None:
    """Without a code: start enrolment and return the secret and its otpauth URI. With a code:
    finish enrolment (returns None)."""
    state = await _state(db, user_id)
    if state["otp_enabled"]:
        raise errorcodes.OTP_ALREADY_ENABLED()
    if code is None:
        secret = totp.new_secret()
        await store.start_otp_enrolment(db, user_id, box.seal(secret, OTP_SECRET), now + ENROLMENT_SECONDS)
        return {
            "secret_code": secret,
            "QRCode": totp.provisioning_uri(secret, state["username"], app.name),
        }
    pending: str | None = state["otp_pending_secret"]
    if pending is None or (state["otp_pending_expires"] or 0) <= now:
        raise errorcodes.OTP_NOT_PENDING()
    step = totp.matching_step(open_otp_secret(box, pending), code, now)
    if step is None:
        raise errorcodes.OTP_INVALID(msg("otpinvalid"))
    if not await store.enable_otp(db, user_id, pending, step):
        raise errorcodes.OTP_ALREADY_ENABLED()
    return None


async def disable(db: Database, box: SecretBox, user_id: int, code: str, msg: Messages, now: int) -> None:
    state = await _state(db, user_id)
    if not state["otp_enabled"]:
        raise errorcodes.OTP_NOT_ENABLED()
    await consume_otp(db, box, user_id, state["otp_secret"], code, msg, now)
    await store.disable_otp(db, user_id)
