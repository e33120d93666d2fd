"""A call whose database did not answer in time is answered from what the worker already holds:
no second question to the database that just failed (each would make the caller wait one more
`LICENSEGATE_PG_TIMEOUT`). The client's 503 is signed by the application's key when this worker
served the application before, by the deployment's key otherwise; the seller's 503 writes no
seller-log entry. The real waits, with a frozen PostgreSQL, are in tests/test_database_outage.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import pytest

from licensegate.domain import settings as domain_settings
from licensegate.domain.apps import CreatedApp, create_application
from licensegate.services import Services
from licensegate.signing import verify
from licensegate.store.database import Database, DatabaseUnavailable, Executor, Row

pytestmark = pytest.mark.anyio


class FailingDatabase:
    """The service's database, until `down`: then every question fails as a timed-out one does,
    and every question asked after the first failure is counted."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.dialect = db.dialect
        self.read_only = db.read_only
        self.down = False
        self.failed = False
        self.asked_after_failure = 0

    def fail(self) -> DatabaseUnavailable:
        if self.failed:
            self.asked_after_failure += 1
        self.failed = True
        return DatabaseUnavailable("PostgreSQL is unavailable: timeout (the test's)")

    async def _ask(self, method: str, *args: Any) -> Any:
        if self.down:
            raise self.fail()
        return await getattr(self.db, method)(*args)

    async def fetch_one(self, sql: str, *args: Any) -> Row | None:
        return await self._ask("fetch_one", sql, *args)  # type: ignore[no-any-return]

    async def fetch_all(self, sql: str, *args: Any) -> list[Row]:
        return await self._ask("fetch_all", sql, *args)  # type: ignore[no-any-return]

    async def fetch_value(self, sql: str, *args: Any) -> Any:
        return await self._ask("fetch_value", sql, *args)

    async def execute(self, sql: str, *args: Any) -> int:
        return await self._ask("execute", sql, *args)  # type: ignore[no-any-return]

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._ask("execute_many", sql, rows)

    async def execute_long(self, sql: str, *args: Any) -> int:
        return await self._ask("execute_long", sql, *args)  # type: ignore[no-any-return]

    def _held(self, opened: AbstractAsyncContextManager[Any]) -> AbstractAsyncContextManager[Any]:
        @asynccontextmanager
        async def held() -> AsyncIterator[Any]:
            if self.down:
                raise self.fail()
            async with opened as handle:
                yield handle

        return held()

    def transaction(self) -> AbstractAsyncContextManager[Executor]:
        return self._held(self.db.transaction())

    def pinned(self) -> AbstractAsyncContextManager[Database]:
        return self._held(self.db.pinned())

    def reading_apart(self) -> AbstractAsyncContextManager[Executor]:
        return self._held(self.db.reading_apart())

    def pool_use(self) -> tuple[int, int, int]:
        return self.db.pool_use()

    async def close(self) -> None:
        await self.db.close()


@pytest.fixture
async def failing(services: Services) -> AsyncIterator[FailingDatabase]:
    real = services.db
    wrapped = FailingDatabase(real)
    services.db = wrapped
    # What a worker loads at start, so that answers stay signed while the database is away.
    await services.signers.deployment(real, services.clock.now())
    try:
        yield wrapped
    finally:
        services.db = real


async def _app(services: Services, name: str) -> CreatedApp:
    return await create_application(
        services.db, services.secrets, owner="owner", name=name, now=services.clock.now()
    )


async def _init(client: httpx.AsyncClient, app: CreatedApp) -> httpx.Response:
    return await client.post("/api/1.3/", params={"type": "init", "ownerid": app.ownerid, "name": app.name})


def _signed_by(public_key: str, answer: httpx.Response) -> bool:
    stamp = answer.headers["x-signature-timestamp"]
    return verify(public_key, answer.headers["x-signature-ed25519"], stamp.encode() + answer.content)


async def test_a_client_call_is_answered_without_asking_the_database_again(
    services: Services, client: httpx.AsyncClient, failing: FailingDatabase
) -> None:
    served, unseen = await _app(services, "served"), await _app(services, "unseen")
    assert (await _init(client, served)).status_code == 200  # this worker now knows its keys
    deployment = (await services.signers.deployment(failing.db, 0)).public_key
    failing.down = True

    answer = await _init(client, served)
    assert answer.status_code == 503
    assert answer.json()["error"] == "service_unavailable"
    assert _signed_by(served.public_key, answer)
    assert failing.asked_after_failure == 0

    failing.failed = False
    answer = await _init(client, unseen)
    assert answer.status_code == 503
    assert _signed_by(deployment, answer)
    assert failing.asked_after_failure == 0


async def test_a_seller_call_writes_no_log_entry_after_the_database_failed(
    services: Services, client: httpx.AsyncClient, failing: FailingDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await _app(services, "seller-outage")
    logging = {"sellerkey": app.sellerkey, "type": "updatesettings", "sellerlogs": "1"}
    assert (await client.get("/api/seller/", params=logging)).status_code == 200  # every call noted

    async def timed_out(*_args: object) -> object:
        failing.down = True
        raise failing.fail()

    monkeypatch.setattr(domain_settings, "get_all", timed_out)
    answer = await client.get("/api/seller/", params={"sellerkey": app.sellerkey, "type": "getsettings"})
    assert answer.status_code == 503
    assert answer.json()["error"] == "service_unavailable"
    assert failing.asked_after_failure == 0
