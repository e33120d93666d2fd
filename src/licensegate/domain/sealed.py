"""Re-sealing every secret at rest under the current deployment key (the second half of a key
rotation: `licensegate rotate-key` or `licensegate reseal`)."""

from __future__ import annotations

from collections.abc import Callable

from licensegate import ids
from licensegate.domain import appkeys, deploymentkey
from licensegate.secretbox import SecretBox, is_sealed
from licensegate.store import sealed as store
from licensegate.store.database import Database

BATCH = 500
# What one sealed column's stored value becomes (None: it stays), given the column's purpose.
Renewal = Callable[[str, str], str | None]


async def _renew(db: Database, columns: list[tuple[str, str, str, str]], renewal: Renewal) -> int:
    """Replace stored values of these columns as `renewal` says; each only if it did not change
    meanwhile. Returns how many changed."""
    changed = 0
    for table, key, column, purpose in columns:
        after: object = None
        while rows := await store.sealed_values(db, table, key, column, after, BATCH):
            for row in rows:
                after = row["k"]
                new = renewal(row["v"], purpose)
                if new is not None:
                    changed += await store.reseal(db, table, key, column, row["k"], row["v"], new)
    return changed


async def seal_clear(db: Database, box: SecretBox) -> int:
    """Seal the secrets stored in clear before this version sealed them (users' two-factor
    secrets, webhook URLs, log forwarding URLs), and key client sessions stored under the id
    their client holds by its digest instead. Returns how many values changed. Safe to run while
    the service runs: a value is replaced only if it did not change meanwhile."""

    def sealed(value: str, purpose: str) -> str | None:
        return None if is_sealed(value) else box.seal(value, purpose)

    changed = await _renew(db, store.SEALED_LATER, sealed)
    while session_ids := await store.session_ids_in_clear(db, BATCH):
        for session_id in session_ids:
            changed += await store.rekey_session(db, session_id, ids.digest(session_id))
    return changed


async def reseal_all(db: Database, box: SecretBox, now: int) -> int:
    """Re-seal every value not sealed under the current key, then record that key as the
    database's (`deploymentkey`); returns how many changed. Safe to run while the service runs:
    each value is replaced only if it did not change meanwhile."""
    await appkeys.provision_all(db, box)  # clear secrets of old applications get sealed first
    await seal_clear(db, box)

    def resealed(value: str, purpose: str) -> str | None:
        if not is_sealed(value) or not box.needs_resealing(value):
            return None
        return box.seal(box.open(value, purpose), purpose)

    changed = await _renew(db, store.SEALED_COLUMNS, resealed)
    await deploymentkey.record_resealed(db, box, now)
    return changed
