"""The page behind a password-reset link: a form to choose a new password.

The token is the only credential and arrives in the URL, so the page forbids caching and
referrers (a link to elsewhere must never carry it along)."""

from __future__ import annotations

from html import escape
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse

from licensegate.bodies import read_body
from licensegate.domain import passwordreset
from licensegate.domain.errors import Refusal
from licensegate.services import Services
from licensegate.store.database import DatabaseUnavailable

HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
}
MAX_FORM_BYTES = 4096
MAX_TOKEN = 128


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>body{{font-family:sans-serif;max-width:28em;margin:3em auto;"
        "padding:0 1em}}input{{display:block;width:100%;margin:.3em 0 1em;padding:.4em}}"
        f"</style></head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def _form(token: str, username: str, app_name: str, error: str = "") -> str:
    problem = f"<p role='alert'><strong>{escape(error)}</strong></p>" if error else ""
    return (
        f"<p>Choose a new password for <strong>{escape(username)}</strong> ({escape(app_name)}).</p>{problem}"
        f"<form method='post' action='{passwordreset.PATH}'>"
        f"<input type='hidden' name='token' value='{escape(token, quote=True)}'>"
        "<label>New password<input type='password' name='password' required maxlength='256' "
        "autocomplete='new-password'></label>"
        "<label>Again<input type='password' name='confirm' required maxlength='256' "
        "autocomplete='new-password'></label>"
        "<button type='submit'>Set password</button></form>"
    )


GONE = "<p>This link has expired or was already used. Ask for a new one from the program.</p>"


async def reset_page(request: Request) -> HTMLResponse:
    try:
        return await _reset_page(request)
    except DatabaseUnavailable as exc:
        page = _page(
            "Try again in a moment",
            "<p>The service cannot reach its database right now. Please try again in a few seconds.</p>",
            503,
        )
        page.headers["Retry-After"] = str(exc.retry_after)
        return page


async def _reset_page(request: Request) -> HTMLResponse:
    services: Services = request.app.state.services
    now = services.clock.now()
    if request.method == "GET":
        token = request.query_params.get("token", "")[:MAX_TOKEN]
        found = await passwordreset.check_token(services.db, token, now) if token else None
        if found is None:
            return _page("Link expired", GONE, 400)
        return _page("Reset your password", _form(token, *found))
    try:
        fields = parse_qs((await read_body(request, MAX_FORM_BYTES)).decode("utf-8", "replace"))
    except Refusal as refusal:  # too large, or cut short
        return _page("Reset your password", f"<p>{escape(refusal.message)}</p>", 400)
    token = (fields.get("token") or [""])[0][:MAX_TOKEN]
    password = (fields.get("password") or [""])[0]
    confirm = (fields.get("confirm") or [""])[0]
    found = await passwordreset.check_token(services.db, token, now) if token else None
    if found is None:
        return _page("Link expired", GONE, 400)
    if password != confirm:
        return _page("Reset your password", _form(token, *found, "The two passwords differ."), 400)
    try:
        username = await passwordreset.complete(
            services.db, services.passwords, token=token, password=password, now=now
        )
    except Refusal as refusal:
        return _page("Reset your password", _form(token, *found, refusal.message), 400)
    return _page(
        "Password changed",
        f"<p>The password of <strong>{escape(username)}</strong> is changed. "
        "You can close this page and log in with it.</p>",
    )
