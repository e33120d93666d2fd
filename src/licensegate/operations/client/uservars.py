"""Client API — Get User Variable and Set User Variable."""

from __future__ import annotations

from typing import Any

from licensegate.domain import uservars
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param

GROUP = "Users"
# The statuses each operation can answer (for the reference); 401 and 429 come from the endpoint.
READS = frozenset({200, 400, 401, 403, 404, 429, 500, 503})
WRITES = frozenset({200, 400, 401, 403, 429, 500, 503})
VAR = Param("var", required=True, max_length=uservars.MAX_NAME, doc="the variable's name")


@registry.operation(
    "getvar",
    group=GROUP,
    summary="Get User Variable",
    requires="validated",
    statuses=READS,
    params=[VAR],
    returns={"response": "the variable's value"},
)
async def get_user_variable(call: ClientCall) -> dict[str, Any]:
    """The value of one of the logged-in user's variables, in `response`.

    Refusals: a session that is not logged in is 403 `session_not_validated`; a variable the
    user does not have is 404 `variable_not_found`."""
    user_id = call.live_session.user_id
    assert user_id is not None
    value = await uservars.get_own(call.db, call.app.id, user_id, call.args.text("var"))
    return {"message": "Successfully retrieved variable", "response": value}


@registry.operation(
    "setvar",
    group=GROUP,
    summary="Set User Variable",
    requires="validated",
    statuses=WRITES,
    mutates=True,
    params=[
        VAR,
        Param(
            "data",
            required=True,
            max_length=uservars.MAX_DATA,
            strip=False,
            doc=f"the value (at most {uservars.MAX_DATA} characters, kept as sent)",
        ),
    ],
)
async def set_user_variable(call: ClientCall) -> dict[str, Any]:
    """Create or replace one of the logged-in user's variables.

    Refusals: a missing `var` or `data` is 400 `missing_parameter`, a name over 64 or data over
    500 characters 400 `parameter_too_long` (KeyAuth answered these with `success: true`); a
    session that is not logged in is 403 `session_not_validated`; a variable the owner made
    read-only is 403 `variable_read_only`; a session whose user was deleted meanwhile is 403
    `user_not_found`."""
    user_id = call.live_session.user_id
    assert user_id is not None
    await uservars.set_own(
        call.db, call.app.id, user_id, call.args.text("var"), call.args.text("data"), call.now()
    )
    return {"message": "Successfully set variable"}
