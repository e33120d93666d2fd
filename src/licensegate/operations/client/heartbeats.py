"""Client API — Heartbeat: a logged-in session says it is still running (see domain/heartbeats.py)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import heartbeats
from licensegate.operations.client import entitlements
from licensegate.operations.client.registry import ClientCall, registry


async def beat_if_wanted(call: ClientCall) -> None:
    """Record a beat of the call's session when its application wants beats (no write otherwise)."""
    if call.app.heartbeat_interval > 0 and call.session is not None:
        await heartbeats.beat(call.db, call.session.id, call.now())


@registry.operation(
    "heartbeat",
    group="Sessions",
    summary="Heartbeat",
    requires="validated",
    returns={
        "interval": "seconds until the next beat is due (0: the application wants none)",
        "entitlements": entitlements.BRIEF,
    },
)
async def heartbeat(call: ClientCall) -> dict[str, Any]:
    """Beat: the session is running. Answers when the next beat is due and the user's
    entitlements now (a program compares them with what it had). A session that missed its
    beats by more than the grace has been ended, and a banned user's sessions end with the ban:
    the beat is then refused (`session_not_found`) and the program must stop. `check` beats too."""
    await beat_if_wanted(call)
    user_id = call.live_session.user_id
    assert user_id is not None
    return {
        "message": "Heartbeat recorded.",
        "interval": call.app.heartbeat_interval,
        "entitlements": await entitlements.of_user(call, user_id),
    }
