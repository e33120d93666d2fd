"""SQL of the login versions: what a worker checks before it trusts what it holds of a session
(domain/recheck.py). The `login_version` of `apps`, `users` and `sessions` is bumped by triggers
in the transaction of every change that can refuse or change a login (migration 0056; the list
is in store/schema.py), so one read of the three sees every change committed before it, made by
any process on any machine."""

from __future__ import annotations

from licensegate.store.database import Executor

# Through the session's own row: a session that is gone (ended, or its user or application
# deleted) has no versions, even where SQLite gave a deleted row's id to a new one.
_OF_SESSION = (
    "SELECT a.login_version AS app_version, u.login_version AS user_version, "
    "s.login_version AS session_version FROM sessions s JOIN apps a ON a.id = s.app_id "
    "JOIN users u ON u.id = s.user_id WHERE s.id = ?"
)

Versions = tuple[int, int, int]  # the application's, the user's and the session's


async def of_session(db: Executor, session_id: str) -> Versions | None:
    """The versions of a logged-in session, or None when the session, its user or its
    application is gone."""
    row = await db.fetch_one(_OF_SESSION, session_id)
    return None if row is None else (row["app_version"], row["user_version"], row["session_version"])
