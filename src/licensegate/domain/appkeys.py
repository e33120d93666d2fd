"""The keys that protect an application's client answers, and the deployment's own signing key.

Every application has a 64-hex `secret` (what API 1.2 and legacy 1.0 clients are built with) and
an Ed25519 key pair whose public half integrators paste into a client library. Both are made
with the application, kept sealed under the deployment key (`secretbox`), can be shown and
rotated by the owner, and never appear in logs. Applications made before keys existed get theirs
on first need (`provision_all` runs at `serve`/`migrate`, and the client path provisions lazily).
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from licensegate import ids, private, signing
from licensegate.secretbox import SecretBox, is_sealed
from licensegate.signing import Signer, SignerCache
from licensegate.store import appkeys as store
from licensegate.store.database import Database, DatabaseError, Executor, Row
from licensegate_client import licensefile

log = logging.getLogger("licensegate")

SECRET = "apps.secret"  # noqa: S105  (a purpose label, not a secret)
SIGNING_KEY = "apps.signing_key"
DEPLOYMENT_SIGNING_KEY = "signing_keys.signing_key"
DEPLOYMENT_COPY = "deployment-signing-key.sealed"  # in the data folder: sealed, like in the database


@dataclass(frozen=True)
class SealedKeys:
    """A new application's keys, sealed for storage (and the secret in clear, to show once)."""

    secret: str
    sealed_secret: str
    sealed_signing_key: str
    public_key: str


@dataclass(frozen=True)
class ClientKeys:
    public_key: str
    secret: str


def _seal_seed(box: SecretBox, seed: bytes, purpose: str) -> str:
    return box.seal(seed.hex(), purpose)


def make_keys(box: SecretBox, secret: str | None = None) -> SealedKeys:
    secret = secret or ids.app_secret()
    seed = signing.new_seed()
    return SealedKeys(
        secret=secret,
        sealed_secret=box.seal(secret, SECRET),
        sealed_signing_key=_seal_seed(box, seed, SIGNING_KEY),
        public_key=signing.public_key_of(seed),
    )


async def provision(db: Executor, box: SecretBox, app_id: int) -> None:
    """Give one application made before keys existed its keys; its old secret is kept, sealed."""
    row = await store.get(db, app_id)
    if row is None or row["signing_key"] is not None:
        return
    old = row["secret"]
    keys = make_keys(box, None if is_sealed(old) else old)
    await store.provision(
        db,
        app_id,
        secret=old if is_sealed(old) else keys.sealed_secret,
        signing_key=keys.sealed_signing_key,
        public_key=keys.public_key,
    )


async def provision_all(db: Database, box: SecretBox) -> int:
    """Provision every application that has no keys yet; returns how many were done."""
    done = 0
    while rows := await store.unprovisioned(db, 500):
        for row in rows:
            await provision(db, box, row["id"])
            done += 1
    return done


async def client_keys(db: Executor, box: SecretBox, app_id: int) -> ClientKeys:
    await provision(db, box, app_id)
    row = await store.get(db, app_id)
    assert row is not None
    return ClientKeys(public_key=row["public_key"], secret=box.open(row["secret"], SECRET))


async def rotate_signing_key(db: Executor, box: SecretBox, app_id: int, now: int) -> str:
    """A new key pair; answers and license files are signed with it from now on. The old public
    key is kept (`retired_public_keys`): files it signed verify until they expire in programs
    that still trust it. Returns the new public key."""
    old = await store.get(db, app_id)
    if old is not None and old["public_key"] is not None:
        await store.retire_public_key(
            db, app_id, kid=licensefile.key_id(old["public_key"]), public_key=old["public_key"], now=now
        )
    seed = signing.new_seed()
    public_key = signing.public_key_of(seed)
    await store.set_signing_key(
        db, app_id, signing_key=_seal_seed(box, seed, SIGNING_KEY), public_key=public_key, now=now
    )
    return public_key


async def rotate_secret(db: Executor, box: SecretBox, app_id: int, now: int) -> str:
    secret = ids.app_secret()
    await store.set_secret(db, app_id, box.seal(secret, SECRET), now)
    return secret


async def deployment_public_key(db: Executor, box: SecretBox, now: int) -> str:
    return (await _deployment_row(db, box, now))[1]


async def _deployment_row(db: Executor, box: SecretBox, now: int) -> tuple[str, str]:
    row = await store.deployment_key(db)
    if row is None:
        seed = signing.new_seed()
        await store.insert_deployment_key(
            db,
            signing_key=_seal_seed(box, seed, DEPLOYMENT_SIGNING_KEY),
            public_key=signing.public_key_of(seed),
            now=now,
        )
        row = await store.deployment_key(db)
        assert row is not None
    return row["signing_key"], row["public_key"]


