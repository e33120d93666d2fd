"""Client API — Log."""

from __future__ import annotations

from typing import Any

from licensegate.domain import logs, settings
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param


@registry.operation(
    "log",
    group="Logs",
    summary="Log",
    requires="session",
    statuses=frozenset({200, 400, 401, 403, 429, 500, 503}),
    mutates=True,
    params=[
        Param(
            "message",
            required=True,
            max_length=logs.MAX_MESSAGE,
            strip=False,
            doc=f"the log line (at most {logs.MAX_MESSAGE} characters, kept as sent)",
        ),
        Param("pcuser", max_length=logs.MAX_PCUSER, doc="the user name on the client's computer"),
    ],
)
async def log(call: ClientCall) -> dict[str, Any]:
    """Store a log line from the client program, with the session's credential (username or
    license key; none before a login), `pcuser`, the caller's IP address and the time; the owner
    reads them with the seller API's Get Logs (`fetchalllogs`). Any session may log, logged in
    or not. KeyAuth answered with an empty body; this answers the usual envelope.

    When the application has a log forwarding URL (`updatesettings webhook=...`), the line is
    also posted there as a Discord-compatible JSON message after the response (so the call
    never waits for it): one embed titled `Log: <message>` (cut to 256 characters) with the
    fields Credential, PC user and IP and an ISO 8601 timestamp. The post goes through the
    outbound-request rules (time and size limits; internal targets refused unless the operator
    allows them) and is tried up to three times (at once, after 2 s, after 10 s more); a 2xx
    reply counts as delivered.

    Each session may store `LICENSEGATE_LOG_LINES_PER_SESSION` lines (100 by default), and the
    application keeps them `log_retention_days` (30 by default; `updatesettings logretention=`).
    Refusals: a missing `message` is 400 `missing_parameter`, a `message` over 1000 or `pcuser`
    over 64 characters 400 `parameter_too_long`; past the session's quota 403
    `log_quota_exceeded`."""
    session = call.live_session
    now = call.now()
    message = call.args.text("message")
    pcuser = call.args.opt_text("pcuser")
    await logs.record(
        call.db,
        call.app.id,
        session_id=session.id,
        quota=call.services.settings.log_lines_per_session,
        credential=session.credential,
        pcuser=pcuser,
        message=message,
        ip=call.ip,
        now=now,
    )
    url = settings.open_secret_url(call.services.secrets, call.app.log_webhook_url)
    if url:
        payload = logs.discord_message(
            message=message, credential=session.credential, pcuser=pcuser, ip=call.ip, now=now
        )
        logs.forward_later(call.services.background, call.services.settings, call.app.id, url, payload)
    return {"message": "Log saved"}
