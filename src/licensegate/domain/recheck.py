"""What a worker holds of a logged-in session, so that a License Login re-check and a Session
Check read three numbers instead of the rows behind them, or, on PostgreSQL, nothing at all.

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

On PostgreSQL (notify mode, `LICENSEGATE_RECHECK_CONFIRM=notify`, the default there) an entry is
used without that query while `invalidation.LoginNotify` vouches that nothing it depends on has
changed since its versions were read: the database announces every moved version and every
deleted application, user or session (migration 0060), and this machine's committed writes move
a shared counter before their answer goes out. A change made through this machine refuses its
next call at once; one made on another node, or by SQL by hand, once its announcement has
arrived (docs/design.md measures it). Anything else (a lost subscription, a change heard of since,
a write on this machine) makes the call read the versions as above, which re-confirms the entry
or drops it.

Versions are read no later than the data they vouch for (in the same statement as the session,
or by the check that admitted the entry before the login's rows were read), so a change racing
a load leaves the entry marked older than its data: dropped at the next call, never trusted
while stale. What depends on the time (the session's and the grants' expiry) is decided at every
call from the held rows. Only validated sessions are held; the entries are bounded in number
and none is kept longer than `invalidation.BACKSTOP`: each for a random half to all of it, so
that sessions first seen together (a thousand programs starting again after a restart) are not
all read again in the same second a minute later.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Generic, TypeVar

from licensegate import ids
from licensegate.domain import sessions
from licensegate.domain.apps import ClientApp
from licensegate.domain.openedapps import OpenedApps
from licensegate.domain.sessions import ClientSession
from licensegate.invalidation import BACKSTOP, LoginNotify
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
    heard: int = 0  # notify mode: LoginNotify.stamp() taken before `versions` were read
    writes: int = -1


NOT_STAMPED = (0, -1)  # query mode: no stamp vouches for anything
# An entry is kept for `keep` less up to this share of it, drawn for each entry: at a million
# users the 1,000 sessions the bench had held since one second, read again together when they
# ran out, took a worker's rate from 5,000 to 1,900 calls/s and its p99 to 288 ms for a second.
KEEP_SPREAD = 0.5


class Rechecks(Generic[L]):
    """The sessions one worker holds."""

    def __init__(self, max_entries: int, keep: float = BACKSTOP, notify: LoginNotify | None = None) -> None:
        """`max_entries`: the oldest entry goes when one more is held (0: none is held).
        `notify`: trust entries on what PostgreSQL announces (None: read the versions each time)."""
        self._entries: dict[str, Held[L]] = {}
        self._apps: dict[int, ClientApp] = {}  # one copy of each application's settings for its entries
        self._max = max_entries
        self._keep = keep
        self._notify = notify

    def stamp(self) -> tuple[int, int]:
        """To take before reading the versions of an entry to hold."""
        return NOT_STAMPED if self._notify is None else self._notify.stamp()

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, digest: str) -> Held[L] | None:
        """The entry of this session as it is, unconfirmed (for tests and diagnostics)."""
        return self._entries.get(digest)

    async def confirmed(self, db: Executor, digest: str) -> Held[L] | None:
        """The entry of this session if nothing it holds has changed since it was read (notify
        mode: no query while the announcements vouch for it; else one); otherwise none, and it
        is dropped."""
        entry = self._entries.get(digest)
        if entry is None:
            return None
        if entry.until > time.monotonic():
            notify = self._notify
            if notify is None:
                if await loginversions.of_session(db, digest) == entry.versions:
                    return entry
            else:
                user_id = entry.session.user_id or 0  # a held session is logged in: it has one
                if notify.unchanged(entry.heard, entry.writes, entry.app.id, user_id, digest):
                    return entry
                heard, writes = notify.stamp()
                if await loginversions.of_session(db, digest) == entry.versions:
                    entry.heard, entry.writes = heard, writes
                    return entry
        if self._entries.get(digest) is entry:
            del self._entries[digest]
        return None

    def hold(
        self, app: ClientApp, session: ClientSession, stamp: tuple[int, int] = NOT_STAMPED
    ) -> Held[L] | None:
        """Hold a session just read with its versions (a logged-in one only); `stamp`: taken
        before they were read."""
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
        until = time.monotonic() + self._keep * (1 - KEEP_SPREAD * random.random())  # noqa: S311 (not a secret)
        entry: Held[L] = Held(app, session, session.versions, until, None, stamp[0], stamp[1])
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
    opened: OpenedApps | None = None,
) -> tuple[ClientApp, ClientSession | None, Held[L] | None]:
    """`sessions.identify` through what this worker holds: a held session whose versions are
    unchanged answers without reading it again. Also returns the entry (None: not held)."""
    if rechecks is None or not session_id:
        app, session = await sessions.identify(
            db,
            ownerid=ownerid,
            name=name,
            session_id=session_id,
            now=now,
            found=found,
            messages=messages,
            opened=opened,
        )
        return app, session, None
    entry = await rechecks.confirmed(db, ids.digest(session_id[:128]))
    if entry is not None and entry.app.ownerid == ownerid and (name is None or entry.app.name == name):
        await found(entry.app)
        sessions.check_unexpired(entry.session, now)
        return entry.app, entry.session, entry
    stamp = rechecks.stamp()
    app, session = await sessions.identify(
        db, ownerid=ownerid, name=name, session_id=session_id, now=now, found=found, messages=messages
    )
    assert session is not None
    return app, session, rechecks.hold(app, session, stamp)
