"""Changes made in the dashboard go through the seller operations (`operations.seller.invoke`),
exactly as the seller API runs them: the same permission check, rate limit, validation, audit
entry and seller log. The caller is the signed-in account acting on one application.

A refusal raises the domain's `Refusal`; `field_error` names the form field it belongs to, so a
page can show the message next to that field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.responses import Response

from licensegate.domain import permissions
from licensegate.domain.errors import Refusal
from licensegate.operations.seller import Caller, Upload, invoke
from licensegate.web.confirm import Question, confirm_page, confirmed
from licensegate.web.navigation import AppPage, Shown
from licensegate.web.visit import Visit

VIA = "dashboard"


async def caller(visit: Visit, app: AppPage) -> Caller:
    """The signed-in account as a seller caller of `app` (opened with `open_app` first)."""
    identity = await permissions.identity_of_account(visit.services.db, app.id, visit.account.id)
    return Caller(identity, ip=visit.ip, via=VIA)


async def run(
    visit: Visit,
    app: AppPage,
    operation: str,
    params: Mapping[str, str],
    *,
    uploads: Mapping[str, Upload] | None = None,
) -> dict[str, Any]:
    """Run the seller operation `operation` on `app` as the signed-in account (with `uploads`:
    the files an upload form sent); a refusal raises the domain's `Refusal` (the page decides
    where to show it)."""
    return await invoke(visit.services, await caller(visit, app), operation, params, uploads=uploads)


class Steps:
    """Several seller operations of one request (a bulk action's keys, an edit's changes): the
    first counts against the seller rate limit, the rest are steps of the same request."""

    def __init__(self, visit: Visit, who: Caller) -> None:
        self.visit = visit
        self.caller = who
        self._counted = False

    @classmethod
    async def of(cls, visit: Visit, app: AppPage) -> Steps:
        return cls(visit, await caller(visit, app))

    async def run(self, operation: str, params: Mapping[str, str]) -> dict[str, Any]:
        counted, self._counted = not self._counted, True
        return await invoke(self.visit.services, self.caller, operation, params, counted=counted)


def field_error(refusal: Refusal, fields: Mapping[str, str], default: str = "") -> dict[str, str]:
    """`{field: message}` for a refusal: the field is the parameter it names (`param`), else the
    field its error code is about (`fields` maps parameter names and error codes to form field
    names), else `default` ('' is the form as a whole)."""
    param = refusal.extra.get("param")
    field = (
        fields[param] if isinstance(param, str) and param in fields else fields.get(refusal.error, default)
    )
    message = "Fill this in." if refusal.error == "missing_parameter" and field else refusal.message
    return {field: message}


def status_of(refusal: Refusal) -> int:
    """The status a page re-shown with this refusal answers."""
    return {"conflict": 409, "not_found": 404, "forbidden": 403, "rate_limited": 429}.get(refusal.kind, 400)


def refused(app: AppPage, refusal: Refusal, fields: Mapping[str, str], default: str = "") -> Shown:
    """A form page shown again after `refusal`: its message next to its field (`field_error`),
    answered with its status."""
    return Shown(app, field_error(refusal, fields, default), status_of(refusal))


async def act(
    visit: Visit,
    app: AppPage,
    operation: str,
    params: Mapping[str, str],
    *,
    done: str | Callable[[dict[str, Any]], str],
    back: str,
    ask: Question | None = None,
) -> Response:
    """A row action (a button, nothing typed): with `ask`, answered with its confirmation page
    until the post is the confirmed one (web/confirm.py); then run it, say how it went in the next
    page's status region (`done`, or what `done` words from the operation's answer), and go back
    to `back` (post/redirect/get)."""
    if ask is not None and not confirmed(visit):
        return confirm_page(
            visit,
            title=ask.title,
            message=ask.message,
            button=ask.button,
            back=ask.back or back,
            danger=ask.danger,
        )
    try:
        body = await run(visit, app, operation, params)
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
    else:
        visit.flash(done if isinstance(done, str) else done(body))
    return visit.redirect(back)
