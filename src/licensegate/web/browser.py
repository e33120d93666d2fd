"""What a request from a browser carries on either face the service shows browsers, the dashboard
(`visit.Visit`) and the customer panel (`panel.PanelVisit`): where it comes from, the cookies its
answer sets (named `__Host-...` over HTTPS; always HttpOnly, SameSite=Lax, Path=/) and the seed of
its forms' CSRF token (the session's token, else a random pre-sign-in cookie).
"""

from __future__ import annotations

import secrets
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar

from starlette.requests import Request
from starlette.responses import Response

from licensegate.addresses import client_ip
from licensegate.services import Services
from licensegate.web.forms import Form


@dataclass
class BrowserVisit:
    request: Request
    services: Services
    _: KW_ONLY
    token: str | None = None  # the session cookie's token
    presession: str | None = None  # the pre-sign-in CSRF seed
    form: Form = field(default_factory=lambda: Form({}))
    _cookies: list[tuple[str, str | None, int | None]] = field(default_factory=list)

    presession_cookie: ClassVar[str]  # the cookie that keeps the pre-sign-in seed

    @property
    def secure(self) -> bool:
        return self.request.url.scheme == "https" or self.services.settings.public_url.startswith("https://")

    @property
    def ip(self) -> str:
        return client_ip(self.request.scope, self.services.settings.trusted_proxies)

    def now(self) -> int:
        return self.services.clock.now()

    def cookie_name(self, base: str) -> str:
        return f"__Host-{base}" if self.secure else base

    def cookie(self, base: str) -> str | None:
        return self.request.cookies.get(self.cookie_name(base))

    def set_cookie(self, base: str, value: str | None, max_age: int | None = None) -> None:
        """Set (or, with None, delete) a cookie on whatever response this visit answers."""
        self._cookies.append((base, value, max_age))

    @property
    def csrf_seed(self) -> str:
        if self.token is not None:
            return self.token
        if self.presession is None:
            self.presession = secrets.token_urlsafe(32)
            self.set_cookie(self.presession_cookie, self.presession)
        return self.presession

    def write_cookies(self, response: Response) -> None:
        """The cookies set or deleted so far, on `response`."""
        for base, value, max_age in self._cookies:
            name = self.cookie_name(base)
            if value is None:
                response.delete_cookie(name, path="/", secure=self.secure, httponly=True, samesite="lax")
            else:
                response.set_cookie(
                    name, value, max_age=max_age, path="/", secure=self.secure, httponly=True, samesite="lax"
                )
        self._cookies.clear()
