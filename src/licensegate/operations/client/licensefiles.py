"""Client API — Get License File: a signed file the program keeps to start offline."""

from __future__ import annotations

from typing import Any

from licensegate.domain import audit, licensefiles
from licensegate.operations.client.registry import ClientCall, registry
from licensegate.operations.declarations import Param


@registry.operation(
    "licensefile",
    group="Licensing",
    summary="Get License File",
    requires="validated",
    mutates=True,
    statuses=frozenset({200, 400, 401, 403, 429, 500, 503}),
    params=[
        Param(
            "encrypt",
            kind="bool",
            doc="1: encrypt it for this machine (AES-256-GCM, key from the license key and the HWID)",
        )
    ],
    returns={
        "file": "the signed license file (text, docs/offline.md)",
        "serial": "its serial (32 hex)",
        "expires": "when it expires (Unix seconds)",
    },
)
async def get_license_file(call: ClientCall) -> dict[str, Any]:
    """A signed license file for the logged-in user, bound to the HWID the session logged in
    with; the program verifies it offline with the application's public keys (docs/offline.md).
    Refusals: 429 `license_file_cooldown` (with `Retry-After`) while the user's previous file is
    younger than the application's cooldown; `user_banned`, `subscription_paused`,
    `no_active_subscription` as a login; `license_file_needs_key` for `encrypt=1` without a key
    or an HWID; `session_not_validated` (403)."""
    session = call.live_session
    assert session.user_id is not None
    recorded = session.recorded
    ask = licensefiles.Ask(
        user_id=session.user_id,
        hwid=None if recorded is None else recorded.hwid,
        encrypt=call.args.flag("encrypt"),
        issued_by="client",
        credential=None if recorded is None else recorded.credential,
    )
    now = call.now()
    issued = await licensefiles.issue(
        call.db,
        call.services.secrets,
        call.services.signers,
        licensefiles.Policy.of(call.services.settings),
        call.app.id,
        ask,
        msg=await call.messages(),
        now=now,
    )
    entry = audit.Entry(
        app_id=call.app.id,
        account_id=None,
        actor=f"client {issued.username}",
        action="licensefile",
        target=f"user:{issued.username}",
        before=None,
        after=issued.audited(),
        ip=call.ip,
        created_at=now,
    )
    await audit.append(call.db, entry)
    return {
        "message": "Successfully issued a license file",
        "file": issued.text,
        "serial": issued.serial,
        "expires": issued.expires_at,
    }
