"""Driving the dashboard in-process like a browser without script: GET pages, post their forms
(with the CSRF token the page carries), follow redirects, read what the page says."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from licensegate.app import build_app
from licensegate.domain import accounts
from licensegate.domain.accounts import Account
from licensegate.services import Services

CSRF = re.compile(r'<meta name="csrf-token" content="([0-9a-f]+)">')
TAGS = re.compile(r"<[^>]+>")
# A long value the dashboard shows in two halves (web/templating.py `halves`).
HALVES = re.compile(
    r'<span class="split"><span class="half">([^<]*)</span><wbr><span class="half">([^<]*)</span></span>'
)


def joined(page_html: str) -> str:
    """The page with every value shown in two halves written whole again."""
    return HALVES.sub(r"\1\2", page_html)


PASSWORD = "correct horse battery"


def text_of(page: str) -> str:
    """What a person reads: the page without tags, spaces squeezed."""
    body = page.split("<body>", 1)[-1]
    return " ".join(html.unescape(TAGS.sub(" ", body)).split())


@dataclass
class Dashboard:
    """One browser: its own cookie jar."""

    http: httpx.AsyncClient
    last: httpx.Response | None = None

    @property
    def csrf(self) -> str:
        assert self.last is not None, "open a page first"
        found = CSRF.search(self.last.text)
        assert found, "the page carries no CSRF token"
        return found.group(1)

    async def get(self, path: str, **kwargs: Any) -> httpx.Response:
        self.last = await self.http.get(path, follow_redirects=True, **kwargs)
        return self.last

    async def post(
        self,
        path: str,
        data: dict[str, Any] | None = None,
        *,
        follow: bool = True,
        csrf: bool = True,
        **kwargs: Any,
    ) -> httpx.Response:
        fields = {k: v for k, v in (data or {}).items()}
        if csrf:
            fields.setdefault("csrf", self.csrf)
        response = await self.http.post(path, data=fields, follow_redirects=follow, **kwargs)
        if follow:
            self.last = response
        return response

    async def sign_in(self, username: str, password: str = PASSWORD) -> httpx.Response:
        await self.get("/dashboard/signin")
        return await self.post("/dashboard/signin", {"username": username, "password": password})

    def cookie(self, name: str = "lg_session") -> str | None:
        return self.http.cookies.get(name)


@asynccontextmanager
async def browser(services: Services, base_url: str = "http://testserver") -> AsyncIterator[Dashboard]:
    app = build_app(services.settings, services)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 41000))
    async with httpx.AsyncClient(transport=transport, base_url=base_url) as http:
        yield Dashboard(http)


async def make_owner(services: Services, username: str = "alice", password: str = PASSWORD) -> Account:
    return await accounts.create_owner(
        services.db,
        services.passwords,
        username=username,
        password=password,
        email=None,
        now=services.clock.now(),
    )


@dataclass
class Shop:
    """An owner with one application, as the dashboard tests start from."""

    owner: Account
    app_id: int
    ownerid: str
    sellerkey: str


async def make_shop(services: Services, owner: str = "alice", name: str = "Shop") -> Shop:
    from licensegate.domain.apps import create_application

    account = await make_owner(services, owner)
    created = await create_application(
        services.db, services.secrets, owner=owner, name=name, now=services.clock.now()
    )
    return Shop(account, created.app_id, created.ownerid, created.sellerkey)


async def make_member(
    services: Services,
    shop: Shop,
    role: str,
    username: str,
    *,
    permissions: str | None = None,
    levels: str | None = None,
) -> None:
    from licensegate.domain import team
    from licensegate.domain.permissions import identity_of_account

    await team.create_account(
        services.db,
        services.passwords,
        await identity_of_account(services.db, shop.app_id, shop.owner.id),
        role=role,
        username=username,
        password=PASSWORD,
        email=None,
        key_levels=levels,
        permissions=permissions,
        now=services.clock.now(),
    )


async def make_keys(
    services: Services,
    shop: Shop,
    amount: int,
    *,
    note: str | None = None,
    level: str = "1",
    days: float = 30,
) -> list[str]:
    from licensegate.domain import licenses
    from licensegate.domain.permissions import Scope

    spec = licenses.KeySpec(days=days, amount=amount, note=note, level=level)
    return await licenses.generate(
        services.db, services.secrets, Scope(shop.app_id), spec, services.clock.now()
    )


async def seller_op(services: Services, shop: Shop, operation: str, **params: str) -> dict[str, Any]:
    """Run a seller operation as the shop's owner (to set up what a test starts from)."""
    from licensegate.domain.permissions import identity_of_account
    from licensegate.operations.seller import Caller, invoke

    identity = await identity_of_account(services.db, shop.app_id, shop.owner.id)
    return await invoke(services, Caller(identity, via="test"), operation, params)


async def seller_upload(services: Services, shop: Shop, filename: str, content: bytes) -> dict[str, Any]:
    """Upload a file as the shop's owner (the seller operation `upload`)."""
    import io

    from licensegate.domain.permissions import identity_of_account
    from licensegate.operations.seller import Caller, Upload, invoke

    identity = await identity_of_account(services.db, shop.app_id, shop.owner.id)
    sent = {"file": Upload(filename, io.BytesIO(content))}
    return await invoke(services, Caller(identity, via="test"), "upload", {}, uploads=sent)


async def give_balance(services: Services, shop: Shop, username: str, **buckets: int) -> int:
    """Add to a reseller's balance (a fresh reseller holds none); the reseller's account id."""
    from licensegate.domain import team

    await team.add_balance(
        services.db, shop.app_id, username, buckets, actor=shop.owner.username, now=services.clock.now()
    )
    member = await team.get_member(services.db, shop.app_id, username, "reseller")
    account_id: int = member["account_id"]
    return account_id
