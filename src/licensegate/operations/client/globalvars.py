"""Client API — Global Variable."""

from __future__ import annotations

from typing import Any

from licensegate.domain import globalvars
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param


@registry.operation(
    "var",
    group="Users",
    summary="Global Variable",
    requires="session",
    statuses=frozenset({200, 400, 401, 403, 404, 429, 500, 503}),
    params=[Param("varid", required=True, max_length=64, doc="the global variable's name")],
    returns={"value": "the variable's value (also in `message`, where KeyAuth clients read it)"},
)
async def global_variable(call: ClientCall) -> dict[str, Any]:
    """The value of one of the application's global variables. KeyAuth clients read it from
    `message`, so `message` is the value itself; `value` carries it too.

    Refusals: an unknown variable is 404 `variable_not_found`; a variable marked for logged-in
    sessions only (`authed`), asked for by a session that is not logged in, is 403
    `session_not_validated` (with the application's `sessionunauthed` message)."""
    variable = await globalvars.get(call.db, call.app.id, call.args.text("varid"))
    if variable.authed:
        await call.require_logged_in()
    return {"message": variable.value, "value": variable.value}
