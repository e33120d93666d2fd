"""Client API — Webhook: the server calls a webhook the developer configured and returns the
reply, so the webhook's URL (and any secret in it) never reaches the client."""

from __future__ import annotations

from typing import Any

from licensegate.domain import webhooks
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import CLIENT_WEBHOOK_SUCCESS_CODE, Param

# The statuses the interface document lists for Webhook: an unknown webid (404) or throttling
# (429) is answered 403 with its own `error`, and an unexpected fault 403 `internal_error`.
WEBHOOK_STATUSES = frozenset({200, 400, 401, 403})


@registry.operation(
    "webhook",
    group="Webhooks",
    summary="Webhook",
    requires="session",
    statuses=WEBHOOK_STATUSES,
    success_code=CLIENT_WEBHOOK_SUCCESS_CODE,
    pinned=False,  # it waits for the target: no pooled connection is held meanwhile
    max_body_bytes=webhooks.MAX_CALL_BYTES,
    params=[
        Param("webid", required=True, max_length=webhooks.MAX_WEBID, doc="the webhook's id"),
        Param(
            "params",
            max_length=webhooks.MAX_PARAMS,
            doc="query parameters to add to the webhook's URL, as `a=1&b=2`",
        ),
        Param(
            "body",
            max_length=webhooks.MAX_BODY,
            strip=False,
            doc="a request body: when not empty the call is a POST with this body",
        ),
        Param(
            "conttype",
            max_length=webhooks.MAX_CONTENT_TYPE,
            doc=f"Content-Type of the body (default `{webhooks.DEFAULT_CONTENT_TYPE}`)",
        ),
        Param("message", max_length=2000, strip=False, doc="accepted for KeyAuth clients; not used"),
        Param("pcuser", max_length=128, doc="accepted for KeyAuth clients; not used"),
    ],
    returns={
        "response": "the text of the webhook's reply (decoded as UTF-8), whatever its HTTP status",
    },
)
async def webhook(call: ClientCall) -> dict[str, Any]:
    """Call the webhook `webid` and return the text of its reply in `response`. A webhook marked
    `authed` needs a logged-in session (403 `session_not_validated`).

    `params` are added to the webhook's URL as query parameters (never changing its scheme,
    host, port or path; a name the URL itself sets may not be sent again: 400 `param_fixed`); a
    non-empty `body` makes the call a POST with `conttype` as its Content-Type (400
    `invalid_content_type` for a line break or control character in it). `message` and `pcuser`,
    which KeyAuth's client libraries send, are accepted and neither forwarded nor stored.

    Any reply is a success, whatever its HTTP status (the message says when it was not 2xx).
    A call that cannot be made or completed is 403: `webhook_not_found`, `webhook_disabled` (a
    webhook imported from KeyAuth without its full URL, until the seller enters it again),
    `webhook_refused` (the server does not allow the target), `webhook_timeout`,
    `webhook_response_too_large` or `webhook_failed` (unreachable, too many redirects,
    undecodable reply); no message names the webhook's URL or host. Every call is noted in the
    application's webhook delivery log."""
    row = await webhooks.get(call.db, call.services.secrets, call.app.id, call.args.text("webid"))
    webhooks.require_enabled(row)
    if row["authed"]:
        await call.require_logged_in()
    request = webhooks.build_request(
        row["base_url"],
        row["user_agent"],
        params=call.args.opt_text("params"),
        body=call.args.opt_text("body"),
        content_type=call.args.opt_text("conttype"),
    )
    result = await webhooks.send(
        call.services.settings, call.db, request, app_id=call.app.id, row=row, now=call.now()
    )
    return {"message": result.message, "response": result.text}
