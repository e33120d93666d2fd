"""What keeps the dashboard's pages safe to open: response headers (a strict Content-Security-
Policy without inline script, no framing, no sniffing, no caching of pages) and the checks that
a state-changing request comes from our own page (a CSRF token and the Origin header)."""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}
HSTS = "max-age=31536000"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"


class SecurityHeaders:
    """Adds the headers to every response of the wrapped application (pages and static files)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secure = scope.get("scheme") == "https"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
                headers.setdefault("cache-control", "no-store")
                if secure:
                    headers.setdefault("strict-transport-security", HSTS)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def csrf_token(seed: str) -> str:
    """The token every form of a session carries: derived from the session's secret cookie, so it
    needs no storage, differs per session and cannot be computed without the cookie."""
    return hmac.new(seed.encode(), b"licensegate dashboard csrf", hashlib.sha256).hexdigest()


def csrf_matches(seed: str | None, presented: str) -> bool:
    return seed is not None and hmac.compare_digest(csrf_token(seed), presented)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def own_origins(request: Request, public_url: str) -> set[str]:
    """Where our pages are served from: the configured public URL, and the address this request
    was sent to (a development server reached as localhost or 127.0.0.1)."""
    host = request.headers.get("host", "")
    return {_origin(public_url), f"{request.url.scheme}://{host}".lower()}


def same_origin(request: Request, public_url: str) -> bool:
    """False when the browser says the request comes from another site. Browsers send `Origin`
    on every POST; `Sec-Fetch-Site` where it is missing. A client that sends neither is not a
    browser acting for someone else, and must still present the CSRF token."""
    origin = request.headers.get("origin")
    if origin is not None:
        return origin.lower() in own_origins(request, public_url)
    site = request.headers.get("sec-fetch-site")
    return site is None or site in ("same-origin", "none")
