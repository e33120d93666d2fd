"""Credit events (issue 23): the seller's changes to a balance write `credits.changed` in their
own transaction; a client's spend writes `credits.spent` only for an endpoint that names it
(opt-in: one per spend), in the spend's transaction; a refused change or spend writes none. On
SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from licensegate.domain import events
from licensegate.services import Services
from tests.api.test_client_license import app as app  # the fixture: an initialised program
from tests.api.test_credits import logged_in
from tests.api.test_events import add_endpoint, names, recorded
from tests.api.test_events import receiver as receiver  # the fixture
from tests.api.test_events import settings as settings  # the fixture: outbound to 127.0.0.1
from tests.helpers import Client, Seller
from tests.httpservers import LocalServer

pytestmark = pytest.mark.anyio


async def test_seller_changes_write_credits_changed(
    services: Services, seller: Seller, app: Client, receiver: LocalServer
) -> None:
    key = await logged_in(seller, app)
    await add_endpoint(seller, receiver)
    await seller.ok("setcredits", user=key, balance=10)
    await seller.ok("addcredits", user=key, amount=5)
    await seller.fails("addcredits", 400, "credits_out_of_range", user=key, amount=-100)  # no event
    await seller.ok("refillcredits", user=key, period="day", amount=20, at="06:00")
    await seller.ok("setcredits", key=key, balance=3)
    await seller.ok("delcredits", key=key)
    await app.ok("spend", cost=2)  # not wanted by "all": opt-in
    found = [
        (name, data) for name, data in await recorded(services, seller.app_id) if name.startswith("credits")
    ]
    assert [(name, data["change"], data["balance"]) for name, data in found] == [
        ("credits.changed", "set", 10),
        ("credits.changed", "add", 15),
        ("credits.changed", "refill", 15),
        ("credits.changed", "set", 3),
        ("credits.changed", "removed", None),
    ]
    assert found[0][1]["user"]["username"] == events.masked_key(key)  # a License Login user: masked
    assert found[1][1]["amount"] == 5
    assert found[2][1]["refill"]["period"] == "day"
    assert key not in str(found[3][1])  # a key is shown masked
    assert found[3][1]["key"]["masked"] == f"{key[:4]}…{key[-4:]}"


async def test_spends_write_credits_spent_only_when_named(
    services: Services, seller: Seller, app: Client, receiver: LocalServer
) -> None:
    key = await logged_in(seller, app)
    await seller.ok("setcredits", user=key, balance=5)
    await app.ok("spend", cost=2)  # no endpoint: nothing written
    assert "credits.spent" not in await names(services, seller.app_id)
    await add_endpoint(seller, receiver, "credits.spent")
    assert (await app.ok("spend", cost=2))["balance"] == 1
    await app.fails("spend", 403, "credits_exhausted", cost=2)  # refused: no event
    spent = [data for name, data in await recorded(services, seller.app_id) if name == "credits.spent"]
    assert len(spent) == 1
    assert (spent[0]["cost"], spent[0]["balance"]) == (2, 1)
    assert spent[0]["user"]["id"] is not None
