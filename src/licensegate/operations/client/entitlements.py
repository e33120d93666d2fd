"""Client API — Entitlements: what the logged-in user may use, by feature code."""

from __future__ import annotations

from typing import Any

from licensegate.domain import entitlements
from licensegate.domain.entitlements import EntitlementRow
from licensegate.operations.client.registry import ClientCall, registry

# A login's answer carries the codes and names; the metadata (up to 16 KB each) is asked for
# with Get Entitlements, so a program re-checking its licence does not fetch it every time.
BRIEF = "[{code, name}]: the user's entitlements now (see Get Entitlements)"


def brief(rows: list[EntitlementRow]) -> list[dict[str, str]]:
    return [{"code": row["code"], "name": row["name"]} for row in rows]


def full(rows: list[EntitlementRow]) -> list[dict[str, Any]]:
    return [
        {"code": row["code"], "name": row["name"], "metadata": entitlements.metadata_of(row)} for row in rows
    ]


async def of_user(call: ClientCall, user_id: int) -> list[dict[str, str]]:
    """The `entitlements` field of a login's answer (no query for an application without any)."""
    if not await call.services.entitled.get(call.db, call.app.id):
        return []
    return brief(await entitlements.of_user(call.db, user_id, call.now()))


@registry.operation(
    "entitlements",
    group="Licensing",
    summary="Get Entitlements",
    requires="validated",
    statuses=frozenset({200, 400, 401, 403, 429, 500, 503}),
    returns={"entitlements": "[{code, name, metadata (object)}] by code"},
)
async def get_entitlements(call: ClientCall) -> dict[str, Any]:
    """The logged-in user's entitlements: those of every subscription they hold now (unexpired,
    not paused), plus those the seller attached to the user or to a key the user redeemed. A
    session that is not logged in is 403 `session_not_validated`."""
    user_id = call.live_session.user_id
    assert user_id is not None
    rows = await entitlements.of_user(call.db, user_id, call.now())
    return {"message": "Successfully retrieved entitlements", "entitlements": full(rows)}
