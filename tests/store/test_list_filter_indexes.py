"""The list filters migration 0014 indexes (a key's creator, a key's or user's creation time)
select the same rows as before: exactly those a plain reading of the filter names, on both
databases, with the page and the count agreeing."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import licenses, users
from licensegate.domain.licenses import KeyQuery
from licensegate.domain.paging import PageRequest
from licensegate.domain.permissions import Scope
from licensegate.services import Services
from licensegate.store.users import UserQuery
from tests.web.pages import make_shop

pytestmark = pytest.mark.anyio


async def test_keys_by_creator_and_creation_time(services: Services, clock: MovableClock) -> None:
    shop = await make_shop(services)
    scope = Scope(shop.app_id)
    made: dict[str, tuple[str, int]] = {}  # key: (creator, created_at)
    for round_ in range(6):
        creator = ("SellerAPI", "Dashboard", "import")[round_ % 3]
        spec = licenses.KeySpec(days=30, amount=3, generated_by=creator)
        for key in await licenses.generate(services.db, services.secrets, scope, spec, clock.now()):
            made[key] = (creator, clock.now())
        clock.advance(3600)
    times = sorted({created for _, created in made.values()})
    newest = PageRequest("created", True, 50)

    async def listed(query: KeyQuery, request: PageRequest = newest) -> list[str]:
        page = await licenses.browse(services.db, scope, query, request)
        assert await licenses.count_matching(services.db, scope, query) == len(page.rows)
        return [row["key"] for row in page.rows]

    by_creator = await listed(KeyQuery(generated_by="Dashboard"))
    assert sorted(by_creator) == sorted(k for k, (who, _) in made.items() if who == "Dashboard")
    assert await listed(KeyQuery(generated_by="nobody")) == []
    window = KeyQuery(created_from=times[1], created_to=times[4])
    in_window = await listed(window)
    assert sorted(in_window) == sorted(k for k, (_, at) in made.items() if times[1] <= at < times[4])
    assert await listed(window, PageRequest("key", False, 50)) == sorted(in_window)
    both = await listed(KeyQuery(generated_by="import", created_from=times[3]))
    assert sorted(both) == sorted(k for k, (who, at) in made.items() if who == "import" and at >= times[3])


async def test_users_by_creation_time(services: Services, clock: MovableClock) -> None:
    shop = await make_shop(services)
    scope = Scope(shop.app_id)
    sub_name = await services.db.fetch_value("SELECT name FROM subscriptions WHERE app_id = ?", shop.app_id)
    created: dict[str, int] = {}
    for i in range(8):
        await users.create(
            services.db,
            services.passwords,
            services.secrets,
            scope,
            username=f"member{i}",
            sub_name=sub_name,
            days=30,
            password=None,
            email=None,
            hwid_lock=True,
            now=clock.now(),
        )
        created[f"member{i}"] = clock.now()
        clock.advance(86400)
    times = sorted(created.values())
    query = UserQuery(now=clock.now(), created_from=times[2], created_to=times[6])
    page = await users.browse(services.db, scope, query, PageRequest("created", True, 50))
    names = [row["username"] for row in page.rows]
    assert names == [f"member{i}" for i in (5, 4, 3, 2)]
    assert await users.count_matching(services.db, scope, query) == 4
    assert (
        await users.count_matching(services.db, scope, UserQuery(now=clock.now(), created_to=times[0])) == 0
    )
