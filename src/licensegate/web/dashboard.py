"""The dashboard as one ASGI application mounted at /dashboard: its pages, its static files, and
the security headers every one of its responses carries."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, Router
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from licensegate.web.pages import (
    account,
    apps,
    auditlog,
    balance,
    blacklists,
    chats,
    credits,
    details,
    entitlements,
    eventwebhooks,
    files,
    keyauth_import,
    license_actions,
    license_import,
    licensefiles,
    licenses,
    loader,
    logs,
    overview,
    ratelimits,
    seats,
    sellerkeys,
    sellerlog,
    sessions,
    settings,
    signin,
    subscriptions,
    team,
    tokens,
    users,
    variables,
    webhooks,
)
from licensegate.web.security import SecurityHeaders
from licensegate.web.templating import STATIC
from licensegate.web.visit import Access, Visit, error_page, page

PREFIX = "/dashboard"
YEAR = "public, max-age=31536000, immutable"


class CachedStatic:
    """Static files are addressed by their content hash (`?v=`), so browsers may keep them."""

    def __init__(self) -> None:
        self.files = StaticFiles(directory=STATIC)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_cached(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                message.setdefault("headers", [])
                message["headers"].append((b"cache-control", YEAR.encode()))
            await send(message)

        await self.files(scope, receive, send_cached)


async def _not_found(visit: Visit) -> Response:
    return error_page(visit, 404, "Not found", "There is no page at this address.")


_not_found_page = page(_not_found, Access.PUBLIC)


async def not_found(scope: Scope, receive: Receive, send: Send) -> None:
    response = await _not_found_page(Request(scope, receive))
    await response(scope, receive, send)


def dashboard_app() -> ASGIApp:
    routes: list[BaseRoute] = [
        Mount("/static", app=CachedStatic()),
        *signin.ROUTES,
        *account.ROUTES,
        *keyauth_import.ROUTES,
        *apps.ROUTES,
        *overview.ROUTES,
        *licenses.ROUTES,
        *subscriptions.ROUTES,
        *entitlements.ROUTES,
        *licensefiles.ROUTES,
        *variables.ROUTES,
        *license_actions.ROUTES,
        *users.ROUTES,
        *license_import.ROUTES,
        *details.ROUTES,
        *credits.ROUTES,
        *ratelimits.ROUTES,
        *seats.ROUTES,
        *sellerkeys.ROUTES,
        *auditlog.ROUTES,
        *sellerlog.ROUTES,
        *sessions.ROUTES,
        *blacklists.ROUTES,
        *tokens.ROUTES,
        *settings.ROUTES,
        *team.ROUTES,
        *chats.ROUTES,
        *logs.ROUTES,
        *balance.ROUTES,
        *webhooks.ROUTES,
        *eventwebhooks.ROUTES,
        *loader.ROUTES,
        *files.ROUTES,
    ]
    return SecurityHeaders(Router(routes=routes, default=not_found))


async def to_dashboard(_request: Request) -> Response:
    return RedirectResponse(f"{PREFIX}/", status_code=307)


def routes() -> list[BaseRoute]:
    """What the service mounts: `/` and `/dashboard` lead to the dashboard."""
    return [
        Route("/", to_dashboard, methods=["GET", "HEAD"]),
        Route(PREFIX, to_dashboard, methods=["GET", "HEAD"]),
        Mount(PREFIX, app=dashboard_app()),
    ]
