"""A reseller's own balance: the keys it may still give out per duration, and every change of it
(spent by making keys or users, added or taken by the owner), newest first, paged. Only the
application's resellers reach it; the owner reads the same history on the Seller team page."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import team
from licensegate.web.balances import history_context
from licensegate.web.navigation import RESELLER_ONLY, AppPage, Section, open_app, register
from licensegate.web.visit import Visit, page

SLUG = "balance"
register(Section("Balance", SLUG, RESELLER_ONLY))


async def balance_page(visit: Visit) -> Response:
    app: AppPage = await open_app(visit, int(visit.request.path_params["app_id"]), RESELLER_ONLY)
    account = visit.account
    row = await team.get_member(visit.services.db, app.id, account.username, "reseller")
    path = app.path(SLUG)
    return visit.render(
        "balance/page.html",
        title=f"Your balance · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        balance=team.balance(row),
        levels=list(account.key_levels),
        create_url=app.path("licenses/create"),
        **await history_context(visit, account.id, path),
    )


ROUTES = [Route("/apps/{app_id:int}/" + SLUG, page(balance_page), methods=["GET"])]
