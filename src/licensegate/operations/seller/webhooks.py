"""Seller API — Webhooks: base URLs the client API's Webhook operation calls on the server, so
the URL (and any secret in it) never reaches the client."""

from __future__ import annotations

from typing import Any

from licensegate import outbound
from licensegate.domain import webhooks
from licensegate.domain.permissions import Area
from licensegate.operations.declarations import Param
from licensegate.operations.seller.registry import SellerCall, registry

GROUP = "Webhooks"
AREA: Area = "webhooks"
WEBID = Param("webid", required=True, max_length=webhooks.MAX_WEBID, doc="the webhook's id")
WEBHOOK_FIELDS = (
    "{webid, short_baselink (scheme://host/path of the base URL: never its query string or "
    "credentials), useragent, authed (0/1), enabled (0: imported from KeyAuth without its full URL, "
    "refused to clients until `editwebhook` gives it a `baseurl`)}"
)


@registry.operation(
    "addwebhook",
    group=GROUP,
    summary="Add Webhook",
    area=AREA,
    mutates=True,
    params=[
        Param(
            "baseurl",
            required=True,
            max_length=webhooks.MAX_URL,
            secret=True,  # the base URL usually carries the secret of the service it calls
            doc="the http(s) URL the client's Webhook call is sent to; internal addresses are refused",
        ),
        Param(
            "ua",
            max_length=webhooks.MAX_USER_AGENT,
            aliases=("us",),  # KeyAuth's Discord bot sends `us`
            doc=f"User-Agent of the outbound call (default `{webhooks.DEFAULT_USER_AGENT}`)",
        ),
        Param(
            "authed", "bool", max_length=5, doc="1: only a logged-in client session may call it (default 1)"
        ),
        Param(
            "webid",
            max_length=webhooks.MAX_WEBID,
            doc="an id of your choice (letters, digits, _ and -); default 10 random letters and digits",
        ),
    ],
    returns={"message": "`Successfully added webhook!`", "webid": "the webhook's id"},
)
async def add(call: SellerCall) -> dict[str, Any]:
    """Add a webhook. The base URL must be http or https and must not lead to an internal
    address unless the operator allows it (400 `target_not_allowed`); a host name that does not
    resolve is refused too (400 `host_not_found`). A `webid` already in use: 409 `webhook_exists`."""
    row = await webhooks.add(
        call.services.settings,
        call.db,
        call.services.secrets,
        call.app_id,
        base_url=call.args.text("baseurl"),
        user_agent=call.args.opt_text("ua"),
        authed=call.args.flag("authed", default=True),
        webid=call.args.opt_text("webid"),
        now=call.now(),
    )
    call.record(f"webhook:{row['webid']}", before=None, after=webhooks.audit_view(row))
    return {"message": "Successfully added webhook!", "webid": row["webid"]}


@registry.operation(
    "editwebhook",
    group=GROUP,
    summary="Edit Webhook",
    area=AREA,
    mutates=True,
    params=[
        WEBID,
        Param(
            "baseurl",
            max_length=webhooks.MAX_URL,
            secret=True,
            doc="a new http(s) base URL (checked as `addwebhook` checks it)",
        ),
        Param("ua", max_length=webhooks.MAX_USER_AGENT, aliases=("us",), doc="a new User-Agent"),
        Param("authed", "bool", max_length=5, doc="1: only a logged-in client session may call it"),
    ],
    returns={"message": "`Successfully edited webhook!`"},
)
async def edit(call: SellerCall) -> dict[str, Any]:
    """Change a webhook's base URL, user agent or authed flag; what is not given stays (400
    `nothing_to_change` when nothing is). The base URL is checked as `addwebhook` checks it; a
    new one enables a webhook imported from KeyAuth without its full URL. The audit entry names
    the base URL's host only, never the URL."""
    before, after = await webhooks.edit(
        call.services.settings,
        call.db,
        call.services.secrets,
        call.app_id,
        call.args.text("webid"),
        base_url=call.args.opt_text("baseurl"),
        user_agent=call.args.opt_text("ua"),
        authed=call.args.opt_flag("authed"),
    )
    shown_before, shown_after = webhooks.audit_view(before), webhooks.audit_view(after)
    if before["base_url"] != after["base_url"]:
        shown_after["url_changed"] = 1  # the host may stay the same while the URL changed
    call.record(f"webhook:{after['webid']}", before=shown_before, after=shown_after)
    return {"message": "Successfully edited webhook!"}


