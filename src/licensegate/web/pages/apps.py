"""Applications: the owner's list, and each application's home (its integration details)."""

from __future__ import annotations

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import apps
from licensegate.web.navigation import open_app
from licensegate.web.visit import Visit, page


async def home(visit: Visit) -> Response:
    """Owners start at their applications; a reseller or manager at its one application."""
    account = visit.account
    if account.app_id is not None:
        return visit.redirect(f"/dashboard/apps/{account.app_id}/")
    return visit.redirect("/dashboard/apps")


async def app_list(visit: Visit) -> Response:
    account = visit.account
    if not account.is_owner:
        return await home(visit)
    owned = await apps.list_owned(visit.services.db, account.id)
    return visit.render("apps/list.html", title="Applications", apps=owned, nav=None)


def _app_id(visit: Visit) -> int:
    return int(visit.request.path_params["app_id"])


async def app_home(visit: Visit) -> Response:
    app = await open_app(visit, _app_id(visit))
    base_url = visit.services.settings.public_url
    return visit.render(
        "apps/home.html",
        title=app.app["name"],
        app=app.app,
        nav=app.nav,
        api_url=f"{base_url}/api/1.0/",
        show_secret=visit.account.is_owner,
    )


ROUTES = [
    Route("/", page(home), methods=["GET"]),
    Route("/apps", page(app_list), methods=["GET"]),
    Route("/apps/{app_id:int}/", page(app_home), methods=["GET"]),
]
