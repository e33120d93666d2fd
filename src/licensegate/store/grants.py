"""SQL for the subscriptions users hold (grants): extending, subtracting, pausing, listing.

A grant is *active* while it runs (store.subscriptions.ACTIVE_GRANT). It is *live* while it has
time left, counting a frozen grant by the time it had when it was frozen: a grant paused on its
own is measured against its `paused_at`, a running grant of a paused subscription against the
subscription's `paused_at`, anything else against now. Live grants are the ones a user "still
has": extending adds to them and only users without one count as expired.
"""

from __future__ import annotations

from typing import TypedDict, cast

from licensegate.store.database import Executor
from licensegate.store.freezes import APP_PAUSE, SUB_PAUSE, give_back
from licensegate.store.subscriptions import ACTIVE_GRANT

# Bind: now.
# Time left when the grant's clock stopped: at its own pause, its subscription's, its application's,
# or now, whichever came first. `x > min(a, b, c)` is `x > a OR x > b OR x > c`, and a freeze that
# is not on (NULL) drops out of the OR.
LIVE_GRANT = (
    "(us.expires_at > ? OR us.expires_at > us.paused_at OR us.expires_at > s.paused_at "
    "OR us.expires_at > (SELECT paused_at FROM apps WHERE id = s.app_id))"
)

_JOIN = "FROM user_subscriptions us JOIN subscriptions s ON s.id = us.subscription_id"


async def insert(
    db: Executor, *, user_id: int, sub_id: int, expires_at: int, now: int, key_id: int | None = None
) -> int:
    grant_id: int = await db.fetch_value(
        "INSERT INTO user_subscriptions (user_id, subscription_id, expires_at, key_id, created_at) "
        "VALUES (?, ?, ?, ?, ?) RETURNING id",
        user_id,
        sub_id,
        expires_at,
        key_id,
        now,
    )
    return grant_id


def _scope(user_id: int | None, reseller_id: int | None = None) -> tuple[str, list[int]]:
    """The users a bulk statement covers: one user, or every user of the application (or every
    user one reseller owns)."""
    if user_id is not None:
        return " AND u.id = ?", [user_id]
    if reseller_id is not None:
        return " AND u.owner_account_id = ?", [reseller_id]
    return "", []


async def shift_live(
    db: Executor,
    *,
    app_id: int,
    sub_id: int,
    seconds: int,
    now: int,
    user_id: int | None = None,
    reseller_id: int | None = None,
) -> int:
    """Add `seconds` (negative to subtract) to every live grant of this subscription held by one
    user or by all the application's (or one reseller's) users. Returns how many users had such
    a grant."""
    scope, scope_args = _scope(user_id, reseller_id)
    live_ids = (
        f"SELECT us.id {_JOIN} JOIN users u ON u.id = us.user_id "
        f"WHERE u.app_id = ?{scope} AND us.subscription_id = ? AND {LIVE_GRANT}"
    )
    users: int = await db.fetch_value(
        f"SELECT COUNT(DISTINCT us.user_id) {_JOIN} JOIN users u ON u.id = us.user_id "
        f"WHERE u.app_id = ?{scope} AND us.subscription_id = ? AND {LIVE_GRANT}",
        app_id,
        *scope_args,
        sub_id,
        now,
    )
    if users:
        await db.execute(
            f"UPDATE user_subscriptions SET expires_at = expires_at + ? WHERE id IN ({live_ids})",
            seconds,
            app_id,
            *scope_args,
            sub_id,
            now,
        )
    return users


async def grant_where_missing(
    db: Executor,
    *,
    app_id: int,
    sub_id: int,
    expires_at: int,
    now: int,
    user_id: int | None = None,
    reseller_id: int | None = None,
) -> int:
    """Give a new grant of this subscription to each covered user without a live one. Returns
    the number of grants created."""
    scope, scope_args = _scope(user_id, reseller_id)
    return await db.execute(
        "INSERT INTO user_subscriptions (user_id, subscription_id, expires_at, created_at) "
        "SELECT u.id, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT) FROM users u "
        f"WHERE u.app_id = ?{scope} AND NOT EXISTS ("
        f"SELECT 1 {_JOIN} WHERE us.user_id = u.id AND us.subscription_id = ? AND {LIVE_GRANT})",
        sub_id,
        expires_at,
        now,
        app_id,
        *scope_args,
        sub_id,
        now,
    )


