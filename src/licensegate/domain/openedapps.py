"""The applications `init` opens sessions for, held per worker so that opening one is a single
statement (on PostgreSQL one round trip instead of two).

An entry is the application as a client call sees it (`ClientApp`) with the login version it was
read at (`apps.login_version`, bumped by a trigger in the transaction of every change of the
application, its owner's name, subscriptions, blacklist, whitelist and seat rules). A held
application is never trusted on its own: the session's INSERT is conditional on that version
still being the application's, in the same statement, so a change committed by any process on
any machine before it takes effect at once; a refusal decided on a held application is confirmed
by reading the version (`confirm_refusal`). Either way a mismatch drops the entry and raises
`StaleApp`, and the call is run again on the application read afresh.

Only enabled, unpaused applications without token validation are held (a disabled or paused one
refuses the call before any of this runs; token validation reads, and may write, the token
before the session is opened, on the application as it is now). An entry lives at most
`invalidation.BACKSTOP` seconds, which bounds what it decides without a write to confirm it:
the rate limit of a call that it refuses, and the key an answer refused that way is signed with.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from licensegate.domain import errorcodes
from licensegate.domain.apps import ClientApp
from licensegate.invalidation import BACKSTOP
from licensegate.store import apps as app_store
from licensegate.store.database import Executor

MAX_ENTRIES = 10_000


class StaleApp(Exception):
    """The application held for this call changed: run the call again on it read afresh."""


class _Entry(NamedTuple):
    until: float  # time.monotonic() after which it is read again
    app: ClientApp
    version: int


class OpenedApps:
    def __init__(self, keep: float = BACKSTOP) -> None:
        self._keep = keep
        self._entries: dict[tuple[str, str], _Entry] = {}

    async def find(self, db: Executor, ownerid: str, name: str | None) -> ClientApp:
        """The application a client names: the held one if there is one, else read (and held when
        it may be). A read application is returned as a copy of the held one, so that
        `version_of` tells the two apart: only a held one needs its version confirmed."""
        entry = self._entries.get((ownerid, name or ""))
        if entry is not None and entry.until > time.monotonic():
            return entry.app
        if not name:
            raise errorcodes.MISSING_NAME()
        row = await app_store.find_for_client_versioned(db, ownerid, name)
        if row is None:
            raise errorcodes.UNKNOWN_APPLICATION()
        app = ClientApp.from_row(row)
        if app.enabled and not app.paused and not app.token_validation:
            if len(self._entries) >= MAX_ENTRIES:
                self._entries.clear()
            self._entries[(ownerid, name)] = _Entry(time.monotonic() + self._keep, app, row["login_version"])
            return app._replace()  # equal, but not the held object
        return app

    def version_of(self, app: ClientApp) -> int | None:
        """The login version `app` was held at, if it is the held object (None: read for this call)."""
        entry = self._entries.get((app.ownerid, app.name))
        return entry.version if entry is not None and entry.app is app else None

    def drop(self, app: ClientApp) -> None:
        entry = self._entries.get((app.ownerid, app.name))
        if entry is not None and entry.app is app:
            del self._entries[(app.ownerid, app.name)]

    def stale(self, app: ClientApp) -> StaleApp:
        """Forget the held `app`; the exception that makes its call run again."""
        self.drop(app)
        return StaleApp(f"application {app.id} changed")

    async def confirm_refusal(self, db: Executor, app: ClientApp) -> None:
        """Before a refusal decided on `app` is answered: raise `StaleApp` if `app` was held and the
        application has changed since (the refusal may no longer hold)."""
        version = self.version_of(app)
        if version is not None and await app_store.login_version(db, app.id) != version:
            raise self.stale(app)
