"""The seller API's operation registry and the context each handler receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request

from licensegate.domain.sellerkeys import SellerIdentity
from licensegate.operations.declarations import Args, Registry
from licensegate.services import Services
from licensegate.store.database import Database


@dataclass(slots=True)
class AuditNote:
    """What a handler tells the audit log about the change it made."""

    target: str | None = None
    before: Any = None
    after: Any = None


@dataclass(slots=True)
class SellerCall:
    services: Services
    identity: SellerIdentity
    args: Args
    ip: str
    request: Request
    uploads: dict[str, UploadFile] = field(default_factory=dict)
    audit: AuditNote | None = None

    def record(self, target: str | None, *, before: Any = None, after: Any = None) -> None:
        """Describe the change for the audit log: what it touched, and its state before and after."""
        self.audit = AuditNote(target=target, before=before, after=after)

    @property
    def db(self) -> Database:
        return self.services.db

    @property
    def app_id(self) -> int:
        return self.identity.app_id

    def now(self) -> int:
        return self.services.clock.now()


registry: Registry[SellerCall] = Registry("seller")
