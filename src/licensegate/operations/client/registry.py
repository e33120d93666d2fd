"""The client API's operation registry and the context each handler receives."""

from __future__ import annotations

from dataclasses import dataclass

from licensegate.domain import errorcodes
from licensegate.domain.apps import ClientApp
from licensegate.domain.errors import RateLimited
from licensegate.domain.logins import KnownLogin
from licensegate.domain.messages import Messages
from licensegate.domain.recheck import Held
from licensegate.domain.sessions import ClientSession
from licensegate.operations.declarations import Args, Registry
from licensegate.services import Services
from licensegate.store.database import Database


@dataclass(slots=True)
class ClientCall:
    services: Services
    args: Args
    ip: str
    counted_ip: str  # what rate limits count `ip` as (`addresses.counted_as`), worked out once
    ownerid: str
    app: ClientApp
    session: ClientSession | None
    db: Database  # the call's database handle (one pinned connection for most operations)
    keyauth: bool = False  # the call came in on one of KeyAuth's dialects (/api/1.1/ to /api/1.3/)
    held: Held[KnownLogin] | None = None  # the session as this worker holds it (domain.recheck)
    _messages: Messages | None = None

    def now(self) -> int:
        return self.services.clock.now()

    @property
    def live_session(self) -> ClientSession:
        assert self.session is not None, "declared requires='session' or 'validated'"
        return self.session

    async def messages(self) -> Messages:
        """The application's messages (custom ones cached for a moment per process)."""
        if self._messages is None:
            kept = self.services.messages.kept(self.app.id)
            overrides = (
                kept[1] if kept is not None else await self.services.messages.get(self.db, self.app.id)
            )
            self._messages = Messages(overrides)
        return self._messages

    async def require_logged_in(self) -> None:
        """Refuse a session that is not logged in (operations declared `validated`, and items the
        owner marked `authed`), with the application's `sessionunauthed` message."""
        if not self.live_session.validated:
            raise errorcodes.SESSION_NOT_VALIDATED((await self.messages())("sessionunauthed"))

    async def limit_attempts(self, credential: str) -> None:
        """The stricter limits on sign-in attempts: every attempt at one username or key from one
        address counts (the application's `auth_rate_limit`); from one address whatever the
        username or key (`LICENSEGATE_LOGIN_ADDRESS_LIMIT`), only refused attempts count (see
        `failed_attempt`), so random usernames or keys are limited while the many users behind
        one shared address (a company, a carrier's NAT) keep signing in."""
        settings = self.services.settings
        retry_after = await self.services.limiter.attempt(  # one Redis round trip for both
            (
                f"auth:{self.app.id}:{credential}:{self.counted_ip}",
                self.app.auth_rate_limit,
                self.app.auth_rate_window,
            ),
            (self._address_bucket(), settings.login_address_limit, settings.login_address_window),
        )
        if retry_after:
            raise RateLimited(retry_after, (await self.messages())("ratelimited"))

    async def failed_attempt(self) -> None:
        """Count a refused sign-in attempt against this address (see `limit_attempts`)."""
        settings = self.services.settings
        await self.services.limiter.hit(
            self._address_bucket(), settings.login_address_limit, settings.login_address_window
        )

    def _address_bucket(self) -> str:
        return f"auth-address:{self.app.id}:{self.counted_ip}"


registry: Registry[ClientCall] = Registry("client")
