"""The event delivery worker: a task of every worker process that makes the deliveries due, off
the request path, and now and then reports expiring and expired subscriptions and prunes the
delivery log. Every process of every node runs one; the database queue shares the work out."""

from __future__ import annotations

import asyncio
import logging

from licensegate.domain import eventdelivery, expiryevents
from licensegate.domain.eventdelivery import Courier
from licensegate.services import Services
from licensegate.store.database import DatabaseUnavailable

log = logging.getLogger("licensegate.events")

SCAN_EVERY = 60  # seconds between looks for expiring and expired subscriptions
PRUNE_EVERY = 3600


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


async def keep_delivering(services: Services) -> None:
    """Deliver while deliveries are due; when none is, wait `event_poll_ms` and look again."""
    courier = courier_of(services)
    settings = services.settings
    scanned = pruned = 0
    while True:
        claimed = 0
        try:
            claimed = await eventdelivery.deliver_due(courier)
            now = services.clock.now()
            if now - scanned >= SCAN_EVERY:
                scanned = now
                await expiryevents.scan(services.db, now, days=settings.event_expiring_days)
            if now - pruned >= PRUNE_EVERY:
                pruned = now
                await eventdelivery.prune(courier)
        except DatabaseUnavailable as exc:
            log.warning("delivering events: %s; will try again", exc)
        except Exception:
            log.exception("delivering events failed; will try again")
        if not claimed:
            await asyncio.sleep(settings.event_poll_ms / 1000)
