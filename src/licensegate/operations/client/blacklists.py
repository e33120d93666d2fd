"""Client API — Check Blacklist."""

from __future__ import annotations

from typing import Any

from licensegate.domain import blacklists
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

GROUP = "Users"


@registry.operation(
    "checkblacklist",
    group=GROUP,
    summary="Check Blacklist",
    requires="session",
    params=[Param("hwid", max_length=256, doc="the machine's hardware id")],
    returns={"blacklisted": "true when the HWID or the caller's IP address is blacklisted"},
)
async def check_blacklist(call: ClientCall) -> dict[str, Any]:
    """Whether this machine (its HWID) or the caller's IP address is blacklisted. The answer is a
    success either way and says which in `blacklisted` (KeyAuth answered `success: false` for
    "not blacklisted"; here `success` only says the check ran)."""
    hwid = call.args.opt_text("hwid")
    kind = await blacklists.blocked(call.db, call.app.id, hwids=[hwid] if hwid else [], ip=call.ip)
    if kind:
        return {"message": "Client is blacklisted", "blacklisted": True}
    return {"message": "Client is not blacklisted", "blacklisted": False}
