"""The seats part of the subscription, key and user pages: the seat rule set on the one shown
(and, on a user's page, the sessions and machines it holds now), with a form to set it and a
button to remove it. Every change runs the seller operation of the same name (`setseats`,
`delseats`), so permissions and the audit log are the API's own."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import seats
from licensegate.domain.entitlements import Owner
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.navigation import AppPage, open_app
from licensegate.web.visit import Visit, page

AREA: Area = "subscriptions"
OWNERS = ("sub", "key", "user")
OVERAGES = [
    ("refuse", "Refuse the new login"),
    ("end_oldest", "End the oldest session or machine"),
    ("allow", "Allow a percentage over, then refuse"),
]
COUNT_BY = [("user", "All the user's sessions"), ("key", "Only the sessions of the same key")]
_FIELDS = ("machines", "sessions", "countby", "overage", "percent")


async def shown(
    visit: Visit, app: AppPage, owner: Owner, owner_id: int, name: str, back: str
) -> dict[str, Any] | None:
    """What a subscription, key or user page shows of its seats (the partial
    `details/seats.html`), or None when the account may not manage them."""
    if not visit.account.allows(AREA):
        return None
    db = visit.services.db
    try:
        rule: seats.RuleRow | None = await seats.show(db, seats.Target(owner, owner_id, name))
    except Refusal:
        rule = None
    in_use = await seats.in_use(db, owner_id, visit.now()) if owner == "user" else None
    return {
        "rule": rule,
        "in_use": in_use,
        "owner": owner,
        "name": name,
        "back": back,
        "path": app.path("seats"),
        "overages": OVERAGES,
        "count_by": COUNT_BY,
    }


def _back(visit: Visit, app: AppPage) -> str:
    """Back to the subscription, key or user page of this application the form was on."""
    wanted = visit.form.get("back")
    base = app.path("")
    return (
        wanted if wanted.startswith(base) and "//" not in wanted and ".." not in wanted else app.path("users")
    )


async def change(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), AREA)
    owner = visit.form.get("owner") if visit.form.get("owner") in OWNERS else "user"
    params = {owner: visit.form.get("name")}
    if visit.form.get("action") == "remove":
        return await seller.act(
            visit, app, "delseats", params, done="The seat rule is removed.", back=_back(visit, app)
        )
    params.update({field: visit.form.get(field) for field in _FIELDS if visit.form.get(field)})
    return await seller.act(
        visit, app, "setseats", params, done="The seat rule is saved.", back=_back(visit, app)
    )


ROUTES = [Route("/apps/{app_id:int}/seats", page(change), methods=["POST"])]