class Signers:
    """One worker's signers: each application's (by its sealed key) and the deployment's.

    Decrypting a key happens once per worker and key; a rotation makes a new sealed value, so a
    rotated key is never used again."""

    def __init__(self, box: SecretBox, copy: Path | None = None) -> None:
        self._box = box
        self._signers = SignerCache()
        self._secrets: dict[str, str] = {}
        self._deployment: Signer | None = None
        # Where the deployment's sealed signing key is copied (`DEPLOYMENT_COPY` in the data
        # folder), so that a worker starting while the database is away still signs its 503s.
        self._copy = copy
        self._from_copy = False
        # (ownerid, name) -> (sealed signing key, sealed secret) of applications this worker
        # served: what signs a refusal when the database does not answer (asking it again would
        # double the wait of a call the database just failed).
        self._apps: dict[tuple[str, str], tuple[str, str]] = {}

    def note_app(self, ownerid: str, name: str, signing_key: str, secret: str) -> None:
        if len(self._apps) >= 10_000:
            self._apps.clear()
        self._apps[(ownerid, name)] = (signing_key, secret)

    def noted_app(self, ownerid: str, name: str) -> tuple[str, str] | None:
        """The keys of an application this worker served, as they were then (no database)."""
        return self._apps.get((ownerid, name))

    def _signer(self, sealed: str, purpose: str) -> Signer:
        signer = self._signers.get(sealed)
        if signer is None:
            seed = bytes.fromhex(self._box.open(sealed, purpose))
            signer = self._signers.put(sealed, Signer(seed))
        return signer

    def signer(self, sealed: str) -> Signer:
        """An application's signer, from its sealed `signing_key` column value."""
        return self._signer(sealed, SIGNING_KEY)

    async def sealed_keys(
        self, db: Executor, app_id: int, signing_key: str | None, secret: str
    ) -> tuple[str, str]:
        """(sealed signing key, sealed secret) of an application as the caller read them, after
        provisioning an application made before keys existed."""
        if signing_key is not None:
            return signing_key, secret
        await provision(db, self._box, app_id)
        row = await store.get(db, app_id)
        assert row is not None
        return row["signing_key"], row["secret"]

    def secret(self, sealed: str) -> str:
        """An application's secret in clear, from its sealed column value (cached per worker)."""
        secret = self._secrets.get(sealed)
        if secret is None:
            if len(self._secrets) > 10_000:
                self._secrets.clear()
            secret = self._secrets[sealed] = self._box.open(sealed, SECRET)
        return secret

    def deployment_known(self) -> Signer | None:
        """The deployment's signer if this worker has it, or its copy in the data folder does,
        without asking the database."""
        if self._deployment is None and self._copy is not None:
            try:
                sealed = self._copy.read_text().strip()
                self._deployment = self._signer(sealed, DEPLOYMENT_SIGNING_KEY)
                self._from_copy = True
            except FileNotFoundError:
                pass
            except Exception as exc:  # unreadable, or sealed under a key this process lacks
                log.warning("cannot use the copy of the deployment's signing key in %s: %s", self._copy, exc)
        return self._deployment

    async def deployment(self, db: Executor, now: int) -> Signer:
        """The deployment's signer, from the database (once per worker); from the copy in the data
        folder while the database cannot answer."""
        if self._deployment is not None and not self._from_copy:
            return self._deployment
        try:
            sealed, _public = await _deployment_row(db, self._box, now)
        except DatabaseError:
            known = self.deployment_known()
            if known is None:
                raise
            return known
        self._deployment, self._from_copy = self._signer(sealed, DEPLOYMENT_SIGNING_KEY), False
        self._keep_copy(sealed)
        return self._deployment

    def _keep_copy(self, sealed: str) -> None:
        if self._copy is None:
            return
        try:
            if self._copy.exists() and self._copy.read_text().strip() == sealed:
                return
            private.folder(self._copy.parent)
            temporary = self._copy.with_name(f"{self._copy.name}.{os.getpid()}.tmp")
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
            with private.create(temporary) as out:
                out.write(sealed.encode("ascii"))
            os.replace(temporary, self._copy)  # whole, even with other workers writing the same
        except OSError as exc:
            log.warning("cannot keep a copy of the deployment's signing key in %s: %s", self._copy, exc)


async def retired_public_keys(db: Executor, app_id: int) -> list[Row]:
    """The public halves of the application's earlier signing keys, newest first."""
    return await store.retired_public_keys(db, app_id)
