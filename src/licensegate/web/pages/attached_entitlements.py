"""The entitlements part of the subscription, key and user pages: what is attached to the one
shown, and the entitlements that could be (the forms post to `pages/entitlements.py`)."""

from __future__ import annotations

from typing import Any

from licensegate.domain import entitlements
from licensegate.domain.entitlements import Owner
from licensegate.domain.permissions import Area
from licensegate.web.navigation import AppPage
from licensegate.web.visit import Visit

SLUG = "entitlements"
AREA: Area = "subscriptions"


async def attached(
    visit: Visit, app: AppPage, owner: Owner, owner_id: int, name: str, back: str
) -> dict[str, Any] | None:
    """What a subscription, key or user page shows of its entitlements (the partial
    `entitlements/attached.html`), or None when the account may not manage them."""
    if not visit.account.allows(AREA):
        return None
    db = visit.services.db
    mine = await entitlements.attached_to(db, owner, owner_id)
    held = {row["code"] for row in mine}
    # A user's page also says what the user has now, through subscriptions and keys as well.
    held_now = await entitlements.of_user(db, owner_id, visit.now()) if owner == "user" else []
    return {
        "attached": mine,
        "held_now": held_now,
        "choices": [
            (row["code"], f"{row['code']} ({row['name']})")
            for row in await entitlements.list_all(db, app.id)
            if row["code"] not in held
        ],
        "owner": owner,
        "name": name,
        "back": back,
        "path": app.path(SLUG),
    }