@registry.operation(
    "testwebhook",
    group=GROUP,
    summary="Test Webhook",
    area=AREA,
    mutates=True,  # the target acts on the call: the audit log says who made it
    max_body_bytes=webhooks.MAX_CALL_BYTES,
    params=[
        WEBID,
        Param(
            "params",
            max_length=webhooks.MAX_PARAMS,
            secret=True,
            doc="query parameters to add, as a client's Webhook call sends them (`a=1&b=2`)",
        ),
        Param(
            "body",
            max_length=webhooks.MAX_BODY,
            strip=False,
            secret=True,
            doc="a request body: when not empty the call is a POST with this body",
        ),
    ],
    returns={
        "status": "the target's HTTP status, or null when no reply came",
        "duration_ms": "how long the call took, in milliseconds",
        "error": "why the call failed (null when a reply came)",
        "error_code": "outbound's code for the failure: `target_not_allowed`, `timeout`, "
        "`connection_failed`, `response_too_large`, ... (null when a reply came)",
        "response": f"the start of the reply (at most {webhooks.TEST_EXCERPT} characters)",
    },
)
async def test(call: SellerCall) -> dict[str, Any]:
    """Call a webhook now, as a client's Webhook call with these `params` and `body` would (its
    stored user agent, the server's time and size limits, internal targets refused unless the
    operator allows them), and say how it went. A call that fails is still a success of this
    operation: `error` says why. The call is noted in the delivery log like a client's. The
    target acts on it as on any call: a base URL that changes something there changes it. A
    webhook imported without its full URL is not called (403 `webhook_disabled`)."""
    delivery = await webhooks.test(
        call.services.settings,
        call.db,
        call.services.secrets,
        call.app_id,
        call.args.text("webid"),
        params=call.args.opt_text("params"),
        body=call.args.opt_text("body"),
        now=call.now(),
    )
    failure, result = delivery.failure, delivery.result
    call.record(
        f"webhook:{call.args.text('webid')}",
        after={"test": delivery.status if failure is None else failure.error},
    )
    if failure is not None:
        message = f"The test call failed after {delivery.duration_ms} ms: {failure.message}"
    else:
        message = f"The target answered with HTTP status {delivery.status} in {delivery.duration_ms} ms."
    return {
        "message": message,
        "status": delivery.status,
        "duration_ms": delivery.duration_ms,
        "error": failure.message if failure is not None else None,
        "error_code": failure.error if failure is not None else None,
        "response": result.text[: webhooks.TEST_EXCERPT] if result is not None else "",
    }


@registry.operation(
    "fetchallwebhooks",
    group=GROUP,
    summary="Get All Webhooks",
    area=AREA,
    returns={"webhooks": f"[{WEBHOOK_FIELDS}], oldest first"},
)
async def fetch_all(call: SellerCall) -> dict[str, Any]:
    """The application's webhooks (an empty list when there are none). The full base URL is
    never returned."""
    rows = await webhooks.list_all(call.db, call.services.secrets, call.app_id)
    return {"message": "Successfully retrieved webhooks", "webhooks": [webhook_entry(row) for row in rows]}


def webhook_entry(row: webhooks.WebhookRow) -> dict[str, Any]:
    """A webhook as fetchallwebhooks lists it: never its whole URL."""
    return {
        "webid": row["webid"],
        "short_baselink": outbound.short_url(row["base_url"]),
        "useragent": row["user_agent"],
        "authed": 1 if row["authed"] else 0,
        "enabled": 1 if row["enabled"] else 0,
    }


@registry.operation(
    "delwebhook",
    group=GROUP,
    summary="Delete Webhook",
    area=AREA,
    mutates=True,
    params=[WEBID],
    returns={"message": "`Successfully deleted webhook!`"},
)
async def delete(call: SellerCall) -> dict[str, Any]:
    """Delete one webhook."""
    before = await webhooks.delete(call.db, call.services.secrets, call.app_id, call.args.text("webid"))
    call.record(f"webhook:{before['webid']}", before=webhooks.audit_view(before), after=None)
    return {"message": "Successfully deleted webhook!"}


@registry.operation(
    "delallwebhooks",
    group=GROUP,
    summary="Delete All Webhooks",
    area=AREA,
    mutates=True,
    returns={"deleted": "how many webhooks were deleted"},
)
async def delete_all(call: SellerCall) -> dict[str, Any]:
    """Delete every webhook of the application."""
    deleted = await webhooks.delete_all(call.db, call.app_id)
    call.record("webhooks:all", before={"count": deleted}, after={"count": 0})
    return {"message": "Successfully deleted all webhooks!", "deleted": deleted}
