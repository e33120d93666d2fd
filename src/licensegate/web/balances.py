"""What the reseller's Balance page and the owner's Seller team page both show of a reseller's
balance: the names of its duration buckets and a page of its balance history."""

from __future__ import annotations

from typing import Any

from licensegate.domain import team
from licensegate.web.visit import Visit

BUCKET_LABELS = {
    "day": "Day",
    "week": "Week",
    "month": "Month",
    "three_month": "3 months",
    "six_month": "6 months",
    "year": "Year",
    "lifetime": "Lifetime",
}


def before_of(visit: Visit) -> int | None:
    """The `before` id of a history page (older than that row); None for the newest."""
    text = visit.request.query_params.get("before", "")[:18]
    return int(text) if text.isdigit() and int(text) > 0 else None


async def history_context(visit: Visit, account_id: int, path: str) -> dict[str, Any]:
    """What `balance/history.html` reads: one page of the reseller's balance history."""
    before = before_of(visit)
    rows, older = await team.balance_history(visit.services.db, account_id, before=before)
    return {
        "history": rows,
        "history_older": f"{path}?before={older}#h-history" if older is not None else "",
        "history_newest": f"{path}#h-history" if before is not None else "",
        "bucket_labels": BUCKET_LABELS,
    }
