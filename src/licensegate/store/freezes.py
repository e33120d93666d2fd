"""A grant's clock stops while the grant itself, its subscription or its application is paused;
this is the one rule for giving the stopped time back when one of those pauses ends."""

from __future__ import annotations

from licensegate.store.database import greatest, least

# The other two freezes a grant may be under, as seen from an UPDATE of user_subscriptions.
SUB_PAUSE = "(SELECT s.paused_at FROM subscriptions s WHERE s.id = user_subscriptions.subscription_id)"
APP_PAUSE = (
    "(SELECT a.paused_at FROM subscriptions s JOIN apps a ON a.id = s.app_id "
    "WHERE s.id = user_subscriptions.subscription_id)"
)


def give_back(dialect: str, lifted: str, others: tuple[str, str]) -> str:
    """Seconds a grant gets back when the freeze that began at `lifted` ends now (`?`): the time
    from that freeze's start until the earliest other freeze still on the grant, or until now.
    Whichever freeze ends, each stopped second is given back exactly once. Takes three `?`
    parameters, all `now`."""
    until = least(dialect, f"COALESCE({others[0]}, ?)", f"COALESCE({others[1]}, ?)", "?")
    return greatest(dialect, "0", f"{until} - {lifted}")
