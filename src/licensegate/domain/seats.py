"""Seats: how many machines and concurrent sessions a user may hold at once, so one account
cannot be shared by many people without a hard device lock.

A rule sets `max_machines` (distinct HWIDs among the live sessions; a login without a HWID adds
no machine) and `max_sessions` (logged-in, unexpired sessions), counted over the user's sessions
or only those logged in with the same key (`count_by`), and what a login over the limit does
(`overage`): `refuse` it (`seat_limit`, the application's `seatlimit` message), `end_oldest`
(the oldest sessions, or every session of the oldest machines, end to make room), or `allow` it
up to `overage_percent` over the limits, then refuse. A rule is set on a subscription (for every
holder), a key or a user; the user's wins, then the key's the session logged in with, then the
most generous of the subscriptions the user holds unexpired.

The count runs in the login's transaction after the user's row is locked (SQLite's BEGIN
IMMEDIATE, PostgreSQL's row lock), so concurrent logins of one user are counted one after the
other and a limit holds exactly. An application without rules (`apps.seats` = 0) never counts.
"""

from __future__ import annotations

from licensegate.domain import entitlements, errorcodes, events
from licensegate.domain.entitlements import Target as Target
from licensegate.domain.messages import Messages
from licensegate.domain.permissions import Scope
from licensegate.store import seats as store
from licensegate.store import sessions as session_store
from licensegate.store.database import Executor
from licensegate.store.seats import LiveSession
from licensegate.store.seats import RuleRow as RuleRow

COUNT_BY = ("user", "key")
OVERAGES = ("refuse", "end_oldest", "allow")
_PRECEDENCE = {"user": 0, "key": 1, "sub": 2}


async def target(db: Executor, scope: Scope, *, sub: str | None, key: str | None, user: str | None) -> Target:
    """The one subscription, key or user named (exactly one must be), found as entitlements find
    theirs (the same labels in the audit log)."""
    if sum(value is not None for value in (sub, key, user)) != 1:
        raise errorcodes.SEAT_TARGET()
    return await entitlements.target(db, scope, sub=sub, key=key, user=user)


def _generosity(limit: int | None) -> float:
    return float("inf") if limit is None else limit


def choose(rules: list[RuleRow]) -> RuleRow | None:
    """The rule that applies: the user's, else the key's, else the most generous subscription's."""
    if not rules:
        return None
    best = min(_PRECEDENCE[rule["owner"]] for rule in rules)
    mine = [rule for rule in rules if _PRECEDENCE[rule["owner"]] == best]
    return max(mine, key=lambda r: (_generosity(r["max_sessions"]), _generosity(r["max_machines"])))


def allowed(limit: int, rule: RuleRow) -> int:
    """The limit with the rule's overage allowance (`allow`: N% over, rounded down)."""
    return limit + limit * rule["overage_percent"] // 100 if rule["overage"] == "allow" else limit


def over_limit(rule: RuleRow, live: list[LiveSession], hwid: str | None) -> list[str]:
    """The sessions (oldest first) that would have to end for one more login from `hwid` to fit;
    empty when it fits."""
    ending: list[str] = []
    left = list(live)
    if rule["max_sessions"] is not None:
        over = len(left) + 1 - allowed(rule["max_sessions"], rule)
        if over > 0:
            ending += [row["id"] for row in left[:over]]
            left = left[over:]
    if rule["max_machines"] is not None and hwid is not None:
        machines = list(dict.fromkeys(row["hwid"] for row in left if row["hwid"] is not None))
        if hwid not in machines:
            over = len(machines) + 1 - allowed(rule["max_machines"], rule)
            if over > 0:
                gone = set(machines[:over])
                ending += [row["id"] for row in left if row["hwid"] in gone]
    return ending


async def hold(
    tx: Executor,
    app_id: int,
    user_id: int,
    credential: str,
    session_id: str,
    hwid: str | None,
    msg: Messages,
    now: int,
) -> None:
    """Make room for this login under the rule that applies, or refuse it. Run in the login's
    transaction after `lock_user`."""
    rule = choose(await store.for_login(tx, app_id, user_id, credential, now))
    if rule is None:
        return
    by_key = credential if rule["count_by"] == "key" else None
    live = await store.live_sessions(tx, user_id, by_key, now, session_id)
    ending = over_limit(rule, live, hwid)
    if not ending:
        return
    if rule["overage"] != "end_oldest":
        raise errorcodes.SEAT_LIMIT(msg("seatlimit"))
    for ended in ending:
        await session_store.end(tx, ended)
    await events.record(
        tx, app_id, "session.ended", now, {"credential": credential, "ip": None, "count": len(ending)}
    )


async def put(
    db: Executor,
    app_id: int,
    to: Target,
    *,
    max_machines: int | None,
    max_sessions: int | None,
    count_by: str,
    overage: str,
    overage_percent: int,
    now: int,
) -> RuleRow:
    if max_machines is None and max_sessions is None:
        raise errorcodes.SEAT_RULE_EMPTY()
    await store.put(
        db,
        app_id,
        to.owner,
        to.owner_id,
        max_machines=max_machines,
        max_sessions=max_sessions,
        count_by=count_by,
        overage=overage,
        overage_percent=overage_percent,
        now=now,
    )
    return await show(db, to)


async def show(db: Executor, to: Target) -> RuleRow:
    row = await store.get(db, to.owner, to.owner_id)
    if row is None:
        raise errorcodes.SEAT_RULE_NOT_FOUND(target=to.label)
    return row


async def delete(db: Executor, to: Target) -> RuleRow:
    row = await show(db, to)
    await store.delete(db, to.owner, to.owner_id)
    return row


async def in_use(db: Executor, user_id: int, now: int) -> tuple[int, int]:
    """(live sessions, distinct machines among them) of a user."""
    live = await store.live_sessions(db, user_id, None, now, "")
    return len(live), len({row["hwid"] for row in live if row["hwid"] is not None})
