"""Client API — Tamper Detection (type `tamper`; KeyAuth has no such operation)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import tamper
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param


@registry.operation(
    "tamper",
    group="Security",
    summary="Tamper Detection",
    requires="session",
    statuses=frozenset({200, 400, 401, 403, 429, 500, 503}),
    mutates=True,
    params=[
        Param(
            "reason",
            required=True,
            max_length=tamper.MAX_REASON,
            doc="what was detected (a debugger, a patched file, ...)",
        ),
        Param("hwid", max_length=tamper.MAX_HWID, doc="the machine's hardware id"),
        Param(
            "details",
            max_length=tamper.MAX_DETAILS,
            strip=False,
            doc="anything else worth keeping (kept as sent)",
        ),
    ],
    returns={"banned": "true when the report banned the session's user"},
)
async def report_tamper(call: ClientCall) -> dict[str, Any]:
    """Report that the client program detected tampering. The report is recorded in the tamper
    log with the session's user and credential (when logged in), the HWID sent, the caller's IP
    address and the time; the owner reads it with the seller API's `fetchtamperlogs`.

    The application's `tamper_action` setting (`updatesettings tamperaction=log|ban`) decides
    what else happens: with `ban` and a logged-in session the user is banned (their HWIDs and
    last IP address are blacklisted too), the HWID sent is blacklisted, and all the user's
    sessions end, this one included; `banned` says whether that happened. A session that is not
    logged in is only recorded. (KeyAuth has no such operation: `tamper` is this service's
    name; its client-side `ban` is this service's `ban` operation.)

    Each session may record `LICENSEGATE_TAMPER_REPORTS_PER_SESSION` reports (10 by default),
    kept `log_retention_days` like client logs.
    Refusals: a missing `reason` is 400 `missing_parameter`; a `reason` or `hwid` over 256 or
    `details` over 2000 characters is 400 `parameter_too_long`; past the session's quota 403
    `log_quota_exceeded`."""
    session = call.live_session
    banned = await tamper.report(
        call.db,
        call.app,
        session_id=session.id,
        quota=call.services.settings.tamper_reports_per_session,
        user_id=session.user_id if session.validated else None,
        credential=session.credential,
        hwid=call.args.opt_text("hwid"),
        ip=call.ip,
        reason=call.args.text("reason"),
        details=call.args.opt_text("details"),
        now=call.now(),
    )
    return {"message": "Tamper event recorded", "banned": banned}