async def pause_user(db: Executor, user_id: int, now: int) -> int:
    """Freeze each running grant of the user. Returns the number frozen."""
    return await db.execute(
        "UPDATE user_subscriptions SET paused_at = ? WHERE id IN ("
        f"SELECT us.id {_JOIN} WHERE us.user_id = ? AND {ACTIVE_GRANT})",
        now,
        user_id,
        now,
    )


async def unpause_user(db: Executor, user_id: int, now: int) -> int:
    """Thaw the user's frozen grants. Each gets back the time it was frozen, except any stretch a
    pause of its subscription or application still holds (that pause's end gives it back)."""
    return await db.execute(
        "UPDATE user_subscriptions SET expires_at = expires_at + "
        f"{give_back(db.dialect, 'paused_at', (SUB_PAUSE, APP_PAUSE))}, paused_at = NULL "
        "WHERE user_id = ? AND paused_at IS NOT NULL",
        now,
        now,
        now,
        user_id,
    )


async def delete_for_user(db: Executor, user_id: int, sub_id: int) -> int:
    return await db.execute(
        "DELETE FROM user_subscriptions WHERE user_id = ? AND subscription_id = ?", user_id, sub_id
    )


class ActiveGrant(TypedDict):
    name: str  # the subscription's
    expires_at: int


async def active_for_user(db: Executor, user_id: int, now: int) -> list[ActiveGrant]:
    rows = await db.fetch_all(
        f"SELECT s.name, us.expires_at {_JOIN} WHERE us.user_id = ? AND {ACTIVE_GRANT} ORDER BY us.id",
        user_id,
        now,
    )
    return cast("list[ActiveGrant]", rows)


def _listing_filter(user_id: int | None, reseller_id: int | None) -> tuple[str, list[int]]:
    if user_id is not None:
        return " AND us.user_id = ?", [user_id]
    if reseller_id is not None:
        return " AND u.owner_account_id = ?", [reseller_id]
    return "", []


async def count_for_app(
    db: Executor, app_id: int, user_id: int | None = None, *, reseller_id: int | None = None
) -> int:
    where, args = _listing_filter(user_id, reseller_id)
    count: int = await db.fetch_value(
        f"SELECT COUNT(*) {_JOIN} JOIN users u ON u.id = us.user_id WHERE u.app_id = ?{where}",
        app_id,
        *args,
    )
    return count


class ListedGrant(TypedDict):
    """A grant as `list_for_app` lists it, with its user and subscription."""

    username: str
    banned_reason: str | None  # the user's
    subscription_id: int
    subscription: str
    expires_at: int
    paused_at: int | None
    subscription_paused_at: int | None


async def list_for_app(
    db: Executor,
    app_id: int,
    *,
    limit: int,
    offset: int,
    user_id: int | None = None,
    reseller_id: int | None = None,
) -> list[ListedGrant]:
    """Every grant of the application's (or one reseller's) users (expired ones included), by
    user then grant."""
    where, args = _listing_filter(user_id, reseller_id)
    rows = await db.fetch_all(
        "SELECT u.username, u.banned_reason, s.id AS subscription_id, s.name AS subscription, "
        "us.expires_at, us.paused_at, s.paused_at AS subscription_paused_at "
        f"{_JOIN} JOIN users u ON u.id = us.user_id WHERE u.app_id = ?{where} "
        "ORDER BY u.id, us.id LIMIT ? OFFSET ?",
        app_id,
        *args,
        limit,
        offset,
    )
    return cast("list[ListedGrant]", rows)
