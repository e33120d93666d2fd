"""Client API — OTP Verify: turn two-factor codes on (`2faenable`) and off (`2fadisable`)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import otp
from licensegate.domain.errors import Refusal
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

GROUP = "Authentication"


def _user_id(call: ClientCall) -> int:
    user_id = call.live_session.user_id
    assert user_id is not None  # a validated session has its user
    return user_id


@registry.operation(
    "2faenable",
    group=GROUP,
    summary="OTP Verify: enable",
    requires="validated",
    params=[
        Param("code", max_length=16, doc="absent on the first call; the app's current code on the second")
    ],
    returns={"2fa": "first call only: {secret_code, QRCode (an otpauth:// URI)}"},
)
async def enable(call: ClientCall) -> dict[str, Any]:
    """Two calls. The first (no `code`) returns a new secret and its otpauth URI to show as a QR
    code; the second, with a code from the authenticator app, turns two-factor codes on (the
    secret must be confirmed within 10 minutes). From then on login and License Login need
    `code`, and each code is accepted once. Refusals: `otp_already_enabled` (409),
    `otp_not_pending` (409), `otp_invalid` (403)."""
    await call.limit_attempts(f"otp:{_user_id(call)}")
    msg = await call.messages()
    try:
        enrolment = await otp.enable(
            call.db,
            call.services.secrets,
            call.app,
            _user_id(call),
            call.args.opt_text("code"),
            msg,
            call.now(),
        )
    except Refusal:
        await call.failed_attempt()
        raise
    if enrolment is not None:
        return {"message": "Scan the QR code, then confirm with a code.", "2fa": enrolment}
    return {"message": "2fa successfully activated"}


@registry.operation(
    "2fadisable",
    group=GROUP,
    summary="OTP Verify: disable",
    requires="validated",
    params=[Param("code", required=True, max_length=16, doc="the app's current code")],
)
async def disable(call: ClientCall) -> dict[str, Any]:
    """Turn two-factor codes off, proven with a current code. Refusals: `otp_not_enabled` (409),
    `otp_invalid` (403)."""
    await call.limit_attempts(f"otp:{_user_id(call)}")
    msg = await call.messages()
    try:
        await otp.disable(
            call.db, call.services.secrets, _user_id(call), call.args.text("code"), msg, call.now()
        )
    except Refusal:
        await call.failed_attempt()
        raise
    return {"message": "2fa successfully disabled"}
