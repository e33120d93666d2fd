"""The application's home: its overview. Charts of the last 30 days (logins by outcome, new users
and redeemed keys, tamper reports), keys and users by status, expiries to come, the users online
now (refreshed by htmx every few seconds; a reload shows the same without script), and pausing
or unpausing the application.

Each chart shows only to an account holding its permission area (a manager without `users` sees
no login or user figures); a reseller sees none, since they count the whole application and a
reseller sees only its own keys and users. Pausing goes through the seller operations
`pauseapp` / `unpauseapp`, so it needs the `settings` area, as it does in the seller API.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response
from starlette.routing import Route

from licensegate.domain import overview
from licensegate.domain.errors import Refusal
from licensegate.domain.permissions import Area
from licensegate.web import seller
from licensegate.web.charts import Drawn, draw
from licensegate.web.confirm import confirm_page, confirmed
from licensegate.web.navigation import AppPage, may_use, open_app
from licensegate.web.visit import Denied, Visit, page

ONLINE_REFRESH = 10  # seconds between refreshes of "online now" in the browser
ONLINE_AREA: Area = "sessions"
PAUSE_AREA: Area = "settings"
PAUSE_EFFECT = (
    "While it is paused, programs cannot start (init is refused) and nobody's subscription runs "
    "down. Unpausing gives every subscription that was running back the time the pause lasted."
)


def _app_id(visit: Visit) -> int:
    return int(visit.request.path_params["app_id"])


def _allowed(visit: Visit, area: Area) -> bool:
    """Whether the account sees this area's application-wide figures."""
    account = visit.account
    return account.role != "reseller" and may_use(account, area)


async def _charts(visit: Visit, app: AppPage) -> tuple[list[Drawn], int | None]:
    """The charts, and when the status counts were made if they come from a snapshot."""
    db, now = visit.services.db, visit.now()
    drawn: list[Drawn] = []
    counted_at: int | None = None
    users, licenses = _allowed(visit, "users"), _allowed(visit, "licenses")
    if users or licenses:
        logins, growth = await overview.logins_per_day(db, app.id, now)
        if users:
            drawn.append(draw(logins))
        if not (users and licenses):  # one of the two series only
            wanted = "New users" if users else "Keys redeemed"
            growth = overview.Chart(
                growth.key,
                f"{wanted} per day, last {overview.DAYS} days",
                growth.description,
                growth.labels,
                [s for s in growth.series if s.label == wanted],
            )
        drawn.append(draw(growth))
    if licenses or users:
        counts = await overview.statuses(
            db, app.id, now, inline_below=visit.services.settings.overview_inline_rows
        )
        keys, users_chart, soon, year = counts.charts()
        counted_at = counts.at if counts.snapshot else None
        if licenses:
            drawn.append(draw(keys))
        if users:
            drawn += [draw(users_chart), draw(soon), draw(year)]
    if _allowed(visit, "logs"):
        drawn.append(draw(await overview.tamper_per_day(db, app.id, now)))
    return drawn, counted_at


def _counted_what(visit: Visit) -> str:
    """Which of the account's charts a snapshot's time is about."""
    users, licenses = _allowed(visit, "users"), _allowed(visit, "licenses")
    if users and licenses:
        return "Keys and users by status and the subscriptions expiring are"
    return "Users by status and the subscriptions expiring are" if users else "License keys by status are"


async def _online(visit: Visit, app: AppPage) -> dict[str, Any]:
    """Online now, the seats in use and the credits spent today (this worker's spends written
    first, as `home` does with logins)."""
    await visit.services.logins.flush(visit.services.db)
    figures = await overview.online(visit.services.db, app.id, visit.now())
    return {"online": figures, "online_at": visit.now(), "refresh": ONLINE_REFRESH}


async def home(visit: Visit) -> Response:
    app = await open_app(visit, _app_id(visit))
    services = visit.services
    # This worker's own counts first, so what was just done shows at once; other workers write
    # theirs every few seconds.
    await services.logins.flush(services.db)
    show_online = _allowed(visit, ONLINE_AREA)
    charts, counted_at = await _charts(visit, app)
    return visit.render(
        "apps/overview.html",
        title=f"Overview · {app.app['name']}",
        app=app.app,
        nav=app.nav,
        charts=charts,
        counted_at=counted_at,
        counted_what=_counted_what(visit),
        refresh_minutes=services.settings.overview_refresh_minutes,
        show_online=show_online,
        reseller=visit.account.role == "reseller",
        can_pause=may_use(visit.account, PAUSE_AREA),
        pause_effect=PAUSE_EFFECT,
        **(await _online(visit, app) if show_online else {}),
    )


async def online_now(visit: Visit) -> Response:
    """The "online now" figures alone, for htmx to swap in; a browser without script that opens
    this address is sent to the overview."""
    app = await open_app(visit, _app_id(visit), ONLINE_AREA)
    if visit.account.role == "reseller":
        raise Denied("The application's figures are for its owner and managers.")
    if visit.request.headers.get("hx-request") != "true":
        return visit.redirect(app.path())
    return visit.render("apps/online.html", app=app.app, **await _online(visit, app))


async def _pause_or_unpause(visit: Visit, operation: str) -> Response:
    app = await open_app(visit, _app_id(visit), PAUSE_AREA)
    pausing = operation == "pauseapp"
    name = app.app["name"]
    if not confirmed(visit):
        return confirm_page(
            visit,
            title=f"Pause {name}?" if pausing else f"Unpause {name}?",
            message=PAUSE_EFFECT,
            button="Pause the application" if pausing else "Unpause the application",
            back=app.path(),
            danger=pausing,
        )
    try:
        body = await seller.run(visit, app, operation, {})
    except Refusal as refusal:
        visit.flash(refusal.message, "error")
        return visit.redirect(app.path())
    if pausing:
        visit.flash(f"{name} is paused: programs cannot start, and nobody's time runs down.")
    else:
        seconds = int(body.get("paused_seconds", 0))
        visit.flash(f"{name} is running again; every running subscription got back {_length(seconds)}.")
    return visit.redirect(app.path())


def _length(seconds: int) -> str:
    for name, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {name}{'' if count == 1 else 's'}"
    return f"{seconds} second{'' if seconds == 1 else 's'}"


async def pause(visit: Visit) -> Response:
    return await _pause_or_unpause(visit, "pauseapp")


async def unpause(visit: Visit) -> Response:
    return await _pause_or_unpause(visit, "unpauseapp")


ROUTES = [
    Route("/apps/{app_id:int}/", page(home), methods=["GET"]),
    Route("/apps/{app_id:int}/online", page(online_now), methods=["GET"]),
    Route("/apps/{app_id:int}/pause", page(pause), methods=["POST"]),
    Route("/apps/{app_id:int}/unpause", page(unpause), methods=["POST"]),
]
