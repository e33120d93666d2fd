"""Helpers tests share: a seller with a key, and calls that check the envelope on the way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from licensegate.domain.apps import create_application
from licensegate.services import Services

SELLER_PATH = "/api/seller/"


@dataclass
class Seller:
    http: httpx.AsyncClient
    key: str
    ownerid: str
    app_id: int
    name: str

    # The helpers' own arguments are positional-only or unusual, so operations' parameters named
    # `key`, `status` or `error` can still be passed as keywords.
    async def call(
        self, type_: str, /, *, method: str = "GET", sellerkey: str | None = None, **params: Any
    ) -> httpx.Response:
        query = {"sellerkey": self.key if sellerkey is None else sellerkey, "type": type_}
        query.update({k: str(v) for k, v in params.items()})
        return await self.http.request(method, SELLER_PATH, params=query)

    async def ok(self, type_: str, /, **params: Any) -> dict[str, Any]:
        """Call and insist on success; return the body."""
        response = await self.call(type_, **params)
        body: dict[str, Any] = response.json()
        assert response.status_code == 200, (response.status_code, body)
        assert body["success"] is True, body
        return body

    async def fails(self, type_: str, status: int, error: str, /, **params: Any) -> dict[str, Any]:
        """Call and insist on this failure status and error code; return the body."""
        response = await self.call(type_, **params)
        body: dict[str, Any] = response.json()
        assert (response.status_code, body.get("error")) == (status, error), (
            response.status_code,
            body,
        )
        assert body["success"] is False
        assert isinstance(body["message"], str)
        assert body["message"]
        return body


async def create_seller(
    services: Services, http: httpx.AsyncClient, owner: str = "owner", name: str = "app"
) -> Seller:
    created = await create_application(services.db, owner=owner, name=name, now=services.clock.now())
    return Seller(http=http, key=created.sellerkey, ownerid=created.ownerid, app_id=created.app_id, name=name)
