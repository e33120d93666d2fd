"""The event delivery worker: a task of every worker process that makes the deliveries due, off
the request path, and now and then reports expiring and expired subscriptions (one worker of
one node each time, whichever takes the turn) and prunes the delivery log. Every process of
every node runs one; the database queue shares the work out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from licensegate.domain import eventdelivery, expiryevents
from licensegate.domain.eventdelivery import Courier
from licensegate.services import Services
from licensegate.store import turns
from licensegate.store.database import DatabaseUnavailable

log = logging.getLogger("licensegate.events")

SCAN_EVERY = 60  # seconds between looks for expiring and expired subscriptions
SCAN_TURN = "expiry events scan"  # one worker of one node looks each time (store/turns.py)
PRUNE_EVERY = 3600
OUTAGE_FIRST_WAIT = 1.0  # seconds before looking again once the database is unavailable; doubled
OUTAGE_MAX_WAIT = 60.0  # each time up to this


class Outage:
    """The database as the delivery loop finds it: while it is unavailable the loop waits
    longer each time (from OUTAGE_FIRST_WAIT, doubled, up to OUTAGE_MAX_WAIT), and says so once
    when the outage begins and once when it ends, not every few seconds."""

    def __init__(self) -> None:
        self.failures = 0

    def failed(self, exc: DatabaseUnavailable) -> float:
        """Seconds to wait before trying again."""
        self.failures += 1
        if self.failures == 1:
            log.warning("delivering events: %s; trying again less and less often, up to once a minute", exc)
        wait: float = OUTAGE_FIRST_WAIT * 2.0 ** min(self.failures - 1, 16)
        return min(wait, OUTAGE_MAX_WAIT)

    def answered(self) -> None:
        if self.failures:
            log.warning(
                "delivering events again: the database answers (after %d failed tries)", self.failures
            )
        self.failures = 0


def courier_of(services: Services) -> Courier:
    return Courier(
        settings=services.settings,
        db=services.db,
        clock=services.clock,
        secrets=services.secrets,
        signers=services.signers,
        mailer=services.mailer,
        wants=services.event_wants,
    )


async def keep_delivering(
    services: Services, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
) -> None:
    """Deliver while deliveries are due; when none is, wait `event_poll_ms` and look again
    (`sleep`: how it waits; tests count the waits)."""
    courier = courier_of(services)
    settings = services.settings
    outage = Outage()
    scanned = pruned = 0
    while True:
        claimed = 0
        try:
            claimed = await eventdelivery.deliver_due(courier)
            now = services.clock.now()
            if now - scanned >= SCAN_EVERY:
                scanned = now
                if await turns.take(services.db, SCAN_TURN, now, SCAN_EVERY):
                    await expiryevents.scan(services.db, now, days=settings.event_expiring_days)
                    await turns.done(services.db, SCAN_TURN, services.clock.now())
            if now - pruned >= PRUNE_EVERY:
                pruned = now
                await eventdelivery.prune(courier)
            outage.answered()
        except DatabaseUnavailable as exc:
            await sleep(outage.failed(exc))
            continue
        except Exception:
            log.exception("delivering events failed; will try again")
        if not claimed:
            await sleep(settings.event_poll_ms / 1000)
