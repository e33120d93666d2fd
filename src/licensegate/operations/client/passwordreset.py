"""Client API — Forgot Password."""

from __future__ import annotations

from typing import Any

from licensegate.domain import passwordreset
from licensegate.operations.client.logins import AUTH, USERNAME
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param


@registry.operation(
    "forgot",
    group=AUTH,
    summary="Forgot Password",
    requires="session",
    params=[USERNAME, Param("email", required=True, max_length=254, doc="the address the user registered")],
)
async def forgot(call: ClientCall) -> dict[str, Any]:
    """E-mail a single-use link (valid for an hour) to set a new password, if the username and
    address match an account. The answer is the same when they do not, so this cannot be used
    to learn who has an account. 403 `email_not_configured` when the server has no SMTP set up."""
    username = call.args.text("username")
    await call.limit_attempts(username)
    await call.failed_attempt()  # whether an account matched cannot show, so every request counts
    await passwordreset.request(
        call.db,
        call.services.mailer,
        call.app,
        username=username,
        email=call.args.text("email"),
        public_url=call.services.settings.public_url,
        now=call.now(),
    )
    return {"message": "If the username and e-mail address match an account, a reset link has been sent."}
