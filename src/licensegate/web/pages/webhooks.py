"""Webhooks: the URLs the server calls for a client's Webhook call, so their secrets stay on the
server. Listed with the URL masked (scheme and host) until the owner reveals it, its user agent
and whether only a logged-in client may call it; created, edited and deleted (confirmed); a test
call made from the page with its outcome shown; and the delivery log of recent calls (time,
webhook, client or test, status, duration, error), filtered by webhook or failures and keyset
paged. Every change and the test run the seller operation of the same effect (`addwebhook`,
`editwebhook`, `delwebhook`, `delallwebhooks`, `testwebhook`).

Revealing a URL is the owner's alone (a manager with the webhooks area edits and tests webhooks
without reading their secrets), is a POST (never a link a browser prefetches or a proxy keeps)
and is noted in the audit log."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import orjson
from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import audit, webhooks
from licensegate.domain.errors import Refusal
from licensegate.domain.paging import PageRequest, known_total
from licensegate.domain.permissions import Area
from licensegate.operations.seller.webhooks import AREA as WEBHOOKS_AREA
from licensegate.web import seller
from licensegate.web.confirm import Question
from licensegate.web.listing import Column, Filter, ListSpec
from licensegate.web.navigation import AppPage, Section, Shown, open_app, register
from licensegate.web.templating import counted
from licensegate.web.visit import MAX_CARRIED, Denied, Visit, page

AREA: Area = WEBHOOKS_AREA
SLUG = "webhooks"
register(Section("Webhooks", SLUG, AREA))

OUTCOMES = (("", "Any"), ("failed", "Failed (no reply, or 400 and above)"))
LOG_SPEC = ListSpec(
    columns=(
        Column("created", "Time", sortable=True),
        Column("webid", "Webhook"),
        Column("source", "From"),
        Column("status", "Status", numeric=True),
        Column("duration_ms", "Duration", numeric=True),
        Column("error", "Error"),
    ),
    filters=(
        Filter("webid", "Webhook", "select"),
        Filter("outcome", "Outcome", "select", options=OUTCOMES),
    ),
    default_sort="created",
    default_size=25,
    empty_text="No calls yet. A client's Webhook call or a test call appears here.",
)
TESTED = "webhook-test"  # what a test call's redirect carries to the webhook's page
RECENT = 10  # calls a webhook's page shows (the Webhooks page's log has them all)
SOURCE_LABEL = {webhooks.CLIENT: "Client", webhooks.TEST: "Test"}
# Where a refusal is shown: parameter names and error codes -> form fields.
FIELDS = {
    "baseurl": "url",
    "invalid_url": "url",
    "unsupported_scheme": "url",
    "target_not_allowed": "url",
    "host_not_found": "url",
    "timeout": "url",
    "ua": "useragent",
    "invalid_user_agent": "useragent",
    "webid": "webid",
    "invalid_webid": "webid",
    "webhook_exists": "webid",
}
TEST_FIELDS = {
    "params": "params",
    "param_fixed": "params",
    "too_many_params": "params",
    "body": "body",
}


async def _open(visit: Visit) -> AppPage:
    return await open_app(visit, int(visit.request.path_params["app_id"]), AREA)


def _entry(app: AppPage, row: webhooks.WebhookRow) -> dict[str, Any]:
    return {
        "webid": row["webid"],
        "masked": webhooks.masked(row["base_url"]),
        "useragent": row["user_agent"],
        "authed": bool(row["authed"]),
        "enabled": bool(row["enabled"]),
        "created_at": row["created_at"],
        "href": app.path(f"{SLUG}/{row['webid']}"),
    }


async def listing(visit: Visit, shown: Shown | None = None) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    db, box = visit.services.db, visit.services.secrets
    rows = await webhooks.list_all(db, box, app.id)
    ids = sorted({row["webid"] for row in rows})
    # The log may name webhooks deleted since: the filter offers what the log's page asks for too.
    asked = visit.request.query_params.get("webid", "").strip()[:64]
    choices = (("", "Any"), *((webid, webid) for webid in sorted({*ids, *([asked] if asked else [])})))
    view = LOG_SPEC.read(visit.request.query_params, {"webid": choices})
    found = await webhooks.browse_deliveries(
        db,
        app.id,
        webid=view.values.get("webid"),
        failed=view.values.get("outcome") == "failed",
        request=view.request,
    )
    for entry in found.rows:
        entry["source_label"] = SOURCE_LABEL.get(entry["source"], entry["source"])
        entry["known"] = entry["webid"] in ids
    total = known_total(found, view.request)
    if total is None and not view.values:
        total = await webhooks.count_deliveries(db, app.id)  # at most about KEPT_DELIVERIES
    form = visit.form
    posted = visit.request.method == "POST"
    return visit.render(
        "webhooks/list.html",
        status=status,
        title=f"Webhooks · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        hooks=[_entry(app, row) for row in rows],
        owner=visit.account.is_owner,
        listing=view.listing(app.path(SLUG), found, total),
        kept=webhooks.KEPT_DELIVERIES,
        path=app.path(SLUG),
        errors=errors,
        form={
            "url": form.get("url"),
            "useragent": form.get("useragent"),
            "webid": form.get("webid"),
            "authed": form.get("authed") == "1" if posted else True,
        },
    )


async def create(visit: Visit) -> Response:
    app = await _open(visit)
    form = visit.form
    params = {
        "baseurl": form.get("url").strip(),
        "ua": form.get("useragent").strip(),
        "webid": form.get("webid").strip(),
        "authed": "1" if form.get("authed") == "1" else "0",
    }
    try:
        body = await seller.run(visit, app, "addwebhook", {k: v for k, v in params.items() if v})
    except Refusal as refusal:
        return await listing(visit, seller.refused(app, refusal, FIELDS))
    visit.flash(f"The webhook {body['webid']} is added; clients call it with webid={body['webid']}.")
    return visit.redirect(app.path(f"{SLUG}/{body['webid']}"))


async def _webhook(visit: Visit, app: AppPage) -> webhooks.WebhookRow:
    return await webhooks.get(
        visit.services.db, visit.services.secrets, app.id, visit.request.path_params["webid"][:64]
    )


async def detail(
    visit: Visit, shown: Shown | None = None, *, revealed: bool = False, tested: dict[str, Any] | None = None
) -> Response:
    app, errors, status = shown or Shown(await _open(visit))
    row = await _webhook(visit, app)
    if tested is None and visit.request.method == "GET":
        carried = visit.carried(TESTED)
        tested = carried if carried is not None and carried.get("webid") == row["webid"] else None
    form = visit.form
    edited = visit.request.url.path.endswith("/edit")
    recent = await webhooks.browse_deliveries(
        visit.services.db,
        app.id,
        webid=row["webid"],
        failed=False,
        request=PageRequest("created", True, RECENT),
    )
    for entry in recent.rows:
        entry["source_label"] = SOURCE_LABEL.get(entry["source"], entry["source"])
    return visit.render(
        "webhooks/webhook.html",
        status=status,
        title=f"Webhook {row['webid']} · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        hook=_entry(app, row),
        url=row["base_url"] if revealed else None,
        owner=visit.account.is_owner,
        recent=recent.rows,
        more=recent.has_next,
        log_href=f"{app.path(SLUG)}?{urlencode({'webid': row['webid']})}#h-log",
        path=app.path(f"{SLUG}/{row['webid']}"),
        back=app.path(SLUG),
        errors=errors,
        tested=tested,
        form={
            "useragent": form.get("useragent") if edited else row["user_agent"],
            "authed": form.get("authed") == "1" if edited else bool(row["authed"]),
            "params": form.get("params"),
            "body": form.get("body"),
        },
    )


async def edit(visit: Visit) -> Response:
    """A new URL (empty: keep it), the user agent and the authed flag."""
    app = await _open(visit)
    row = await _webhook(visit, app)
    form = visit.form
    params = {
        "webid": row["webid"],
        "ua": form.get("useragent").strip() or webhooks.DEFAULT_USER_AGENT,
        "authed": "1" if form.get("authed") == "1" else "0",
    }
    if form.get("url").strip():
        params["baseurl"] = form.get("url").strip()
    try:
        await seller.run(visit, app, "editwebhook", params)
    except Refusal as refusal:
        return await detail(visit, seller.refused(app, refusal, FIELDS))
    changed = " (its URL replaced)" if "baseurl" in params else ""
    visit.flash(f"The webhook {row['webid']} is saved{changed}.")
    return visit.redirect(app.path(f"{SLUG}/{row['webid']}"))


async def reveal(visit: Visit) -> Response:
    """The webhook's page with its whole URL shown: the owner only, noted in the audit log."""
    app = await _open(visit)
    if not visit.account.is_owner:
        raise Denied("Only the application's owner can reveal a webhook's URL.")
    row = await _webhook(visit, app)
    who = await seller.caller(visit, app)
    await audit.append(
        visit.services.db,
        audit.Entry(
            app_id=app.id,
            account_id=who.identity.acting_account_id,
            actor=who.actor,
            action="revealwebhook",
            target=f"webhook:{row['webid']}",
            before=None,
            after=None,
            ip=who.ip,
            created_at=visit.now(),
        ),
    )
    return await detail(visit, Shown(app), revealed=True)


