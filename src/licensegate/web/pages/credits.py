"""The usage-credits part of the user and key pages: the balance, what was spent and the refill
rule, with forms to set, add to, schedule and remove it. Every change runs the seller operation of
the same name (`setcredits`, `addcredits`, `refillcredits`, `delcredits`), so permissions, a
reseller's scope and the audit log (the user's timeline) are the API's own."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import credits
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.navigation import AppPage, open_app
from licensegate.web.visit import Visit, page

AREA: Area = "users"
# What each form posts: its operation, the fields it passes on, and what the next page says.
ACTIONS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "set": ("setcredits", ("balance",), "The credit balance is set."),
    "add": ("addcredits", ("amount",), "The credits are added."),
    "refill": ("refillcredits", ("period", "amount", "at"), "The refill is saved."),
    "remove": ("delcredits", (), "The credit balance is removed."),
}
PERIODS = [
    ("day", "Every day"),
    ("week", "Every week (Mondays)"),
    ("month", "Every month (the 1st)"),
    ("none", "Never"),
]


async def shown(
    visit: Visit, app: AppPage, owner: credits.Owner, owner_id: int, name: str, back: str
) -> dict[str, Any] | None:
    """What a user or key page shows of its credits (the partial `details/credits.html`), or None
    when the account may not manage users."""
    if not visit.account.allows(AREA):
        return None
    now = visit.now()
    to = credits.Target(owner, owner_id, name)
    row = await credits.find(visit.services.db, to, now)
    return {
        "row": row,
        "refill": None if row is None else credits.refill_of(row, now),
        "owner": owner,
        "name": name,
        "back": back,
        "path": app.path("credits"),
        "periods": PERIODS,
    }


def back_to(visit: Visit, app: AppPage) -> str:
    """Back to the user or key page of this application the form was on (the named rate
    limits' forms too)."""
    wanted = visit.form.get("back")
    for base in (app.path("users") + "/", app.path("licenses") + "/"):
        if wanted.startswith(base) and wanted[len(base) :].isdigit():
            return wanted
    return app.path("users")


async def change(visit: Visit) -> Response:
    app = await open_app(visit, int(visit.request.path_params["app_id"]), AREA)
    operation, fields, done = ACTIONS.get(visit.form.get("action"), ACTIONS["set"])
    owner = "key" if visit.form.get("owner") == "key" else "user"
    params = {owner: visit.form.get("name")}
    params.update({field: visit.form.get(field) for field in fields if visit.form.get(field)})
    return await seller.act(visit, app, operation, params, done=done, back=back_to(visit, app))


ROUTES = [Route("/apps/{app_id:int}/credits", page(change), methods=["POST"])]
