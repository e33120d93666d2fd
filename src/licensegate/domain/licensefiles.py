"""Signed license files: what a program keeps to start without the server (docs/offline.md).

A file is issued to a user who may log in now (not banned, a live subscription), for one machine
(the HWID of the session that asks, or the one the seller names), and says what the user holds:
the subscriptions with their expiry and the entitlements. It is signed by the application's
Ed25519 key and names that key by its id; it is valid until its expiry, the sooner of the
application's TTL and the end of the user's last live subscription. A file cannot be revoked
before then: a ban, a pause or an HWID reset is known only to the next online check, which
refuses. A client's requests wait the application's cooldown between two files of one user, so
a user cannot farm files by resetting machines; every file is recorded (`license_files`) and
written in the audit log under the user, hence in the user's timeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from licensegate.config import Settings
from licensegate.domain import appkeys, entitlements, errorcodes
from licensegate.domain.appkeys import Signers
from licensegate.domain.errors import RateLimited, Refusal
from licensegate.domain.messages import Messages
from licensegate.secretbox import SecretBox
from licensegate.store import licensefiles as store
from licensegate.store import logins as login_store
from licensegate.store.database import Executor
from licensegate.store.licensefiles import FileApp
from licensegate_client import licensefile

MIN_TTL = 3600


@dataclass(frozen=True, slots=True)
class Policy:
    """The deployment's defaults for applications that set none of their own."""

    ttl: int
    cooldown: int

    @classmethod
    def of(cls, settings: Settings) -> Policy:
        return cls(ttl=settings.license_file_ttl, cooldown=settings.license_file_cooldown)


@dataclass(frozen=True, slots=True)
class Ask:
    """Who asks for a file, for whom and for which machine."""

    user_id: int
    hwid: str | None
    encrypt: bool
    issued_by: str  # `client`, or the seller's actor
    credential: str | None = None  # the key the session logged in with, when it did with a key
    limited: bool = True  # a client's ask waits the cooldown; the seller's does not


@dataclass(frozen=True, slots=True)
class Issued:
    text: str
    serial: str
    username: str
    hwid: str | None
    kid: str
    issued_at: int
    expires_at: int

    def audited(self) -> dict[str, Any]:
        """What the audit log keeps of it (never the file, which is the user's to keep)."""
        return {"serial": self.serial, "hwid": self.hwid, "kid": self.kid, "expires": self.expires_at}


async def _signing(db: Executor, box: SecretBox, app_id: int) -> tuple[FileApp, str, str]:
    """The application, its sealed signing key and its public key."""
    app = await store.app(db, app_id)
    if app is not None and app["signing_key"] is None:
        await appkeys.provision(db, box, app_id)  # made before keys existed
        app = await store.app(db, app_id)
    assert app is not None
    sealed, public_key = app["signing_key"], app["public_key"]
    assert sealed is not None
    assert public_key is not None
    return app, sealed, public_key


def _cooldown_refusal(remaining: int) -> Refusal:
    refusal = RateLimited(remaining, errorcodes.LICENSE_FILE_COOLDOWN.message.format(remaining=remaining))
    refusal.error = errorcodes.LICENSE_FILE_COOLDOWN.code
    return refusal


async def issue(
    db: Executor,
    box: SecretBox,
    signers: Signers,
    policy: Policy,
    app_id: int,
    ask: Ask,
    *,
    msg: Messages,
    now: int,
) -> Issued:
    app, sealed, public_key = await _signing(db, box, app_id)
    user = await store.user(db, app_id, ask.user_id)
    if user is None:
        raise errorcodes.USER_NOT_FOUND(username=str(ask.user_id))
    if user["banned_reason"] is not None:
        raise errorcodes.USER_BANNED(msg("userbanned", reason=user["banned_reason"]))
    subscriptions: list[dict[str, Any]] = []
    frozen = False
    for grant in await login_store.grants(db, ask.user_id):
        if (
            grant["paused_at"] is not None
            or grant["sub_paused_at"] is not None
            or app["paused_at"] is not None
        ):
            frozen = frozen or grant["expires_at"] > now
        elif grant["expires_at"] > now:
            subscriptions.append({"name": grant["subscription"], "expiry": grant["expires_at"]})
    if not subscriptions:
        if frozen:
            raise errorcodes.SUBSCRIPTION_PAUSED(msg("pausedsub"))
        raise errorcodes.NO_ACTIVE_SUBSCRIPTION(msg("noactivesubs"))
    key = await store.key_of_user(db, ask.user_id, ask.credential)
    if ask.encrypt and (key is None or not ask.hwid):
        raise errorcodes.LICENSE_FILE_NEEDS_KEY()
    if ask.limited:
        cooldown = policy.cooldown if app["license_file_cooldown"] is None else app["license_file_cooldown"]
        if cooldown > 0 and not await store.claim(db, ask.user_id, now, cooldown):
            last = user["license_file_at"] or now
            raise _cooldown_refusal(max(1, last + cooldown - now))
    ttl = max(MIN_TTL, policy.ttl if app["license_file_ttl"] is None else app["license_file_ttl"])
    expires_at = min(now + ttl, max(int(sub["expiry"]) for sub in subscriptions))
    serial = licensefile.new_serial()
    payload = {
        "format": 1,
        "serial": serial,
        "app": {"ownerid": app["ownerid"], "name": app["name"]},
        "user": user["username"],
        "key": None if key is None else key[1],
        "hwid": ask.hwid,
        "subscriptions": subscriptions,
        "entitlements": [
            {"code": row["code"], "name": row["name"], "metadata": entitlements.metadata_of(row)}
            for row in await entitlements.of_user(db, ask.user_id, now)
        ],
        "issued": now,
        "expires": expires_at,
    }
    kid = licensefile.key_id(public_key)
    secret = None
    if ask.encrypt and key is not None and ask.hwid:
        secret = licensefile.file_key(key[1], ask.hwid)
    text = licensefile.write(payload, signers.signer(sealed), kid, encrypt_with=secret)
    await store.insert(
        db,
        app_id=app_id,
        serial=serial,
        user_id=ask.user_id,
        key_id=None if key is None else key[0],
        username=user["username"],
        hwid=ask.hwid,
        kid=kid,
        encrypted=ask.encrypt,
        issued_by=ask.issued_by,
        issued_at=now,
        expires_at=expires_at,
    )
    return Issued(text, serial, user["username"], ask.hwid, kid, now, expires_at)


async def first_hwid(db: Executor, user_id: int) -> str | None:
    return await store.first_hwid(db, user_id)


async def set_policy(db: Executor, app_id: int, *, ttl: int | None, cooldown: int | None) -> None:
    """The application's own TTL and cooldown (None: the deployment's default)."""
    if ttl is not None and ttl < MIN_TTL:
        raise errorcodes.INVALID_LICENSE_FILE_TTL(param="ttl")
    await store.set_policy(db, app_id, ttl=ttl, cooldown=cooldown)


@dataclass(frozen=True, slots=True)
class PublicKey:
    kid: str
    public_key: str
    retired_at: int | None  # None: the key signing now


async def public_keys(db: Executor, box: SecretBox, app_id: int) -> list[PublicKey]:
    """The application's signing keys a program's trust store holds: the current one first, then
    the earlier ones (files they signed verify until they expire)."""
    _app, _sealed, public_key = await _signing(db, box, app_id)
    keys = [PublicKey(licensefile.key_id(public_key), public_key, None)]
    for row in await appkeys.retired_public_keys(db, app_id):
        keys.append(PublicKey(row["kid"], row["public_key"], row["retired_at"]))
    return keys
