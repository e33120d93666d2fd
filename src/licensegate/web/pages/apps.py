"""Applications: the owner's list (and creating one), and each application's integration page:
how to connect a program (its integration panel), renaming and deleting it. The application's
home is its overview (`pages/overview.py`)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import appkeys, apps, audit
from licensegate.domain.errors import Refusal
from licensegate.web.integration import snippets
from licensegate.web.navigation import AppPage, Section, app_path, open_app, register
from licensegate.web.visit import Denied, Visit, page

LIST = "/dashboard/apps"
INTEGRATION = "integration"
READY = "ready"  # a new application's first page (its seller key, shown once)
NEW_APP = "new-app"  # what the redirect after creating an application carries
register(Section("Integration", INTEGRATION, ""))


async def home(visit: Visit) -> Response:
    """Owners start at their applications; a reseller or manager at its one application."""
    account = visit.account
    if account.app_id is not None:
        return visit.redirect(f"/dashboard/apps/{account.app_id}/")
    return visit.redirect(LIST)


async def app_list(visit: Visit, *, error: str = "", status: int = 200) -> Response:
    account = visit.account
    if not account.is_owner:
        return await home(visit)
    owned = await apps.list_owned(visit.services.db, account.id)
    return visit.render(
        "apps/list.html",
        status=status,
        title="Applications",
        apps=owned,
        error=error,
        name=visit.form.get("name"),
    )


async def create(visit: Visit) -> Response:
    services, account = visit.services, visit.account
    if not account.is_owner:
        raise Denied("Only an owner account creates applications.")
    try:
        created = await apps.create_application(
            services.db,
            services.secrets,
            owner=account.username,
            name=visit.form.text("name", 64),
            now=visit.now(),
        )
    except Refusal as refusal:
        return await app_list(visit, error=refusal.message, status=409 if refusal.kind == "conflict" else 400)
    await record(visit, created.app_id, "createapp", created.name, after={"name": created.name})
    visit.flash(f"The application {created.name} is created.")
    # Post/redirect/get: the new application's page at its own address, its first seller key
    # carried there (sealed) to be shown once; a reload shows the page without posting again.
    visit.carry(NEW_APP, {"app_id": created.app_id, "sellerkey": created.sellerkey})
    return visit.redirect(app_path(created.app_id, READY))


async def ready(visit: Visit) -> Response:
    """A new application's first page, with its seller key shown once (after the redirect of its
    creation); later, or anyone else's visit, is sent to the application's overview."""
    app = await _owned(visit)
    carried = visit.carried(NEW_APP)
    if carried is None or carried.get("app_id") != app.id:
        return visit.redirect(app.path())
    return visit.render(
        "apps/created.html", title=f"{app.app['name']} is ready", app=app.app, sellerkey=carried["sellerkey"]
    )


async def record(
    visit: Visit, app_id: int, action: str, target: str | None, *, before: Any = None, after: Any = None
) -> None:
    """An audit entry for an owner's change made in the dashboard (changes made through seller
    operations are recorded by them)."""
    account = visit.account
    await audit.append(
        visit.services.db,
        audit.Entry(
            app_id=app_id,
            account_id=account.id,
            actor=f"{account.username} (dashboard)",
            action=action,
            target=target,
            before=before,
            after=after,
            ip=visit.ip,
            created_at=visit.now(),
        ),
    )


def _app_id(visit: Visit) -> int:
    return int(visit.request.path_params["app_id"])


async def integration(
    visit: Visit, *, error: str = "", status: int = 200, app: AppPage | None = None
) -> Response:
    app = app or await open_app(visit, _app_id(visit))
    services, account = visit.services, visit.account
    keys = await appkeys.client_keys(services.db, services.secrets, app.id)
    base = services.settings.public_url
    row = app.app
    return visit.render(
        "apps/integration.html",
        status=status,
        title=f"Integration · {row['name']}",
        app=row,
        nav=app.nav,
        base=base,
        keys=keys,
        show_secret=account.is_owner,
        owner=account.is_owner,
        error=error,
        snippets=snippets(
            base=base,
            name=row["name"],
            ownerid=row["ownerid"],
            version=row["version"],
            public_key=keys.public_key,
            secret=keys.secret if account.is_owner else None,
        ),
    )


async def _owned(visit: Visit) -> AppPage:
    app = await open_app(visit, _app_id(visit))
    if not visit.account.is_owner:
        raise Denied("Only the application's owner can do this.")
    return app


async def rename(visit: Visit) -> Response:
    app = await _owned(visit)
    try:
        old, new = await apps.rename(visit.services.db, app.id, visit.form.text("name", 64), visit.now())
    except Refusal as refusal:
        return await integration(
            visit, error=refusal.message, status=409 if refusal.kind == "conflict" else 400, app=app
        )
    if old != new:
        await record(visit, app.id, "renameapp", new, before={"name": old}, after={"name": new})
    visit.flash(f"The application is now called {new}.")
    return visit.redirect(app.path(INTEGRATION))


async def delete(visit: Visit) -> Response:
    app = await _owned(visit)
    try:
        name = await apps.delete(
            visit.services.db, visit.services.files, app.id, visit.form.get("typed").strip()
        )
    except Refusal as refusal:
        return await integration(visit, error=refusal.message, status=400, app=app)
    await record(visit, app.id, "deleteapp", name, before={"name": name})
    visit.flash(f"The application {name} and everything it held are deleted.")
    return visit.redirect(LIST)


ROUTES = [
    Route("/", page(home), methods=["GET"]),
    Route("/apps", page(app_list), methods=["GET"]),
    Route("/apps", page(create), methods=["POST"]),
    Route("/apps/{app_id:int}/" + READY, page(ready), methods=["GET"]),
    Route("/apps/{app_id:int}/integration", page(integration), methods=["GET"]),
    Route("/apps/{app_id:int}/rename", page(rename), methods=["POST"]),
    Route("/apps/{app_id:int}/delete", page(delete), methods=["POST"]),
]
