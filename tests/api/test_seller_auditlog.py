"""Seller API — Audit Log: the entries every successful change writes (who, what, when, from
where, before and after), their hash chain, and `fetchauditlogs` / `verifyauditlog`, over HTTP."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import httpx
import orjson
import pytest

from licensegate.clock import MovableClock
from licensegate.domain import audit
from licensegate.operations.seller import registry
from licensegate.services import Services
from tests.helpers import Seller, create_seller

pytestmark = pytest.mark.anyio

CLIENT_IP = "203.0.113.7"


def owner_actor(seller: Seller) -> str:
    return f"owner (seller key {seller.key[:6]})"


async def logs(seller: Seller, **params: Any) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = (await seller.ok("fetchauditlogs", **params))["logs"]
    return entries


async def raw_entries(services: Services, app_id: int) -> list[dict[str, Any]]:
    return await services.db.fetch_all("SELECT * FROM audit_log WHERE app_id = ? ORDER BY id", app_id)


async def test_only_successful_changes_are_recorded_in_order(
    seller: Seller, clock: MovableClock, services: Services
) -> None:
    await seller.ok("addsub", name="gold", level="2")
    await seller.ok("fetchallsubs")  # reads are not changes
    await seller.fails("addsub", 409, "subscription_exists", name="gold", level="2")  # refused: nothing
    clock.advance(10)
    await seller.ok("pausesub", subscription="gold")
    await seller.ok("getsettings")
    await seller.ok("addhash", hash="abc123")

    body = await seller.ok("fetchauditlogs")
    assert body["message"] == "Successfully retrieved audit logs"
    assert body["count"] == 3
    assert [e["action"] for e in body["logs"]] == ["addhash", "pausesub", "addsub"]  # newest first
    addhash, pausesub, addsub = body["logs"]
    assert addsub == {
        "id": addsub["id"],
        "actor": owner_actor(seller),
        "action": "addsub",
        "target": "subscription:gold",
        "before": None,
        "after": {"name": "gold", "level": "2"},
        "ip": CLIENT_IP,
        "created": clock.now() - 10,
    }
    assert (pausesub["before"], pausesub["after"]) == ({"paused": 0}, {"paused": 1})
    assert pausesub["created"] == clock.now()
    # A handler that described its change.
    assert (addhash["target"], addhash["before"], addhash["after"]) == (
        "hash:abc123",
        None,
        {"hash": "abc123"},
    )
    owner_id = await services.db.fetch_value("SELECT account_id FROM apps WHERE id = ?", seller.app_id)
    rows = await raw_entries(services, seller.app_id)
    assert {row["account_id"] for row in rows} == {owner_id}


async def test_a_handler_that_describes_nothing_records_its_parameters(seller: Seller) -> None:
    await seller.ok("adduser", user="noel", sub="default", expiry=1)
    await seller.ok("setcooldown", user="noel", cooldown=60)
    entry = (await seller.ok("fetchauditlogs", action="setcooldown"))["logs"][0]
    assert (entry["target"], entry["before"], entry["after"]) == (
        "user:noel",  # an end user's operation names its user, so the user's page finds it
        None,
        {"user": "noel", "cooldown": 60},
    )
    await seller.ok("delexpusers")  # no user named: no target
    entry = (await seller.ok("fetchauditlogs", action="delexpusers"))["logs"][0]
    assert entry["target"] is None


async def test_updatesettings_records_before_and_after_of_what_changed(
    seller: Seller, services: Services
) -> None:
    await seller.ok(
        "updatesettings",
        ver="2.0",
        enabled=0,
        hwidcheck=1,  # already on: not a change
        webhook="https://discord.example/api/webhooks/1/hooktoken",
        keynotfound="No such key",
    )
    [entry] = await logs(seller)
    assert (entry["action"], entry["target"]) == ("updatesettings", "settings")
    assert entry["before"] == {
        "version": "1.0",
        "enabled": 1,
        "log_webhook": "unset",
        "messages": {"keynotfound": "Invalid license key"},
    }
    assert entry["after"] == {
        "version": "2.0",
        "enabled": 0,
        "log_webhook": "set",
        "messages": {"keynotfound": "No such key"},
    }
    await seller.ok("updatesettings", clearwebhook=1)
    latest = (await logs(seller))[0]
    assert (latest["before"], latest["after"]) == ({"log_webhook": "set"}, {"log_webhook": "unset"})
    for row in await raw_entries(services, seller.app_id):
        assert "hooktoken" not in str(row)


async def test_secrets_stay_out_of_the_audit_log(seller: Seller, services: Services) -> None:
    await seller.ok("adduser", user="zoe", expiry=1, **{"pass": "hunter2"})
    await seller.ok("resetpw", user="zoe", passwd="hunter3")
    rows = await raw_entries(services, seller.app_id)
    assert len(rows) == 2
    for row in rows:
        assert "hunter" not in str(row)
        assert seller.key not in str(row)
    entry = (await logs(seller, action="adduser"))[0]
    assert entry["after"]["pass"] == "[redacted]"
    assert entry["after"]["user"] == "zoe"


async def test_setmessage_pause_and_seller_log_changes_are_described(seller: Seller) -> None:
    await seller.ok("setmessage", name="loggedInMsg", text="Welcome back")
    await seller.ok("pauseapp")
    await seller.ok("unpauseapp")
    await seller.ok("delsellerlogs")
    delsellerlogs, unpause, pause, setmessage = await logs(seller)
    assert setmessage["target"] == "message:loggedInMsg"
    assert setmessage["before"] == {"loggedInMsg": "Logged in!"}
    assert setmessage["after"] == {"loggedInMsg": "Welcome back"}
    assert (pause["target"], pause["before"], pause["after"]["paused"]) == ("app", {"paused": 0}, 1)
    assert (unpause["before"], unpause["after"]) == ({"paused": 1}, {"paused": 0, "paused_seconds": 0})
    assert delsellerlogs["target"] == "seller_log"


async def test_fetchauditlogs_filters_by_action_and_pages(seller: Seller) -> None:
    for name in ("a", "b", "c"):
        await seller.ok("addvar", name=name, data="1")
    await seller.ok("addsub", name="gold", level="2")
    body = await seller.ok("fetchauditlogs", action="addvar")
    assert body["count"] == 3
    assert [e["after"]["name"] for e in body["logs"]] == ["c", "b", "a"]
    page = await seller.ok("fetchauditlogs", limit=2, page=2)
    assert page["count"] == 4
    assert [e["action"] for e in page["logs"]] == ["addvar", "addvar"]
    assert [e["after"]["name"] for e in page["logs"]] == ["b", "a"]
    assert (await seller.ok("fetchauditlogs", action="nothing"))["logs"] == []
    await seller.fails("fetchauditlogs", 400, "number_out_of_range", limit=1001)
    await seller.fails("fetchauditlogs", 400, "parameter_too_long", action="x" * 65)


async def test_entries_form_a_hash_chain(seller: Seller, services: Services) -> None:
    await seller.ok("addvar", name="a", data="1")
    await seller.ok("addvar", name="b", data="2")
    first, second = await raw_entries(services, seller.app_id)
    assert first["prev_hash"] == audit.GENESIS
    assert second["prev_hash"] == first["entry_hash"]
    fields = {
        name: second[name]
        for name in (
            "app_id",
            "account_id",
            "actor",
            "action",
            "target",
            "before",
            "after",
            "ip",
            "created_at",
        )
    }
    canonical = orjson.dumps(fields, option=orjson.OPT_SORT_KEYS)
    expected = hashlib.sha256(second["prev_hash"].encode() + b"\n" + canonical).hexdigest()
    assert second["entry_hash"] == expected


async def test_verifyauditlog_accepts_an_intact_log(seller: Seller) -> None:
    body = await seller.ok("verifyauditlog")
    assert body == {
        "success": True,
        "message": "The audit log is intact.",
        "valid": True,
        "entries": 0,
        "broken_at": None,
    }
    for name in ("a", "b", "c"):
        await seller.ok("addvar", name=name, data="1")
    body = await seller.ok("verifyauditlog")
    assert (body["valid"], body["entries"], body["broken_at"]) == (True, 3, None)


async def test_verifyauditlog_finds_an_edited_entry(seller: Seller, services: Services) -> None:
    for name in ("a", "b", "c"):
        await seller.ok("addvar", name=name, data="1")
    middle = (await raw_entries(services, seller.app_id))[1]
    # Raw: the log altered behind the service's back, as verifyauditlog must detect.
    await services.db.execute(
        "UPDATE audit_log SET after = ? WHERE id = ?", '{"name":"innocent","data":"1"}', middle["id"]
    )
    body = await seller.ok("verifyauditlog")
    assert body["message"] == "The audit log has been altered."
    assert (body["valid"], body["entries"], body["broken_at"]) == (False, 3, str(middle["id"]))


async def test_verifyauditlog_finds_a_removed_entry(seller: Seller, services: Services) -> None:
    for name in ("a", "b", "c"):
        await seller.ok("addvar", name=name, data="1")
    _first, second, third = await raw_entries(services, seller.app_id)
    # Raw: an entry removed behind the service's back, as verifyauditlog must detect.
    await services.db.execute("DELETE FROM audit_log WHERE id = ?", second["id"])
    body = await seller.ok("verifyauditlog")
    assert (body["valid"], body["entries"], body["broken_at"]) == (False, 2, str(third["id"]))


async def test_each_application_has_its_own_log_and_chain(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    other = await create_seller(services, client, owner="other", name="other")
    await seller.ok("addvar", name="mine", data="1")
    await other.ok("addvar", name="theirs", data="1")
    await seller.ok("addvar", name="mine2", data="1")
    assert [e["after"]["name"] for e in await logs(other)] == ["theirs"]
    assert [e["after"]["name"] for e in await logs(seller)] == ["mine2", "mine"]
    assert (await other.ok("verifyauditlog"))["entries"] == 1
    assert (await seller.ok("verifyauditlog"))["valid"] is True
    [theirs] = await raw_entries(services, other.app_id)
    assert theirs["prev_hash"] == audit.GENESIS


async def test_concurrent_changes_keep_the_chain_intact(seller: Seller) -> None:
    results = await asyncio.gather(*(seller.call("addvar", name=f"v{i}", data="1") for i in range(12)))
    assert {r.status_code for r in results} == {200}
    body = await seller.ok("verifyauditlog")
    assert (body["valid"], body["entries"]) == (True, 12)


async def test_a_team_member_is_named_by_username(seller: Seller, services: Services) -> None:
    created = await seller.ok(
        "addAccount", role="Manager", user="mia", email="mia@example.com", **{"pass": "pw12345678"}
    )
    manager_key = created["sellerkey"]
    response = await seller.call("addvar", sellerkey=manager_key, name="bymanager", data="1")
    assert response.status_code == 200, response.json()
    entry = (await logs(seller, action="addvar"))[0]
    assert entry["actor"] == "mia"
    account_id = await services.db.fetch_value("SELECT id FROM accounts WHERE username = 'mia'")
    row = (await raw_entries(services, seller.app_id))[-1]
    assert row["account_id"] == account_id


async def test_a_failing_audit_write_still_answers_success(
    seller: Seller, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*args: object, **kwargs: object) -> int:
        raise RuntimeError("database went away")

    monkeypatch.setattr(audit, "append", broken)
    body = await seller.ok("adduser", user="zoe", expiry=1, **{"pass": "hunter2"})
    assert body["message"]
    assert (await seller.ok("verifyuser", user="zoe", **{"pass": "hunter2"}))["success"] is True
    assert "audit entry not written" in caplog.text
    assert "adduser" in caplog.text
    assert "hunter2" not in caplog.text


async def test_no_operation_edits_or_deletes_the_audit_log() -> None:
    audit_ops = {op.type for op in registry if "audit" in op.type.lower()}
    assert audit_ops == {"fetchauditlogs", "verifyauditlog"}
    assert not any(registry.get(t).mutates for t in audit_ops)  # type: ignore[union-attr]


async def test_audit_operations_need_the_logs_permission(seller: Seller) -> None:
    limited: str = (await seller.ok("addsellerkey", name="lic", permissions="licenses"))["sellerkey"]
    for type_ in ("fetchauditlogs", "verifyauditlog"):
        response = await seller.call(type_, sellerkey=limited)
        assert (response.status_code, response.json()["error"]) == (403, "permission_denied")
