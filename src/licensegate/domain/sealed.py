"""Re-sealing every secret at rest under the current deployment key (the second half of a key
rotation: `licensegate rotate-key` or `licensegate reseal`)."""

from __future__ import annotations

from licensegate.domain import appkeys
from licensegate.secretbox import SecretBox, is_sealed
from licensegate.store import sealed as store
from licensegate.store.database import Database

BATCH = 500


async def reseal_all(db: Database, box: SecretBox) -> int:
    """Re-seal every value not sealed under the current key; returns how many changed. Safe to
    run while the service runs: each value is replaced only if it did not change meanwhile."""
    await appkeys.provision_all(db, box)  # clear secrets of old applications get sealed first
    changed = 0
    for table, key, column, purpose in store.SEALED_COLUMNS:
        after: object = None
        while rows := await store.sealed_values(db, table, key, column, after, BATCH):
            for row in rows:
                after = row["k"]
                old = row["v"]
                if not is_sealed(old) or not box.needs_resealing(old):
                    continue
                new = box.seal(box.open(old, purpose), purpose)
                changed += await store.reseal(db, table, key, column, row["k"], old, new)
    return changed
