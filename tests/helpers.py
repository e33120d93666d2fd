"""Helpers tests share: a seller with a key, and calls that check the envelope on the way."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import httpx

from licensegate.domain import users
from licensegate.domain.apps import CreatedApp, create_application
from licensegate.domain.permissions import Scope
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
    created = await create_application(
        services.db, services.secrets, owner=owner, name=name, now=services.clock.now()
    )
    return seller_of(created, http, name)


def seller_of(created: CreatedApp, http: httpx.AsyncClient, name: str = "app") -> Seller:
    """The seller of an application `create_application` made (its answer keeps the secret and
    the public key, which a test of KeyAuth's libraries needs too)."""
    return Seller(http=http, key=created.sellerkey, ownerid=created.ownerid, app_id=created.app_id, name=name)


CLIENT_PATH = "/api/1.0/"
NONCE = re.compile(r"[0-9a-f]{32}")


@dataclass
class Client:
    """A program using the client API on behalf of one application."""

    http: httpx.AsyncClient
    ownerid: str
    name: str
    sessionid: str = ""

    async def call(self, type_: str, /, **params: Any) -> httpx.Response:
        query = {"type": type_, "ownerid": self.ownerid, "name": self.name}
        if self.sessionid:
            query["sessionid"] = self.sessionid
        query.update({k: str(v) for k, v in params.items()})
        return await self.http.post(CLIENT_PATH, params=query)

    def check_envelope(self, body: dict[str, Any]) -> None:
        assert isinstance(body["code"], int), body
        assert NONCE.fullmatch(body["nonce"]), body
        assert body["ownerid"] == self.ownerid, body
        assert isinstance(body["message"], str), body

    async def ok(self, type_: str, code: int = 68, /, **params: Any) -> dict[str, Any]:
        response = await self.call(type_, **params)
        body: dict[str, Any] = response.json()
        assert response.status_code == 200, (response.status_code, body)
        assert body["success"] is True, body
        assert body["code"] == code, body
        self.check_envelope(body)
        return body

    async def fails(self, type_: str, status: int, error: str, /, **params: Any) -> dict[str, Any]:
        response = await self.call(type_, **params)
        body: dict[str, Any] = response.json()
        assert (response.status_code, body.get("error")) == (status, error), (response.status_code, body)
        assert body["success"] is False
        assert body["code"] not in (68, 69)
        assert body["message"]
        self.check_envelope(body)
        return body

    async def init(self, **params: Any) -> str:
        body = await self.ok("init", **params)
        self.sessionid = body["sessionid"]
        return self.sessionid

    def fresh(self) -> Client:
        """The same application, another program instance (its own session)."""
        return Client(self.http, self.ownerid, self.name)


def client_of(seller: Seller) -> Client:
    return Client(seller.http, seller.ownerid, seller.name)


# --- set-ups through the domain -----------------------------------------------------------------


async def make_user(
    services: Services,
    app_id: int,
    username: str,
    *,
    sub: str = "default",
    days: float = 30,
    password: str | None = None,
    scope: Scope | None = None,
) -> int:
    """A user as `adduser` makes one (one grant of `sub` for `days`, no audit entry); its id."""
    scope = scope or Scope(app_id)
    await users.create(
        services.db,
        services.passwords,
        services.secrets,
        scope,
        username=username,
        sub_name=sub,
        days=days,
        password=password,
        email=None,
        hwid_lock=True,
        now=services.clock.now(),
    )
    return await user_id_of(services, app_id, username)


async def user_id_of(services: Services, app_id: int, username: str) -> int:
    found: int = (await users.get(services.db, Scope(app_id), username))["id"]
    return found
