"""Client API — what a logged-in user does to their own account: Change Username and Ban User."""

from __future__ import annotations

from typing import Any

from licensegate.domain import users
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param


@registry.operation(
    "changeUsername",
    group="Authentication",
    summary="Change Username",
    requires="validated",
    params=[Param("newUsername", required=True, max_length=64, doc="the new username")],
)
async def change_username(call: ClientCall) -> dict[str, Any]:
    """Rename the logged-in user; every session of the user ends (log in again with the new
    name). Refusals: `username_taken` (409), `username_too_short`, `username_not_allowed`."""
    session = call.live_session
    assert session.user_id is not None
    await users.change_username(
        call.db, call.app, session.user_id, call.args.text("newUsername"), await call.messages()
    )
    return {"message": "Successfully changed username, user logged out."}


@registry.operation(
    "ban",
    group="Users",
    summary="Ban User",
    requires="validated",
    params=[
        Param("reason", max_length=256, doc="why (default: banned by the client program)"),
        Param("hwid", max_length=256, doc="a HWID to blacklist as well"),
    ],
)
async def ban(call: ClientCall) -> dict[str, Any]:
    """The client bans its own user (say, on detecting tampering): the user is banned, their
    HWIDs, the HWID sent and the caller's IP address are blacklisted, and their sessions end."""
    session = call.live_session
    assert session.user_id is not None
    await users.ban_self(
        call.db,
        call.app,
        session.user_id,
        reason=call.args.opt_text("reason"),
        hwid=call.args.opt_text("hwid"),
        ip=call.ip,
        now=call.now(),
    )
    return {"message": "Successfully Banned User"}
