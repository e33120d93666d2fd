"""Client API — Heartbeat: a logged-in session says it is still running and learns what changed
(see domain/heartbeats.py)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import heartbeats
from licensegate.operations.client import credits, entitlements
from licensegate.operations.client.registry import ClientCall, registry


async def beat_if_wanted(call: ClientCall, answered: dict[str, Any] | None = None) -> None:
    """Record a beat of the call's session when its application wants beats (no write otherwise);
    a login passes what it `answered` (entitlements, credits), which the next heartbeat compares
    with, in the same statement."""
    if call.app.heartbeat_interval > 0 and call.session is not None:
        state = None if answered is None else _state(answered)
        await heartbeats.beat(call.db, call.session.id, call.now(), state)


def _state(answered: dict[str, Any]) -> str:
    balance = answered["credits"]["balance"] if answered.get("credits") else None
    return heartbeats.state_of([item["code"] for item in answered["entitlements"]], balance)


@registry.operation(
    "heartbeat",
    group="Sessions",
    summary="Heartbeat",
    requires="validated",
    returns={
        "interval": "seconds until the next beat is due (0: the application wants none)",
        "entitlements": entitlements.BRIEF,
        "credits": credits.CREDITS,
        "changed": "what differs from the session's previous heartbeat (or its login, when the "
        "application wants beats): a list of `entitlements`, `credits`; empty at a first heartbeat "
        "with nothing to compare with",
        "entitlements_added": "[code]: entitlements the user gained since then",
        "entitlements_removed": "[code]: entitlements the user lost since then",
    },
)
async def heartbeat(call: ClientCall) -> dict[str, Any]:
    """Beat: the session is running. Answers when the next beat is due, the user's entitlements
    and credit balance now, and what changed since the session's previous heartbeat (or its
    login, when the application wants beats). A ban (of the user or of the key it logged in
    with) or a pause (of the user or of a subscription they hold) ends the session: the next
    beat is refused `session_not_found` with `ended` (`banned` or `paused`), the application's
    `userbanned`, `keybanned` or `pausedsub` message and, for a ban, its `reason`; the program
    must stop. A paused application refuses it `app_paused`. A session that missed its beats by
    more than the grace has been ended (`session_not_found`). `check` beats too, without the
    changes."""
    session = call.live_session
    assert session.user_id is not None
    held = await entitlements.of_user(call, session.user_id)
    balance = await credits.of_session(call, session.user_id, session.credential or "")
    found = heartbeats.changes(
        session.beat_state,
        [item["code"] for item in held],
        None if balance is None else balance["balance"],
    )
    await heartbeats.beat(
        call.db,
        session.id,
        call.now() if call.app.heartbeat_interval > 0 else None,
        None if found.state == session.beat_state else found.state,
    )
    return {
        "message": "Heartbeat recorded.",
        "interval": call.app.heartbeat_interval,
        "entitlements": held,
        "credits": balance,
        "changed": found.changed,
        "entitlements_added": found.added,
        "entitlements_removed": found.removed,
    }
