"""Seller API — Seller Log: recording seller calls (only when the application turned it on, never
with secrets) and the `fetchsellerlogs` / `delsellerlogs` operations, over HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from licensegate.clock import MovableClock
from licensegate.domain import sellerlog
from licensegate.services import Services
from tests.helpers import Seller, client_of, create_seller

pytestmark = pytest.mark.anyio

CLIENT_IP = "203.0.113.7"  # the in-process client's address (tests/conftest.py)


async def enable(seller: Seller) -> None:
    await seller.ok("updatesettings", sellerlogs=1)


async def raw_rows(services: Services, app_id: int) -> list[dict[str, Any]]:
    return await services.db.fetch_all(
        "SELECT id, ip, operation, params, status FROM seller_log WHERE app_id = ? ORDER BY id", app_id
    )


async def test_nothing_is_recorded_while_the_seller_log_is_off(seller: Seller, services: Services) -> None:
    await seller.ok("fetchallsubs")
    await seller.ok("addsub", name="gold", level="2")
    await seller.fails("addsub", 409, "subscription_exists", name="gold", level="2")
    assert await raw_rows(services, seller.app_id) == []
    body = await seller.ok("fetchsellerlogs")
    assert (body["logs"], body["count"]) == ([], 0)


async def test_every_call_is_recorded_once_enabled(seller: Seller, clock: MovableClock) -> None:
    await enable(seller)  # read its switch before it changed: this call is not recorded
    await seller.ok("addsub", name="gold", level="2")
    clock.advance(5)
    await seller.ok("fetchallsubs", format="json")
    body = await seller.ok("fetchsellerlogs")
    assert body["message"] == "Successfully retrieved seller logs"
    assert body["count"] == 2
    newest, oldest = body["logs"]
    assert oldest == {
        "id": oldest["id"],
        "ip": CLIENT_IP,
        "operation": "addsub",
        "params": {"name": "gold", "level": "2"},
        "status": 200,
        "created": clock.now() - 5,
    }
    assert (newest["operation"], newest["params"], newest["created"]) == (
        "fetchallsubs",
        {"format": "json"},
        clock.now(),
    )
    assert int(newest["id"]) > int(oldest["id"])
    # The listing itself was recorded after it answered.
    assert (await seller.ok("fetchsellerlogs"))["logs"][0]["operation"] == "fetchsellerlogs"


async def test_failures_are_recorded_with_their_status(seller: Seller, services: Services) -> None:
    limited: str = (await seller.ok("addsellerkey", name="lic", permissions="licenses"))["sellerkey"]
    await enable(seller)
    await seller.ok("addsub", name="gold", level="2")
    await seller.fails("addsub", 409, "subscription_exists", name="gold", level="2")
    await seller.fails("addsub", 400, "missing_parameter", name="silver")
    await seller.fails("delappsub", 404, "subscription_not_found", name="ghost")
    denied = await seller.call("fetchallsubs", sellerkey=limited)
    assert denied.status_code == 403
    # Callers that were never identified are not the application's: nothing is recorded.
    await seller.fails("addsub", 401, "unknown_seller_key", sellerkey="0" * 32, name="x", level="1")
    await seller.fails("nosuchtype", 400, "unknown_type")
    rows = await raw_rows(services, seller.app_id)
    assert [(r["operation"], r["status"]) for r in rows] == [
        ("addsub", 200),
        ("addsub", 409),
        ("addsub", 400),
        ("delappsub", 404),
        ("fetchallsubs", 403),
    ]


async def test_the_seller_key_and_passwords_are_never_recorded(seller: Seller, services: Services) -> None:
    await enable(seller)
    await seller.ok("adduser", user="zoe", expiry=1, **{"pass": "hunter2"})
    await seller.ok("resetpw", user="zoe", passwd="hunter3")
    await seller.ok("verifyuser", user="zoe", **{"pass": "hunter3"})
    rows = await raw_rows(services, seller.app_id)
    assert len(rows) == 3
    for row in rows:
        assert "hunter" not in row["params"]
        assert seller.key not in row["params"]
        assert "sellerkey" not in row["params"]
    body = await seller.ok("fetchsellerlogs")
    adduser = body["logs"][-1]
    assert adduser["params"] == {"user": "zoe", "expiry": "1", "pass": sellerlog.REDACTED}


async def test_urls_webhooks_and_tokens_are_never_recorded(seller: Seller, services: Services) -> None:
    await enable(seller)
    hook = "https://discord.example/api/webhooks/1/hooktoken"
    await seller.ok("updatesettings", webhook=hook, download="https://cdn.example/signed?sig=dltoken")
    # Parameters nobody declared are judged by their names and values too.
    await seller.ok("fetchallsubs", apitoken="tok-123", callback_url="x", note="see https://x.example/a?t=zz")
    rows = await raw_rows(services, seller.app_id)
    text = " ".join(row["params"] for row in rows)
    for secret in ("hooktoken", "discord.example", "dltoken", "tok-123", "x.example"):
        assert secret not in text
    logs = (await seller.ok("fetchsellerlogs"))["logs"]
    assert logs[1]["params"] == {"webhook": sellerlog.REDACTED, "download": sellerlog.REDACTED}
    assert logs[0]["params"] == {
        "apitoken": sellerlog.REDACTED,
        "callback_url": sellerlog.REDACTED,
        "note": sellerlog.REDACTED,
    }


async def test_license_keys_keep_only_their_first_characters(seller: Seller, services: Services) -> None:
    key = (await seller.ok("add", expiry=1))["key"]
    await enable(seller)
    await seller.ok("verify", key=key)
    rows = await raw_rows(services, seller.app_id)
    assert key not in rows[0]["params"]
    assert (await seller.ok("fetchsellerlogs"))["logs"][0]["params"] == {"key": key[:4] + "…"}


async def test_session_ids_custom_keys_and_key_named_users_keep_only_their_start(
    seller: Seller, services: Services
) -> None:
    key = (await seller.ok("add", expiry=1))["key"]
    client = client_of(seller)
    await client.init()
    await client.ok("license", key=key, hwid="machine-one-000000000")
    session = client.sessionid
    await enable(seller)
    await seller.fails("kill", 404, "session_not_found", sessid="f" * 32)
    await seller.ok("add", expiry=1, mask="CUSTOM-ONLY-KEY-0001")
    await seller.ok("banuser", user=key, reason="chargeback")  # its username is its key
    await seller.fails("kill", 404, "session_not_found", sessionid=session[::-1])
    stored = " ".join(row["params"] for row in await raw_rows(services, seller.app_id))
    for secret in (key, "CUSTOM-ONLY-KEY-0001", "f" * 32, session[::-1]):
        assert secret not in stored
    logs = (await seller.ok("fetchsellerlogs"))["logs"]
    assert logs[0]["params"] == {"sessionid": session[::-1][:4] + "…"}  # as sent (an alias)
    assert logs[1]["params"] == {"user": key[:4] + "…", "reason": "chargeback"}
    assert logs[2]["params"]["mask"] == "CUST…"
    audit = " ".join(str(entry) for entry in (await seller.ok("fetchauditlogs"))["logs"])
    assert key not in audit
    assert "CUSTOM-ONLY-KEY-0001" not in audit


async def test_long_values_are_cut(seller: Seller) -> None:
    await enable(seller)
    await seller.ok("addvar", name="big", data="x" * 1000)
    params = (await seller.ok("fetchsellerlogs"))["logs"][0]["params"]
    assert params["data"] == "x" * sellerlog.MAX_LOGGED_VALUE + "…"


async def test_an_alias_is_recorded_under_the_operation_type(seller: Seller) -> None:
    await seller.ok("adduser", user="amy", expiry=1)
    await enable(seller)
    await seller.ok("changepw", user="amy", passwd="secret!")
    assert (await seller.ok("fetchsellerlogs"))["logs"][0]["operation"] == "resetpw"


async def test_turning_the_log_off_stops_recording(seller: Seller, services: Services) -> None:
    await enable(seller)
    await seller.ok("fetchallsubs")
    await seller.ok("updatesettings", sellerlogs=0)  # recorded: the log was on when it began
    await seller.ok("fetchallsubs")
    rows = await raw_rows(services, seller.app_id)
    assert [r["operation"] for r in rows] == ["fetchallsubs", "updatesettings"]


async def test_fetchsellerlogs_pages_newest_first(seller: Seller) -> None:
    await enable(seller)
    for name in ("a", "b", "c", "d"):
        await seller.ok("addvar", name=name, data="1")
    page = await seller.ok("fetchsellerlogs", limit=2, page=2)
    assert [log["params"]["name"] for log in page["logs"]] == ["b", "a"]
    assert page["count"] == 4
    await seller.fails("fetchsellerlogs", 400, "number_out_of_range", limit=0)
    await seller.fails("fetchsellerlogs", 400, "invalid_number", page="x")


async def test_delsellerlogs_empties_the_log(seller: Seller, services: Services) -> None:
    await enable(seller)
    await seller.ok("fetchallsubs")
    await seller.ok("fetchallsubs")
    body = await seller.ok("delsellerlogs")
    assert (body["message"], body["deleted"]) == ("Successfully deleted seller logs", 2)
    rows = await raw_rows(services, seller.app_id)
    assert [r["operation"] for r in rows] == ["delsellerlogs"]  # recorded after it answered


async def test_seller_logs_are_kept_per_application(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other")
    await enable(seller)
    await enable(other)
    await seller.ok("fetchallsubs")
    await other.ok("addvar", name="v", data="1")
    assert [log["operation"] for log in (await other.ok("fetchsellerlogs"))["logs"]] == ["addvar"]
    await other.ok("delsellerlogs")
    assert [r["operation"] for r in await raw_rows(services, seller.app_id)] == ["fetchallsubs"]


async def test_seller_log_operations_need_the_logs_permission(seller: Seller) -> None:
    limited: str = (await seller.ok("addsellerkey", name="lic", permissions="licenses"))["sellerkey"]
    for type_ in ("fetchsellerlogs", "delsellerlogs"):
        response = await seller.call(type_, sellerkey=limited)
        assert (response.status_code, response.json()["error"]) == (403, "permission_denied")


async def test_a_failing_seller_log_write_does_not_change_the_answer(
    seller: Seller, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    await enable(seller)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(sellerlog, "record", broken)
    body = await seller.ok("addsub", name="gold", level="2")
    assert body == {"success": True, "message": "Successfully created subscription!"}
    await seller.fails("addsub", 409, "subscription_exists", name="gold", level="2")
    assert "seller log entry not written" in caplog.text
