"""Issuing a signed license file from a user's or a key's page (docs/offline.md): the seller
operation `issuelicensefile`, answered as a download of the file (`<serial>.lic`)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.navigation import AppPage, open_app
from licensegate.web.visit import Visit, page

AREA: Area = "users"


def issue_form(visit: Visit, app: AppPage, field: str, value: str, back: str) -> dict[str, Any] | None:
    """What the partial `licensefiles/issue.html` needs, or None when the account may not issue."""
    if not visit.account.allows(AREA):
        return None
    return {"path": app.path("licensefiles/issue"), "field": field, "value": value, "back": back}


async def issue(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), AREA)
    field = "key" if visit.form.get("field") == "key" else "user"
    params = {field: visit.form.get("value"), "hwid": visit.form.get("hwid")}
    if visit.form.get("encrypt"):
        params["encrypt"] = "1"
    back = visit.form.get("back")
    if not back.startswith(app.path("")):
        back = app.path("users")
    try:
        body = await seller.run(visit, app, "issuelicensefile", params)
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(back)
    return Response(
        body["file"],
        media_type="text/plain; charset=us-ascii",
        headers={
            "content-disposition": f'attachment; filename="{body["serial"]}.lic"',
            "cache-control": "no-store",
        },
    )


ROUTES = [Route("/apps/{app_id:int}/licensefiles/issue", page(issue), methods=["POST"])]
