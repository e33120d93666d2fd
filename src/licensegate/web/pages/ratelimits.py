"""The named rate limits part of the user and key pages: the limits set on the one shown, with a
form to set (or change) one and a button to remove each. Every change runs the seller operation
of the same name (`setratelimit`, `delratelimit`), so permissions, a reseller's scope and the
audit log (the user's timeline) are the API's own."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import credits, namedlimits
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.navigation import AppPage, open_app
from licensegate.web.pages.credits import back_to
from licensegate.web.visit import Visit, page

AREA: Area = "users"
_FIELDS = ("name", "requests", "window")


async def shown(
    visit: Visit, app: AppPage, owner: credits.Owner, owner_id: int, name: str, back: str
) -> dict[str, Any] | None:
    """What a user or key page shows of its named limits (the partial `details/ratelimits.html`),
    or None when the account may not manage users."""
    if not visit.account.allows(AREA):
        return None
    rows = await namedlimits.of_target(visit.services.db, credits.Target(owner, owner_id, name))
    return {"rows": rows, "owner": owner, "name": name, "back": back, "path": app.path("ratelimits")}


async def change(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), AREA)
    owner = "key" if visit.form.get("owner") == "key" else "user"
    params = {owner: visit.form.get("owner_name")}
    back = back_to(visit, app)
    if visit.form.get("action") == "remove":
        params["name"] = visit.form.get("name")
        return await seller.act(
            visit, app, "delratelimit", params, done="The rate limit is removed.", back=back
        )
    params.update({field: visit.form.get(field) for field in _FIELDS if visit.form.get(field)})
    return await seller.act(visit, app, "setratelimit", params, done="The rate limit is saved.", back=back)


ROUTES = [Route("/apps/{app_id:int}/ratelimits", page(change), methods=["POST"])]
