"""What a worker holds of a logged-in session, so that a License Login re-check and a Session
Check read one pair of numbers instead of the rows behind them.

A program re-checks its licence (a License Login with the same key, HWID and address) and calls
`check` again and again; each time the application's settings, the session, the key, the user
with their HWIDs and grants and the blacklist say the same thing. Each worker keeps them per
session (by the session id's digest), with the login versions of the application, the user and
the session they were read at (`store/loginversions.py`). Triggers bump those versions in the
transaction of every change that can refuse or change a login (migration 0056; the list is in
`store/schema.py`), so before an entry is used, one query reads the three: equal, nothing that
matters changed since the entry was read; different (or the session gone), the entry is
dropped and the call reads everything as before. That query is the only one of a re-check; it
sees every commit of every process on every machine (on PostgreSQL it goes to the database the
writes go to), so a ban, a pause, an HWID reset, a blacklist entry refuses the very next call
anywhere: the staleness bound is 0.

Versions are read no later than the data they vouch for (in the same statement as the session,
or by the check that admitted the entry before the login's rows were read), so a change racing
a load leaves the entry marked older than its data: dropped at the next call, never trusted
while stale. What depends on the time (the session's and the grants' expiry) is decided at every
call from the held rows. Only validated sessions are held; the entries are bounded in number
and none is kept longer than `invalidation.BACKSTOP`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Generic, TypeVar

from licensegate import ids
from licensegate.domain import sessions
from licensegate.domain.apps import ClientApp
from licensegate.domain.sessions import ClientSession
from licensegate.invalidation import BACKSTOP
from licensegate.store import loginversions
from licensegate.store.database import Executor
from licensegate.store.loginversions import Versions

L = TypeVar("L")  # what the License Login keeps of its last login (domain.logins.KnownLogin)


@dataclass(slots=True)
class Held(Generic[L]):
    """A logged-in session as a worker holds it, and its last License Login (None: none yet)."""

    app: ClientApp
    session: ClientSession
    versions: Versions  # the login versions it was read at
    until: float  # time.monotonic() after which it is read again whatever the versions say
    login: L | None = None


class Rechecks(Generic[L]):
    """The sessions one worker holds."""

    def __init__(self, max_entries: int, keep: float = BACKSTOP) -> None:
        """`max_entries`: the oldest entry goes when one more is held (0: none is held)."""
        self._entries: dict[str, Held[L]] = {}
        self._apps: dict[int, ClientApp] = {}  # one copy of each application's settings for its entries
        self._max = max_entries
        self._keep = keep

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, digest: str) -> Held[L] | None:
        """The entry of this session as it is, unconfirmed (for tests and diagnostics)."""
        return self._entries.get(digest)

    async def confirmed(self, db: Executor, digest: str) -> Held[L] | None:
        """The entry of this session if nothing it holds has changed since it was read (one
        query); otherwise none, and it is dropped."""
        entry = self._entries.get(digest)
        if entry is None:
            return None
        if entry.until > time.monotonic() and await loginversions.of_session(db, digest) == entry.versions:
            return entry
        if self._entries.get(digest) is entry:
            del self._entries[digest]
        return None

    def hold(self, app: ClientApp, session: ClientSession) -> Held[L] | None:
        """Hold a session just read with its versions (a logged-in one only)."""
        if not session.validated or session.versions is None or self._max == 0:
            return None
        if len(self._entries) >= self._max:
            del self._entries[next(iter(self._entries))]  # the oldest
            if len(self._apps) > self._max:
                self._apps.clear()
        shared = self._apps.get(app.id)
        if shared == app:
            app = shared  # as held for another session: its copy, not one more
        else:
            self._apps[app.id] = app
        entry: Held[L] = Held(app, session, session.versions, time.monotonic() + self._keep)
        self._entries[session.id] = entry
        return entry


async def identify(
    rechecks: Rechecks[L] | None,
    db: Executor,
    *,
    ownerid: str,
    name: str | None,
    session_id: str | None,
    now: int,
    found: sessions.Found,
    messages: sessions.MessagesOf,
) -> tuple[ClientApp, ClientSession | None, Held[L] | None]:
    """`sessions.identify` through what this worker holds: a held session whose versions are
    unchanged answers without reading it again. Also returns the entry (None: not held)."""
    if rechecks is None or not session_id:
        app, session = await sessions.identify(
            db, ownerid=ownerid, name=name, session_id=session_id, now=now, found=found, messages=messages
        )
        return app, session, None
    entry = await rechecks.confirmed(db, ids.digest(session_id[:128]))
    if entry is not None and entry.app.ownerid == ownerid and (name is None or entry.app.name == name):
        await found(entry.app)
        sessions.check_unexpired(entry.session, now)
        return entry.app, entry.session, entry
    app, session = await sessions.identify(
        db, ownerid=ownerid, name=name, session_id=session_id, now=now, found=found, messages=messages
    )
    assert session is not None
    return app, session, rechecks.hold(app, session)
