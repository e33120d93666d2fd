"""The seller operations' registry, who calls them (`Caller`) and the context each handler
receives (`SellerCall`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from licensegate.domain import permissions
from licensegate.domain.permissions import Scope, SellerIdentity
from licensegate.operations.declarations import Args, Registry
from licensegate.services import Services
from licensegate.store.database import Database


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls a seller operation: their identity (the application, the role, the permission
    areas and, for a reseller, the scope of what it sees), their address, and how they came in
    (`via`: the audit log names the owner as `<owner> (<via>)`, e.g. `seller key 3f0c1a`, or
    `dashboard`; a reseller or manager is named by its username)."""

    identity: SellerIdentity
    ip: str | None = None
    via: str = ""

    @property
    def actor(self) -> str:
        identity = self.identity
        if identity.member_username is not None:
            return identity.member_username
        return f"{identity.owner} ({self.via})" if self.via else identity.owner


@dataclass(frozen=True, slots=True)
class Upload:
    """A file sent with a call: the name its sender gave it and its content (read from the start)."""

    filename: str | None
    file: BinaryIO


@dataclass(slots=True)
class AuditNote:
    """What a handler tells the audit log about the change it made."""

    target: str | None = None
    before: Any = None
    after: Any = None


@dataclass(slots=True)
class SellerCall:
    services: Services
    caller: Caller
    args: Args
    uploads: Mapping[str, Upload] = field(default_factory=dict)
    audit: AuditNote | None = None

    def record(self, target: str | None, *, before: Any = None, after: Any = None) -> None:
        """Describe the change for the audit log: what it touched, and its state before and after."""
        self.audit = AuditNote(target=target, before=before, after=after)

    @property
    def identity(self) -> SellerIdentity:
        return self.caller.identity

    @property
    def scope(self) -> Scope:
        """What the caller sees of the application (a reseller: only its own keys and users)."""
        return self.caller.identity.scope

    @property
    def db(self) -> Database:
        return self.services.db

    @property
    def blacklist_as(self) -> str | None:
        """Who a ban this call makes blacklists as (the audit log's actor), or None when the caller
        may not manage the blacklists (a reseller, a manager without the area): then its bans
        blacklist nothing and its unbans lift no blacklist entry."""
        if not permissions.allows(self.identity.permissions, "blacklists"):
            return None
        return self.caller.actor

    @property
    def app_id(self) -> int:
        return self.caller.identity.app_id

    def now(self) -> int:
        return self.services.clock.now()


registry: Registry[SellerCall] = Registry("seller")
