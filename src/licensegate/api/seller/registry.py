"""The seller API's operation registry and the context each handler receives."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from licensegate.api.protocol import Args, Registry
from licensegate.domain.sellerkeys import SellerIdentity
from licensegate.services import Services
from licensegate.store.database import Database


@dataclass(slots=True)
class SellerCall:
    services: Services
    identity: SellerIdentity
    args: Args
    ip: str
    request: Request

    @property
    def db(self) -> Database:
        return self.services.db

    @property
    def app_id(self) -> int:
        return self.identity.app_id

    def now(self) -> int:
        return self.services.clock.now()


registry: Registry[SellerCall] = Registry("seller")
