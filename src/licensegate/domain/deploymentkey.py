"""Which deployment key the database's secrets are sealed under, and refusing to work on a
database sealed under a key this process does not have.

A command run from another folder (or with another `LICENSEGATE_DEPLOYMENT_KEY`) would otherwise
make its own key and seal what it writes under it: an application created so cannot sign a
single answer for the service. The database records the key's public id (`keyring.key_id`,
never the key); every command and every worker checks it before working on the database.
"""

from __future__ import annotations

from licensegate.config import ConfigError
from licensegate.secretbox import PREFIX, SecretBox
from licensegate.store import deploymentkey as store
from licensegate.store.database import Executor


class WrongDeploymentKey(ConfigError):
    """The database is sealed under a deployment key this process does not have."""


def _where(box: SecretBox) -> str:
    path = box.keyring.path
    return f"from {path}" if path is not None else "from LICENSEGATE_DEPLOYMENT_KEY"


def _refusal(box: SecretBox, recorded: str) -> WrongDeploymentKey:
    return WrongDeploymentKey(
        f"the database is sealed under deployment key {recorded}, and this process has deployment key "
        f"{box.current_key_id} ({_where(box)}): it refuses to work on the database, since nothing it "
        "sealed could be opened by the service. Fix: run it with the service's key, that is the same "
        "LICENSEGATE_DATA_DIR (its deployment.key) or LICENSEGATE_DEPLOYMENT_KEY as the service, "
        f"or restore the key file whose id is {recorded} from a backup (a key rotated away goes in "
        "LICENSEGATE_DEPLOYMENT_OLD_KEYS, then `licensegate reseal`); see 'Wrong deployment key' in "
        "docs/operations.md"
    )


def _key_id_of(sealed: str) -> str | None:
    parts = sealed.split(":")
    return parts[1] if len(parts) == 3 and parts[0] == PREFIX else None


async def check(db: Executor, box: SecretBox, now: int) -> str:
    """Refuse (`WrongDeploymentKey`) a database sealed under a key `box` does not hold; record
    the current key on a database that records none yet (new, or from before the record
    existed, once what it holds is found sealed under a key `box` holds). Returns the recorded id."""
    known = box.keyring.by_id()
    recorded = await store.recorded(db)
    if recorded is None:
        for sealed in await store.sample_sealed(db):
            found = _key_id_of(sealed)
            if found is not None and found not in known:
                raise _refusal(box, found)
        await store.record(db, box.current_key_id, now, replace=False)
        recorded = await store.recorded(db)
    if recorded is None or recorded not in known:
        raise _refusal(box, str(recorded))
    return recorded


async def record_resealed(db: Executor, box: SecretBox, now: int) -> None:
    """Every secret is sealed under `box`'s current key now (a rotation's re-sealing ended)."""
    await store.record(db, box.current_key_id, now, replace=True)
