"""One request to the dashboard, as its pages see it (`Visit`), and the wrapper every page runs
in (`page`): it finds the signed-in session from the cookie, keeps out whoever may not see the
page, checks that a state-changing request comes from our own form (CSRF token and Origin), and
turns a refusal into an error page.

Cookies. Over HTTPS the session cookie is `__Host-lg_session` (Secure, HttpOnly, SameSite=Lax,
Path=/, no Domain: browsers then refuse it from any other origin or path). Browsers accept a
`__Host-` cookie only with Secure, which plain HTTP cannot set, so over plain HTTP (a development
server on 127.0.0.1) the same cookie is named `lg_session`, without Secure. Before sign-in, forms
carry a token derived from a random `lg_presession` cookie (same rules), so that nobody can post
our sign-in form from another site either.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar
from urllib.parse import quote

import orjson
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from licensegate.domain import websessions
from licensegate.domain.accounts import Account
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.websessions import Timeouts, WebSession
from licensegate.secretbox import SecretBoxError
from licensegate.services import Services
from licensegate.web import security
from licensegate.web.browser import BrowserVisit
from licensegate.web.forms import MAX_UPLOAD_FIELD, Form, read_form, read_upload, status_of
from licensegate.web.templating import render_template

log = logging.getLogger("licensegate.web")

SESSION_COOKIE = "lg_session"
PRESESSION_COOKIE = "lg_presession"
FLASH_COOKIE = "lg_flash"
CARRY_COOKIE = "lg_carry"
MAX_CARRIED = 2400  # bytes of a carried value's JSON: its sealed cookie stays under browsers' 4 KB
SIGNIN_PATH = "/dashboard/signin"
SECOND_FACTOR_PATH = "/dashboard/signin/second-factor"
HOME = "/dashboard/"


class Access(Enum):
    PUBLIC = "public"  # anyone (sign-in, first-run setup)
    PENDING = "pending"  # password checked, second factor not yet
    SIGNED_IN = "signed_in"


class Denied(Exception):
    """This account may not see the page: answered with the 403 page."""

    def __init__(self, message: str = "Your account does not have access to this page.") -> None:
        super().__init__(message)
        self.message = message


class FormRefused(Exception):
    """The post did not come from our own form (another site, or an expired token)."""


@dataclass
class Visit(BrowserVisit):
    session: WebSession | None = None
    _flashes: list[tuple[str, str]] = field(default_factory=list)

    presession_cookie: ClassVar[str] = PRESESSION_COOKIE

    # --- who and where ---

    @property
    def account(self) -> Account:
        assert self.session is not None
        return self.session.account

    @property
    def user_agent(self) -> str:
        return self.request.headers.get("user-agent", "")[:256]

    @property
    def timeouts(self) -> Timeouts:
        settings = self.services.settings
        return Timeouts(settings.dashboard_idle_timeout, settings.dashboard_session_lifetime)

    # --- CSRF and flash messages ---

    @property
    def csrf(self) -> str:
        return security.csrf_token(self.csrf_seed)

    async def read_upload(self, limit: int, field: int = MAX_UPLOAD_FIELD, files: int = 1) -> Form:
        """The form of an upload route (declared `page(..., upload=True)`), read once the handler
        has checked who may post it, so an upload nobody may make is refused before it is read.
        A body over `limit` bytes is refused (`request_too_large`) unread, a text field over
        `field` bytes once read; a form that is not ours raises FormRefused (the 403 page), like
        any other post: before the body is read when the token comes in the header (script),
        after when it is a field of the body (a plain form)."""
        if not security.same_origin(self.request, self.services.settings.public_url):
            raise FormRefused
        if self.request.headers.get(security.CSRF_HEADER) is not None and not _csrf_ok(self):
            raise FormRefused  # the page's script sends the token in a header: checked unread
        self.form = await read_upload(self.request, limit, field, files)
        if not _csrf_ok(self):
            for sent in self.form.files.values():
                await sent.close()
            raise FormRefused
        return self.form

    def flash(self, text: str, level: str = "success") -> None:
        """A message shown once, on the next page this browser sees (after a redirect)."""
        self._flashes.append((level, text))

    def take_flashes(self) -> list[tuple[str, str]]:
        raw = self.request.cookies.get(self.cookie_name(FLASH_COOKIE))
        if raw is None:
            return []
        self.set_cookie(FLASH_COOKIE, None)
        payload, _, mac = raw.rpartition(".")
        if not hmac.compare_digest(_mac(self.csrf_seed, payload), mac):
            return []
        try:
            items = orjson.loads(base64.urlsafe_b64decode(payload.encode()))
        except ValueError:
            return []
        return [(str(level), str(text)) for level, text in items][:10]

    def carry(self, name: str, value: dict[str, Any]) -> None:
        """A value for the next page this browser sees (after a redirect: post/redirect/get),
        such as a secret shown once or the outcome of a test call. Sealed with the deployment key
        and bound to this session, so no other session's page opens it and nobody reads it on its
        way; at most MAX_CARRIED bytes of JSON (ValueError beyond)."""
        text = orjson.dumps(value)
        if len(text) > MAX_CARRIED:
            raise ValueError(f"a carried value is at most {MAX_CARRIED} bytes")
        self.set_cookie(CARRY_COOKIE, self.services.secrets.seal(text.decode(), self._carry_purpose(name)))

    def carried(self, name: str) -> dict[str, Any] | None:
        """What `carry(name, ...)` left for this page, once: the cookie is cleared with this answer."""
        raw = self.cookie(CARRY_COOKIE)
        if raw is None:
            return None
        self.set_cookie(CARRY_COOKIE, None)
        try:
            value = orjson.loads(self.services.secrets.open(raw, self._carry_purpose(name)))
        except (SecretBoxError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _carry_purpose(self, name: str) -> str:
        return f"dashboard-carry:{name}:{_mac(self.csrf_seed, 'carry:' + name)}"

    # --- signing in and out ---

    async def start_session(self, account: Account, *, pending: bool) -> None:
        """A new session (a new token: nothing from before sign-in carries over) and its cookie."""
        if self.session is not None:
            await websessions.end(self.services.db, self.session.id)
        token, _ = await websessions.start(
            self.services.db,
            account,
            pending=pending,
            ip=self.ip,
            user_agent=self.user_agent,
            now=self.now(),
            timeouts=self.timeouts,
        )
        self.token = token
        self.set_cookie(SESSION_COOKIE, token)
        if self.presession is not None or self.cookie(PRESESSION_COOKIE) is not None:
            self.set_cookie(PRESESSION_COOKIE, None)

    async def end_session(self) -> None:
        if self.session is not None:
            await websessions.end(self.services.db, self.session.id)
        self.session, self.token = None, None
        self.set_cookie(SESSION_COOKIE, None)

    # --- answers ---

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        base: dict[str, Any] = {
            "visit": self,
            "title": "licensegate",
            "nav": None,
            "account": self.session.account
            if self.session is not None and not self.session.pending
            else None,
            "csrf": self.csrf,
            "flashes": [*self.take_flashes(), *self._flashes],
            "path": self.request.url.path,
        }
        self._flashes.clear()
        base.update(context)
        return self.finish(HTMLResponse(render_template(template, base), status_code=status))

    def redirect(self, url: str) -> Response:
        """303 See Other: after a POST, the browser GETs the next page (post/redirect/get)."""
        return self.finish(RedirectResponse(url, status_code=303))

    def finish(self, response: Response) -> Response:
        if self._flashes:
            payload = base64.urlsafe_b64encode(orjson.dumps(self._flashes)).decode()
            self.set_cookie(FLASH_COOKIE, f"{payload}.{_mac(self.csrf_seed, payload)}")
            self._flashes = []
        self.write_cookies(response)
        return response


def _mac(seed: str, payload: str) -> str:
    return hmac.new(seed.encode(), b"flash:" + payload.encode(), hashlib.sha256).hexdigest()[:32]


Handler = Callable[[Visit], Awaitable[Response]]


def error_page(visit: Visit, status: int, title: str, message: str) -> Response:
    return visit.render("error.html", status=status, title=title, message=message)


def _signin_redirect(visit: Visit) -> Response:
    request = visit.request
    if request.method == "GET":
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return visit.redirect(f"{SIGNIN_PATH}?next={quote(target, safe='')}")
    visit.flash("Your session has ended. Sign in again, then repeat what you were doing.", "warning")
    return visit.redirect(SIGNIN_PATH)


def _csrf_ok(visit: Visit) -> bool:
    request = visit.request
    if not security.same_origin(request, visit.services.settings.public_url):
        return False
    presented = visit.form.get(security.CSRF_FIELD) or request.headers.get(security.CSRF_HEADER, "")
    return security.csrf_matches(visit.token or visit.cookie(PRESESSION_COOKIE), presented)


def page(
    handler: Handler, access: Access = Access.SIGNED_IN, *, upload: bool = False
) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette endpoint for a dashboard page handler. A post's form is read within the
    ordinary limits (`forms.FORM`: no files) before the handler runs. With `upload`, it is not:
    the handler checks who may post, then calls `visit.read_upload` with its own limits."""

    async def endpoint(request: Request) -> Response:
        services: Services = request.app.state.services
        visit = Visit(request, services)
        try:
            return await _run(visit, handler, access, upload)
        except FormRefused:
            return _form_refused(visit)
        except Refusal as refusal:
            status = status_of(refusal)
            response = error_page(visit, status, _TITLES.get(status, "Refused"), refusal.message)
            if isinstance(refusal, RateLimited):
                response.headers["Retry-After"] = str(refusal.retry_after)
            return response
        except Denied as denied:
            return error_page(visit, 403, "Not allowed", denied.message)
        except Exception:
            log.exception("dashboard page %s %s failed", request.method, request.url.path)
            return error_page(
                visit,
                500,
                "Something went wrong",
                "The page could not be shown. It has been logged; try again.",
            )

    return endpoint


_TITLES = {
    400: "Not accepted",
    401: "Not signed in",
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
}


def _form_refused(visit: Visit) -> Response:
    return error_page(
        visit,
        403,
        "Form refused",
        "This form expired or was sent from another site. Go back, reload the page and try again.",
    )


async def _run(visit: Visit, handler: Handler, access: Access, upload: bool = False) -> Response:
    request = visit.request
    visit.presession = visit.cookie(PRESESSION_COOKIE)
    token = visit.cookie(SESSION_COOKIE)
    if token:
        visit.session = await websessions.resume(visit.services.db, token, visit.now(), visit.timeouts)
        if visit.session is None:
            visit.set_cookie(SESSION_COOKIE, None)
        else:
            visit.token = token
    session = visit.session
    if access is Access.SIGNED_IN and (session is None or session.pending):
        if session is not None:
            return visit.redirect(SECOND_FACTOR_PATH)
        return _signin_redirect(visit)
    if access is Access.PENDING and (session is None or not session.pending):
        return visit.redirect(HOME if session is not None else SIGNIN_PATH)
    if request.method not in ("GET", "HEAD") and not upload:
        visit.form = await read_form(request)
        if not _csrf_ok(visit):
            return _form_refused(visit)
    return await handler(visit)
