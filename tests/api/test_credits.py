"""Usage credits (issue 23): the seller's operations, the client's `spend` (atomic, exact under
100 concurrent calls), refills on the test clock, the balance in the login answer, the audit
entries the user's timeline shows and the metrics counter."""

from __future__ import annotations

import asyncio

import pytest

from licensegate.app import outcomes
from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.api.test_client_license import HWID, new_key
from tests.api.test_client_license import app as app  # the fixture: an initialised program
from tests.helpers import Client, Seller

pytestmark = pytest.mark.anyio
DAY = 86_400


async def logged_in(seller: Seller, app: Client) -> str:
    key = await new_key(seller, days=400)
    await app.ok("license", key=key, hwid=HWID)
    return key


async def test_seller_operations_and_their_refusals(seller: Seller, app: Client, services: Services) -> None:
    key = await logged_in(seller, app)  # the user is named by the key
    await seller.fails("getcredits", 400, "credit_target")
    await seller.fails("getcredits", 400, "credit_target", user=key, key=key)
    await seller.fails("getcredits", 404, "user_not_found", user="nobody")
    await seller.fails("getcredits", 404, "key_not_found", key="NOPE-NOPE")
    await seller.fails("getcredits", 404, "credits_not_set", user=key)
    await seller.fails("addcredits", 404, "credits_not_set", user=key, amount=5)

    body = await seller.ok("setcredits", user=key, balance=10)
    assert body["credits"] == {"balance": 10, "spent": 0, "refill": None}
    assert (await seller.ok("addcredits", user=key, amount=5))["credits"]["balance"] == 15
    assert (await seller.ok("addcredits", user=key, amount=-15))["credits"]["balance"] == 0
    await seller.fails("addcredits", 400, "credits_out_of_range", user=key, amount=-1)
    await seller.fails("setcredits", 400, "number_out_of_range", user=key, balance=-1)
    await seller.fails("refillcredits", 400, "invalid_refill", user=key, period="day")
    await seller.fails("refillcredits", 400, "invalid_refill", user=key, period="day", amount=5, at="25:00")
    await seller.fails("refillcredits", 400, "invalid_parameter", user=key, period="hour", amount=5)
    refill = (await seller.ok("refillcredits", user=key, period="week", amount=50, at="06:30"))["credits"][
        "refill"
    ]
    assert (refill["amount"], refill["period"], refill["at"]) == (50, "week", "06:30")
    assert refill["next"] > services.clock.now()
    assert (await seller.ok("refillcredits", user=key, period="none"))["credits"]["refill"] is None
    await seller.ok("delcredits", user=key)
    await seller.fails("delcredits", 404, "credits_not_set", user=key)

    # Each change is in the audit log under the user, so the user's timeline shows it.
    targets = await services.db.fetch_all(
        "SELECT action FROM audit_log WHERE target = ? ORDER BY id", f"user:{key}"
    )
    assert [row["action"] for row in targets] == [
        "setcredits",
        "addcredits",
        "addcredits",
        "refillcredits",
        "refillcredits",
        "delcredits",
    ]


async def test_spend_answers_the_balance_and_refuses_without_spending(
    seller: Seller, app: Client, services: Services
) -> None:
    key = await logged_in(seller, app)
    await app.fails("spend", 403, "no_credits")
    await seller.ok("setcredits", user=key, balance=5)
    assert (await app.ok("spend"))["balance"] == 4
    assert (await app.ok("spend", cost=3))["balance"] == 1
    refused = await app.fails("spend", 403, "credits_exhausted", cost=2)
    assert refused["message"] == "Not enough credits left: 1 remaining."
    assert refused["balance"] == 1
    await app.fails("spend", 400, "number_out_of_range", cost=0)
    assert (await seller.ok("getcredits", user=key))["credits"] == {"balance": 1, "spent": 4, "refill": None}
    assert ("licensegate_credits_spent_total", (), 4) in outcomes(services)

    # A fresh session that is not logged in cannot spend.
    other = Client(app.http, app.ownerid, app.name)
    await other.init()
    await other.fails("spend", 403, "session_not_validated")


async def test_a_keys_balance_is_spent_by_sessions_logged_in_with_it(seller: Seller, app: Client) -> None:
    key = await logged_in(seller, app)
    await seller.ok("setcredits", user=key, balance=100)
    await seller.ok("setcredits", key=key, balance=7)
    assert (await app.ok("spend"))["balance"] == 6
    assert (await seller.ok("getcredits", user=key))["credits"]["balance"] == 100
    await seller.ok("delcredits", key=key)
    assert (await app.ok("spend"))["balance"] == 99


async def test_the_login_answer_carries_the_balance(seller: Seller, app: Client) -> None:
    key = await new_key(seller, days=400)
    body = await app.ok("license", key=key, hwid=HWID)
    assert body["credits"] is None  # no balance in the application: no query, null
    await seller.ok("setcredits", key=key, balance=3)
    await seller.ok("refillcredits", key=key, period="day", amount=3, at="00:00")
    body = await app.ok("license", key=key, hwid=HWID)
    assert body["credits"]["balance"] == 3
    assert body["credits"]["refill"]["period"] == "day"
    assert set(body["info"]) == {"username", "subscriptions", "ip", "hwid", "createdate", "lastlogin"}


async def test_refills_on_the_test_clock(seller: Seller, app: Client, clock: MovableClock) -> None:
    clock.set(1_800_000_000 - 1_800_000_000 % DAY + 10 * 3600)  # 10:00 UTC
    key = await logged_in(seller, app)
    await seller.ok("setcredits", user=key, balance=2)
    await seller.ok("refillcredits", user=key, period="day", amount=5, at="12:00")
    for _ in range(2):
        await app.ok("spend")
    await app.fails("spend", 403, "credits_exhausted")
    clock.advance(2 * 3600 - 1)  # 11:59:59: not yet
    await app.fails("spend", 403, "credits_exhausted")
    clock.advance(1)  # 12:00: topped up to 5
    assert (await app.ok("spend"))["balance"] == 4
    clock.advance(3 * DAY)  # three refills passed: topped up once, to 5
    assert (await seller.ok("getcredits", user=key))["credits"]["balance"] == 5
    await seller.ok("addcredits", user=key, amount=10)  # beyond the refill amount: kept
    clock.advance(DAY)
    await app.init()  # the session expired meanwhile
    await app.ok("license", key=key, hwid=HWID)
    assert (await app.ok("spend"))["balance"] == 14


async def test_one_hundred_concurrent_spends_are_exact(
    seller: Seller, app: Client, services: Services
) -> None:
    await seller.ok("updatesettings", clientratelimit=10000)
    key = await logged_in(seller, app)
    await seller.ok("setcredits", user=key, balance=60)
    responses = await asyncio.gather(*(app.call("spend") for _ in range(100)))
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 60, {r.text for r in responses}
    assert statuses.count(403) == 40
    assert {r.json()["error"] for r in responses if r.status_code == 403} == {"credits_exhausted"}
    assert sorted(r.json()["balance"] for r in responses if r.status_code == 200) == list(range(60))
    assert (await seller.ok("getcredits", user=key))["credits"] == {"balance": 0, "spent": 60, "refill": None}