async def test(visit: Visit) -> Response:
    """Call the webhook now (optionally with a client's params and body) and show how it went."""
    app = await _open(visit)
    row = await _webhook(visit, app)
    form = visit.form
    params = {"webid": row["webid"], "params": form.get("params").strip(), "body": form.get("body")}
    try:
        body = await seller.run(visit, app, "testwebhook", {k: v for k, v in params.items() if v})
    except Refusal as refusal:
        return await detail(visit, seller.refused(app, refusal, TEST_FIELDS, default="test"))
    # Post/redirect/get: the outcome goes with the redirect, so a reload shows the webhook again
    # instead of calling it again.
    visit.carry(TESTED, _outcome(row["webid"], body))
    return visit.redirect(app.path(f"{SLUG}/{row['webid']}") + "#test-result")


def _outcome(webid: str, body: dict[str, Any]) -> dict[str, Any]:
    """A test call's outcome as its page shows it, the reply cut to what a redirect can carry."""
    kept = {key: body.get(key) for key in ("message", "status", "error")}
    whole = reply = str(body.get("response") or "")
    while True:
        cut = len(reply) < len(whole) or len(whole) >= webhooks.TEST_EXCERPT
        outcome = {"webid": webid, **kept, "response": reply, "cut": cut}
        if len(orjson.dumps(outcome)) <= MAX_CARRIED or not reply:
            return outcome
        reply = reply[: len(reply) * 3 // 4]


async def delete(visit: Visit) -> Response:
    app = await _open(visit)
    row = await _webhook(visit, app)
    webid = row["webid"]
    ask = Question(
        title=f"Delete the webhook {webid}?",
        message="Clients calling it are refused from now on (webhook_not_found). "
        "Its calls stay in the delivery log. This cannot be undone.",
        button=f"Delete {webid}",
        back=app.path(f"{SLUG}/{webid}"),
    )
    done = f"The webhook {webid} is deleted."
    return await seller.act(
        visit, app, "delwebhook", {"webid": webid}, done=done, back=app.path(SLUG), ask=ask
    )


async def delete_all(visit: Visit) -> Response:
    app = await _open(visit)
    total = len(await webhooks.list_all(visit.services.db, visit.services.secrets, app.id))
    ask = Question(
        title="Delete every webhook?",
        message=f"All {total:,} webhooks are deleted; clients calling them are refused from now "
        "on. This cannot be undone.",
        button="Delete every webhook",
    )
    return await seller.act(
        visit,
        app,
        "delallwebhooks",
        {},
        done=lambda body: f"Every webhook is deleted ({counted(int(body.get('deleted', 0)), 'webhook')}).",
        back=app.path(SLUG),
        ask=ask,
    )


PATH = "/apps/{app_id:int}/" + SLUG
WEBHOOK = PATH + "/{webid}"
ROUTES = [
    Route(PATH, page(listing), methods=["GET"]),
    Route(PATH, page(create), methods=["POST"]),
    Route(PATH + "/delete-all", page(delete_all), methods=["POST"]),
    Route(WEBHOOK, page(detail), methods=["GET"]),
    Route(WEBHOOK + "/edit", page(edit), methods=["POST"]),
    Route(WEBHOOK + "/reveal", page(reveal), methods=["POST"]),
    Route(WEBHOOK + "/test", page(test), methods=["POST"]),
    Route(WEBHOOK + "/delete", page(delete), methods=["POST"]),
]
