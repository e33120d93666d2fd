"""Client API — `init` on an application its worker holds (`domain.openedapps`): one statement,
and every change to the application takes effect at the next call, however it was made (here by
SQL, as another worker or machine would, with no announcement to any cache)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from licensegate import ids
from licensegate.clock import MovableClock
from licensegate.services import Services
from licensegate.store import postgres, sqlite
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def app(seller: Seller) -> Client:
    return client_of(seller)


@contextmanager
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The statements run meanwhile, as written (either database)."""
    seen: list[str] = []
    to_postgres = postgres.to_postgres

    def recorded_postgres(sql: str) -> str:
        seen.append(sql)
        return to_postgres(sql)

    monkeypatch.setattr(postgres, "to_postgres", recorded_postgres)
    for name in ("_fetch_one", "_fetch_all", "_fetch_value", "_execute"):
        real = getattr(sqlite._Runner, name)

        def recorded_sqlite(self: Any, sql: str, args: Any, real: Any = real) -> Any:
            seen.append(sql)
            return real(self, sql, args)

        monkeypatch.setattr(sqlite._Runner, name, recorded_sqlite)
    yield seen
    monkeypatch.undo()


async def test_init_of_a_held_application_is_one_statement(
    app: Client, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    await app.ok("init")  # reads the application and holds it
    with statements(monkeypatch) as seen:
        body = await app.ok("init", ver="1.0")
    assert len(seen) == 1, seen
    assert seen[0].startswith("INSERT INTO sessions")
    assert await services.db.fetch_value(
        "SELECT COUNT(*) FROM sessions WHERE id = ?", ids.digest(body["sessionid"])
    )


async def _set(services: Services, app_id: int, column: str, value: object) -> None:
    await services.db.execute(f"UPDATE apps SET {column} = ? WHERE id = ?", value, app_id)


async def test_a_change_made_elsewhere_refuses_or_admits_at_once(
    app: Client, seller: Seller, services: Services, clock: MovableClock
) -> None:
    await app.ok("init", ver="1.0")
    await _set(services, seller.app_id, "enabled", 0)
    await app.fails("init", 403, "app_disabled")
    await _set(services, seller.app_id, "enabled", 1)
    await app.ok("init")
    await _set(services, seller.app_id, "paused_at", clock.now())
    await app.fails("init", 403, "app_paused")
    await _set(services, seller.app_id, "paused_at", None)
    await app.ok("init")
    await _set(services, seller.app_id, "version", "2.0")
    await app.fails("init", 403, "version_mismatch", ver="1.0")
    # Held now as 2.0: its refusal of 1.0 is confirmed before it is answered, and is not.
    await _set(services, seller.app_id, "version", "1.0")
    await app.ok("init", ver="1.0")
    await _set(services, seller.app_id, "session_seconds", 60)
    body = await app.ok("init")
    expires = await services.db.fetch_value(
        "SELECT expires_at FROM sessions WHERE id = ?", ids.digest(body["sessionid"])
    )
    assert expires == clock.now() + 60


async def test_token_validation_turned_on_or_off_elsewhere_counts_at_once(
    app: Client, seller: Seller, services: Services
) -> None:
    await app.ok("init")  # held without token validation
    await _set(services, seller.app_id, "token_validation", 1)
    await app.fails("init", 403, "token_required")
    await _set(services, seller.app_id, "token_validation", 0)
    await app.ok("init")


async def test_hash_checking_turned_off_writes_no_tamper_log(
    app: Client, seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", hashcheck=1)
    await app.fails("init", 403, "hash_mismatch", hash="evil")  # held with hash checking on
    await _set(services, seller.app_id, "hash_check", 0)
    await app.ok("init", hash="evil")
    assert await services.db.fetch_value("SELECT COUNT(*) FROM tamper_logs") == 1


async def test_a_deleted_application_is_unknown_at_once(
    app: Client, seller: Seller, services: Services
) -> None:
    await app.ok("init")
    await services.db.execute("DELETE FROM apps WHERE id = ?", seller.app_id)
    await app.fails("init", 401, "unknown_application")


async def test_a_call_run_again_counts_once_against_the_rate_limit(
    app: Client, seller: Seller, services: Services
) -> None:
    await app.ok("init")  # held with the default limit; counted
    await seller.ok("updatesettings", clientratelimit=3)
    await app.ok("init")  # held limit passes, the INSERT finds the application changed, run again
    await app.ok("init")  # the third call of the window
    await app.fails("init", 429, "rate_limited")
