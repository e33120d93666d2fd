"""The customer panel (`/panel/<application id>/`): the page an application's END USERS use, apart
from the sellers' dashboard. It exists only while the application turns it on (`customerpanel`).

A user signs in with the application's username and password (checked as the client API's Login
checks them: argon2id, the application's attempt limits, the lock-out after wrong passwords in a
row, bans, the two-factor code), sees their subscriptions, the web loader's download link and a
"Reset HWID" within the application's cooldown, and connects the desktop loader: the page asks
this server for a one-time token (`POST .../handoff`, valid two minutes, bound to this panel
session) and hands it with the username to the loader's local listener
(`http://localhost:<LICENSEGATE_WEB_LOADER_PORT>/handshake`), which logs in with it through the
client API; then the page shows the loader's buttons, and a click sends the button's value to the
listener (`/button`). See docs/clients.md, "Web loader".

Its session cookie is its own (`lg_panel_<id>`, or `__Host-lg_panel_<id>` over HTTPS; HttpOnly,
SameSite=Lax), separate from the dashboard's; forms carry a CSRF token derived from it (before
sign-in, from a random `lg_panel_pre` cookie) and must come from our own origin.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, Router

from licensegate.addresses import counted_as
from licensegate.domain import loader, lockout, panel
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.messages import Messages
from licensegate.domain.panel import Panel, PanelSession
from licensegate.services import Services
from licensegate.web import security
from licensegate.web.browser import BrowserVisit
from licensegate.web.forms import Limits, read_form, status_of
from licensegate.web.templating import render_template, when

log = logging.getLogger("licensegate.web")

PREFIX = "/panel"
PRESESSION_COOKIE = "lg_panel_pre"
MAX_FORM_BYTES = 4096
# Messages shown after a redirect: only these fixed texts, chosen by a key in the URL.
NOTICES = {
    "signedin": "You are signed in.",
    "signedout": "You are signed out.",
    "reset": "Your HWID is reset: your next login from the program records the computer it runs on.",
}


@dataclass
class PanelVisit(BrowserVisit):
    panel: Panel
    session: PanelSession | None = None

    presession_cookie: ClassVar[str] = PRESESSION_COOKIE

    @property
    def session_cookie(self) -> str:
        return f"lg_panel_{self.panel.id}"

    @property
    def path(self) -> str:
        return f"{PREFIX}/{self.panel.id}/"

    async def messages(self) -> Messages:
        return Messages(await self.services.messages.get(self.services.db, self.panel.id))

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        base: dict[str, Any] = {
            "title": f"{self.panel.name} · customer panel",
            "app_name": self.panel.name,
            "csrf": security.csrf_token(self.csrf_seed),
            "path": self.path,
            "session": self.session,
        }
        base.update(context)
        return self.finish(HTMLResponse(render_template(template, base), status_code=status))

    def redirect(self, notice: str = "") -> Response:
        target = self.path + (f"?done={notice}" if notice else "")
        return self.finish(RedirectResponse(target, status_code=303))

    def finish(self, response: Response) -> Response:
        self.write_cookies(response)
        port = self.services.settings.web_loader_port
        # The dashboard's policy, but the page may also talk to the loader on this computer.
        response.headers["content-security-policy"] = security.CSP.replace(
            "connect-src 'self'", f"connect-src 'self' http://localhost:{port} http://127.0.0.1:{port}"
        )
        return response


Handler = Callable[[PanelVisit], Awaitable[Response]]


def _json(visit: PanelVisit, body: dict[str, Any], status: int = 200) -> Response:
    return visit.finish(Response(orjson.dumps(body), status_code=status, media_type="application/json"))


def _no_panel(request: Request) -> Response:
    html = render_template(
        "panel/missing.html",
        {"title": "No customer panel", "csrf": "", "app_name": "", "path": "", "session": None},
    )
    response = HTMLResponse(html, status_code=404)
    response.headers["content-security-policy"] = security.CSP
    return response


def panel_page(handler: Handler, *, signed_in: bool = False) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        services: Services = request.app.state.services
        app_id = int(request.path_params["app_id"])
        opened = await panel.open_panel(services.db, app_id) if 0 < app_id < 2**63 else None
        if opened is None:
            return _no_panel(request)
        visit = PanelVisit(request, services, opened)
        try:
            if not opened.client.enabled:  # the client API refuses it too: nothing to sign in to
                message = (await visit.messages())("appdisabled")
                return visit.render("panel/error.html", status=403, message=message)
            return await _run(visit, handler, signed_in)
        except RateLimited as limited:
            response = visit.render("panel/error.html", status=429, message=limited.message)
            response.headers["Retry-After"] = str(limited.retry_after)
            return response
        except Refusal as refusal:
            status = status_of(refusal)
            return visit.render("panel/error.html", status=status, message=refusal.message)
        except Exception:
            log.exception("customer panel %s %s failed", request.method, request.url.path)
            return visit.render(
                "panel/error.html", status=500, message="The page could not be shown. Try again in a moment."
            )

    return endpoint


async def _run(visit: PanelVisit, handler: Handler, signed_in: bool) -> Response:
    request = visit.request
    visit.presession = visit.cookie(PRESESSION_COOKIE)
    token = visit.cookie(visit.session_cookie)
    if token:
        visit.session = await panel.resume(visit.services.db, visit.panel, token, visit.now())
        if visit.session is None:
            visit.set_cookie(visit.session_cookie, None)
        else:
            visit.token = token
    if request.method == "POST":
        if request.headers.get(security.CSRF_HEADER) is None:
            visit.form = await read_form(request, Limits(body=MAX_FORM_BYTES))
        presented = visit.form.get(security.CSRF_FIELD) or request.headers.get(security.CSRF_HEADER, "")
        seed = visit.token or visit.presession
        same = security.same_origin(request, visit.services.settings.public_url)
        if not same or not security.csrf_matches(seed, presented):
            return visit.render(
                "panel/error.html",
                status=403,
                message="This form expired or was sent from another site. Reload the page and try again.",
            )
    if signed_in and visit.session is None:
        if request.method == "POST":
            return visit.render(
                "panel/error.html", status=401, message="Your session has ended. Sign in again."
            )
        return visit.redirect()
    return await handler(visit)


# --- pages ----------------------------------------------------------------------------------------


async def home(visit: PanelVisit) -> Response:
    if visit.session is None:
        return _signin_form(visit)
    return await _panel(visit)


def _signin_form(visit: PanelVisit, *, error: str = "", username: str = "", status: int = 200) -> Response:
    notice = NOTICES.get(visit.request.query_params.get("done", ""), "")
    return visit.render("panel/signin.html", status=status, error=error, username=username, notice=notice)


async def _panel(visit: PanelVisit, *, error: str = "", status: int = 200) -> Response:
    assert visit.session is not None
    db, now = visit.services.db, visit.now()
    entries, devices = await panel.subscriptions(db, visit.panel, visit.session.username, now)
    ready_at = visit.session.next_reset()
    return visit.render(
        "panel/home.html",
        status=status,
        user=visit.session.username,
        subscriptions=[{**e, "expires": when(int(e["expiry"]))} for e in entries],
        devices=devices,
        cooldown=panel.remaining_text(visit.session.cooldown) if visit.session.cooldown else "none",
        reset_ready=ready_at <= now,
        reset_wait=panel.remaining_text(ready_at - now) if ready_at > now else "",
        download=visit.panel.download,
        buttons=await loader.list_all(db, visit.panel.id),
        port=visit.services.settings.web_loader_port,
        notice=NOTICES.get(visit.request.query_params.get("done", ""), ""),
        error=error,
    )


async def _limit_attempts(visit: PanelVisit, username: str, msg: Messages) -> None:
    """The client API's limits on sign-in attempts (the same counters: a username tried here and
    in the program counts once per attempt)."""
    settings, limiter, app = visit.services.settings, visit.services.limiter, visit.panel.client
    address = f"auth-address:{app.id}:{counted_as(visit.ip)}"
    retry_after = await limiter.hit(
        f"auth:{app.id}:{username}:{counted_as(visit.ip)}", app.auth_rate_limit, app.auth_rate_window
    ) or await limiter.peek(address, settings.login_address_limit, settings.login_address_window)
    if retry_after:
        raise RateLimited(retry_after, msg("ratelimited"))


async def sign_in(visit: PanelVisit) -> Response:
    form = visit.form
    username = form.get("username").strip()[: panel.MAX_USERNAME]
    msg = await visit.messages()
    services = visit.services
    try:
        await _limit_attempts(visit, username, msg)
        token = await panel.sign_in(
            services.db,
            services.passwords,
            services.secrets,
            visit.panel,
            username=username,
            password=form.get("password"),
            otp_code=form.get("code").strip() or None,
            ip=visit.ip,
            user_agent=visit.request.headers.get("user-agent"),
            msg=msg,
            guard=lockout.Guard(lockout.Policy.of(services.settings), services.limiter),
            now=visit.now(),
        )
    except RateLimited:
        raise
    except Refusal as refusal:
        settings = services.settings
        await services.limiter.hit(
            f"auth-address:{visit.panel.id}:{counted_as(visit.ip)}",
            settings.login_address_limit,
            settings.login_address_window,
        )
        status = 400 if refusal.kind == "invalid" else 403
        return _signin_form(visit, error=refusal.message, username=username, status=status)
    if visit.session is not None:
        await panel.end(services.db, visit.session)
    visit.set_cookie(visit.session_cookie, token)
    if visit.presession is not None:
        visit.set_cookie(PRESESSION_COOKIE, None)
    return visit.redirect("signedin")


async def sign_out(visit: PanelVisit) -> Response:
    if visit.session is not None:
        await panel.end(visit.services.db, visit.session)
    visit.set_cookie(visit.session_cookie, None)
    return visit.redirect("signedout")


async def reset_hwid(visit: PanelVisit) -> Response:
    assert visit.session is not None
    if visit.form.get("confirmed") != "1":
        return visit.render("panel/confirm.html", user=visit.session.username)
    try:
        await panel.reset_hwid(visit.services.db, visit.panel, visit.session, visit.ip, visit.now())
    except Refusal as refusal:
        return await _panel(visit, error=refusal.message, status=409)
    return visit.redirect("reset")


async def handoff(visit: PanelVisit) -> Response:
    """A new web-loader token for this session, for the page to pass to the loader."""
    assert visit.session is not None
    token = await panel.issue_handoff(visit.services.db, visit.session, visit.now())
    body = {
        "user": visit.session.username,
        "token": token,
        "expires_in": panel.HANDOFF_SECONDS,
        "port": visit.services.settings.web_loader_port,
    }
    return _json(visit, body)


BASE = "/{app_id:int}"


def routes() -> list[BaseRoute]:
    router = Router(
        routes=[
            Route(BASE + "/", panel_page(home), methods=["GET"]),
            Route(BASE + "/signin", panel_page(sign_in), methods=["POST"]),
            Route(BASE + "/signout", panel_page(sign_out), methods=["POST"]),
            Route(BASE + "/reset-hwid", panel_page(reset_hwid, signed_in=True), methods=["POST"]),
            Route(BASE + "/handoff", panel_page(handoff, signed_in=True), methods=["POST"]),
        ]
    )
    return [Mount(PREFIX, app=security.SecurityHeaders(router))]
