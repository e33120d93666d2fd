"""Events (issue 22): each change writes its event in its own transaction, once; a change rolled
back writes none; nothing is written for an application with no endpoint that wants the event.
On SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from licensegate.config import Settings
from licensegate.domain import events, users
from licensegate.domain.permissions import Scope
from licensegate.services import Services
from licensegate.store import blacklists as blacklist_store
from licensegate.store import bulk
from tests.conftest import make_settings
from tests.helpers import Seller, client_of
from tests.httpservers import LocalServer, serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", outbound_allow=("127.0.0.1",))


@pytest.fixture
def receiver() -> Any:
    with serving() as server:
        server.reply("/hook", b"ok")
        yield server


async def recorded(services: Services, app_id: int) -> list[tuple[str, dict[str, Any]]]:
    rows = await services.db.fetch_all(
        "SELECT name, payload FROM events WHERE app_id = ? ORDER BY id", app_id
    )
    return [(row["name"], orjson.loads(row["payload"])) for row in rows]


async def names(services: Services, app_id: int) -> list[str]:
    return [name for name, _ in await recorded(services, app_id)]


async def add_endpoint(seller: Seller, receiver: LocalServer, events_wanted: str = "all") -> str:
    body = await seller.ok("addeventwebhook", url=receiver.url("/hook"), events=events_wanted)
    endpoint_id: str = body["id"]
    return endpoint_id


async def test_each_change_writes_its_event_once(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    await add_endpoint(seller, receiver)
    await seller.ok("adduser", user="alice", sub="default", expiry=30, **{"pass": "secret-pw-1"})
    await seller.ok("banuser", user="alice", reason="chargeback")
    await seller.ok("unbanuser", user="alice")
    await seller.ok("pauseuser", username="alice")
    await seller.ok("resetpw", user="alice", passwd="another-pw-2")
    await seller.ok("resetuser", user="alice")
    await seller.ok("extend", user="alice", sub="default", expiry=5)
    keys = await seller.ok("add", expiry=10, mask="****-****-****", level=1, amount=2, format="json")
    first, second = keys["keys"]
    await seller.ok("ban", key=first, reason="leaked")
    await seller.ok("del", key=second)
    await seller.ok("pausesub", sub="default")
    await seller.ok("pauseapp")
    await seller.ok("unpauseapp")
    await seller.ok("addsellerkey", name="shop")
    await seller.ok("deluser", user="alice")
    assert await names(services, seller.app_id) == [
        "user.created",
        "user.banned",
        "user.unbanned",
        "user.paused",
        "user.password_reset",
        "user.hwid_reset",
        "subscription.extended",
        "key.created",
        "key.created",
        "key.banned",
        "key.deleted",
        "subscription.paused",
        "app.paused",
        "app.resumed",
        "sellerkey.created",
        "user.deleted",
    ]
    found = dict(await recorded(services, seller.app_id))
    assert found["user.banned"] == {
        "version": 1,
        "user": {"id": found["user.created"]["user"]["id"], "username": "alice"},
        "reason": "chargeback",
    }
    # A key is shown masked in the payload, never whole; the full key is kept apart for the
    # endpoints that include keys.
    assert first not in orjson.dumps(found["key.banned"]).decode()
    assert found["key.banned"]["key"]["masked"] == f"{first[:2]}…{first[-2:]}"
    # One delivery per event for the one endpoint.
    count = await services.db.fetch_value(
        "SELECT COUNT(*) FROM event_deliveries WHERE app_id = ?", seller.app_id
    )
    assert count == 16


async def test_client_register_and_redeem_write_events(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    await add_endpoint(seller, receiver)
    keys = await seller.ok("add", expiry=10, mask="****-****-****", level=1, amount=2, format="json")
    client = client_of(seller)
    await client.init()
    await client.ok("register", username="bob", **{"pass": "bob-password-1"}, key=keys["keys"][0], hwid="H1")
    fresh = client.fresh()
    await fresh.init()
    await fresh.ok("license", key=keys["keys"][1], hwid="H2")
    got = await recorded(services, seller.app_id)
    assert [name for name, _ in got] == [
        "key.created",
        "key.created",
        "key.redeemed",
        "subscription.granted",
        "user.registered",
        "key.redeemed",
        "subscription.granted",
        "user.registered",
    ]
    assert got[4][1]["via"] == "register"
    assert got[7][1]["via"] == "license"
    # The key's user is named by the key: every event of its first use shows it masked.
    assert keys["keys"][1] not in orjson.dumps([data for _, data in got[5:]]).decode()
    granted = got[3][1]
    assert granted["user"]["username"] == "bob"
    assert (granted["subscription"], granted["seconds"], granted["users"]) == ("default", 10 * 86400, 1)
    assert keys["keys"][0] not in orjson.dumps(granted).decode()  # the key masked


async def test_upgrade_reports_the_redemption_and_each_grant(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    """Upgrade Access: key.redeemed, then per subscription of the key's level granted (new) or
    extended (running), in its transaction."""
    await seller.ok("addsub", name="extra", level=2)
    await seller.ok("adduser", user="erin", sub="default", expiry=30, **{"pass": "erin-password-1"})
    one = (await seller.ok("add", expiry=5, mask="****-****-****", level=1, amount=1, format="json"))["keys"]
    two = (await seller.ok("add", expiry=5, mask="****-****-****", level=2, amount=1, format="json"))["keys"]
    await add_endpoint(seller, receiver, "key.redeemed,subscription.granted,subscription.extended")
    client = client_of(seller)
    await client.init()
    await client.ok("upgrade", username="erin", key=one[0])
    await client.ok("upgrade", username="erin", key=two[0])
    got = await recorded(services, seller.app_id)
    assert [(name, data.get("subscription")) for name, data in got] == [
        ("key.redeemed", None),
        ("subscription.extended", "default"),
        ("key.redeemed", None),
        ("subscription.granted", "extra"),
    ]
    assert got[1][1]["user"]["username"] == "erin"
    assert got[3][1]["seconds"] == 5 * 86400


async def test_no_endpoint_no_event_and_opt_in_needs_its_name(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    await seller.ok("adduser", user="carol", sub="default", expiry=30)
    assert await names(services, seller.app_id) == []
    endpoint = await add_endpoint(seller, receiver, "user.banned")
    await seller.ok("resetuser", user="carol")  # not wanted by the endpoint
    await seller.ok("banuser", user="carol")
    assert await names(services, seller.app_id) == ["user.banned"]
    await seller.ok("editeventwebhook", id=endpoint, enabled=0)
    await seller.ok("unbanuser", user="carol")
    await seller.ok("banuser", user="carol")
    assert await names(services, seller.app_id) == ["user.banned"]
    # "all" does not include an opt-in event; naming it does.
    scope = Scope(seller.app_id)
    async with services.db.transaction() as tx:
        assert not await events.record(tx, seller.app_id, "user.logged_in", 1, {})
    await seller.ok("editeventwebhook", id=endpoint, enabled=1, events="all,user.logged_in")
    async with services.db.transaction() as tx:
        assert await events.record(tx, seller.app_id, "user.logged_in", 1, {})
    assert scope.app_id == seller.app_id


async def test_a_change_rolled_back_writes_no_event(
    services: Services, seller: Seller, receiver: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await add_endpoint(seller, receiver)
    await seller.ok("adduser", user="dave", sub="default", expiry=30)
    await services.db.execute("UPDATE users SET last_ip = '198.51.100.9' WHERE username = 'dave'")

    async def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("the disk broke")

    # The ban's blacklist entries are written after its event, in the same transaction.
    monkeypatch.setattr(blacklist_store, "add", broken)
    with pytest.raises(RuntimeError):
        await users.ban_by_name(
            services.db, Scope(seller.app_id), "dave", "x", services.clock.now(), blacklist_as="owner"
        )
    assert await names(services, seller.app_id) == ["user.created"]
    assert await services.db.fetch_value("SELECT COUNT(*) FROM event_deliveries") == 1
    banned = await services.db.fetch_value("SELECT banned_reason FROM users WHERE username = 'dave'")
    assert banned is None


async def test_import_finished_for_importers(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    await add_endpoint(seller, receiver, "import.finished")
    async with services.db.transaction() as tx:
        assert await events.import_finished(tx, seller.app_id, 5, source="keyauth", counts={"users": 3})
    assert await recorded(services, seller.app_id) == [
        ("import.finished", {"version": 1, "source": "keyauth", "counts": {"users": 3}})
    ]


async def test_login_path_events_when_named(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    keys = (await seller.ok("add", expiry=10, mask="****-****-****", level=1, amount=2, format="json"))[
        "keys"
    ]
    client = client_of(seller)
    await client.init()
    await client.ok("license", key=keys[0], hwid="H1")  # no endpoint: nothing written
    endpoint = await add_endpoint(seller, receiver)  # "all": the opt-in events are not in it
    again = client.fresh()
    await again.init()
    await again.ok("license", key=keys[0], hwid="H1")
    assert await names(services, seller.app_id) == []
    await seller.ok("editeventwebhook", id=endpoint, events="user.logged_in,user.login_refused,blacklist.hit")
    third = client.fresh()
    await third.init()
    await third.ok("license", key=keys[0], hwid="H1")
    other = client.fresh()
    await other.init()
    await other.fails("license", 403, "hwid_mismatch", key=keys[0], hwid="H2")
    await seller.ok("black", hwid="H9")
    banned = client.fresh()
    await banned.init()
    await banned.fails("license", 403, "blacklisted", key=keys[1], hwid="H9")
    got = await recorded(services, seller.app_id)
    assert [name for name, _ in got] == [
        "user.logged_in",
        "user.login_refused",
        "blacklist.hit",
        "user.login_refused",
    ]
    # A License Login's user is named by its key: shown masked, as every event shows keys.
    assert got[0][1]["user"]["username"] == events.masked_key(keys[0])
    assert keys[0] not in orjson.dumps(got[0][1]).decode()
    assert got[1][1]["reason"] == "hwid_mismatch"
    assert got[1][1]["hwid"] == "H2"
    assert keys[0] not in orjson.dumps(got[1][1]).decode()  # the key is masked
    assert got[2][1]["hwid"] == "H9"


async def test_logged_in_is_written_in_the_logins_transaction(
    services: Services, seller: Seller, receiver: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A login whose event cannot be written is not made: the first use (which makes the user),
    a login that binds an HWID and a re-check all roll back with their event."""
    keys = (await seller.ok("add", expiry=10, mask="****-****-****", level=1, amount=1, format="json"))[
        "keys"
    ]
    await add_endpoint(seller, receiver, "user.logged_in")
    real = events.record

    async def broken(tx: Any, app_id: int, name: str, *args: Any, **kwargs: Any) -> bool:
        if name == "user.logged_in":
            raise RuntimeError("the disk broke")
        return await real(tx, app_id, name, *args, **kwargs)

    monkeypatch.setattr(events, "record", broken)
    client = client_of(seller)
    await client.init()
    assert (await client.call("license", key=keys[0], hwid="H1")).status_code == 500
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE app_id = ?", seller.app_id) == 0
    assert await services.db.fetch_value("SELECT status FROM license_keys WHERE key = ?", keys[0]) == "unused"
    monkeypatch.setattr(events, "record", real)
    await client.ok("license", key=keys[0], hwid="H1")
    monkeypatch.setattr(events, "record", broken)
    again = client.fresh()
    await again.init()
    # A re-check: its session stays unvalidated.
    assert (await again.call("license", key=keys[0], hwid="H1")).status_code == 500
    validated = await services.db.fetch_value(
        "SELECT COUNT(*) FROM sessions WHERE app_id = ? AND validated = 1", seller.app_id
    )
    assert validated == 1
    monkeypatch.setattr(events, "record", real)
    await again.ok("license", key=keys[0], hwid="H1")
    got = await recorded(services, seller.app_id)
    assert [name for name, _ in got] == ["user.logged_in", "user.logged_in"]
    assert got[0][1]["hwid"] == "H1"


async def test_bulk_deletes_report_each_batch_in_its_transaction(
    services: Services, seller: Seller, receiver: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One event per batch, listing that batch's users (keys, sessions) with its count, written
    by the batch's own transaction; every row deleted is listed once."""
    monkeypatch.setattr(bulk, "BATCH_ROWS", 2)
    for name in ("u1", "u2", "u3", "u4", "u5"):
        await seller.ok("adduser", user=name, sub="default", expiry=30)
    keys = (await seller.ok("add", expiry=10, mask="****-****-****", level=1, amount=3, format="json"))[
        "keys"
    ]
    for key in keys:
        client = client_of(seller)
        await client.init()
        await client.ok("license", key=key, hwid="H1")
    await add_endpoint(seller, receiver, "user.deleted,key.deleted,session.ended")
    await seller.ok("killall")
    await seller.ok("delalllicenses")
    await seller.ok("delallusers")
    got = await recorded(services, seller.app_id)
    assert [(name, data["count"]) for name, data in got] == [
        ("session.ended", 2),
        ("session.ended", 1),
        ("key.deleted", 2),
        ("key.deleted", 1),
        ("user.deleted", 2),
        ("user.deleted", 2),
        ("user.deleted", 2),
        ("user.deleted", 2),
    ]
    users = [user["username"] for name, data in got if name == "user.deleted" for user in data["users"]]
    # The License Login users (named by their keys) listed masked.
    assert sorted(users) == sorted(["u1", "u2", "u3", "u4", "u5", *map(events.masked_key, keys)])
    listed = [key["id"] for name, data in got if name == "key.deleted" for key in data["keys"]]
    assert len(set(listed)) == 3
    key_events = orjson.dumps([data for name, data in got if name == "key.deleted"]).decode()
    assert not any(key in key_events for key in keys)  # masked
    assert {data["reason"] for name, data in got if name == "session.ended"} == {"seller"}
    assert got[4][1]["which"] == "all"


async def test_a_bulk_delete_stopped_mid_way_reports_what_it_did(
    services: Services, seller: Seller, receiver: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk, "BATCH_ROWS", 2)
    for name in ("v1", "v2", "v3", "v4", "v5"):
        await seller.ok("adduser", user=name, sub="default", expiry=30)
    await add_endpoint(seller, receiver, "user.deleted")
    real = events.record
    calls = 0

    async def fails_second(*args: Any, **kwargs: Any) -> bool:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("the disk broke")
        return await real(*args, **kwargs)

    monkeypatch.setattr(events, "record", fails_second)
    with pytest.raises(RuntimeError):
        await users.delete_all(services.db, Scope(seller.app_id), services.clock.now())
    got = await recorded(services, seller.app_id)
    assert [(name, data["count"]) for name, data in got] == [("user.deleted", 2)]
    gone = {user["username"] for user in got[0][1]["users"]}
    left = {row["username"] for row in await services.db.fetch_all("SELECT username FROM users")}
    assert gone | left == {"v1", "v2", "v3", "v4", "v5"}
    assert not gone & left
    assert len(left) == 3  # the second batch rolled back with its event


async def test_a_bulk_delete_nobody_wants_reported_writes_no_event(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    await seller.ok("adduser", user="w1", sub="default", expiry=30)
    await add_endpoint(seller, receiver, "user.banned")
    await seller.ok("delallusers")
    assert await names(services, seller.app_id) == []
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users") == 0


async def test_unpause_unban_and_the_sessions_bans_and_pauses_end(
    services: Services, seller: Seller, receiver: LocalServer
) -> None:
    """user.unpaused and key.unbanned; session.ended (with its reason) for the sessions a key
    ban, a user pause, a subscription pause and an application pause ended, each in the
    transaction of that change (and none where no session was open)."""
    first, second = (
        await seller.ok("add", expiry=10, mask="****-****-****", level=1, amount=2, format="json")
    )["keys"]

    async def log_in(key: str) -> None:
        client = client_of(seller)
        await client.init()
        await client.ok("license", key=key, hwid="H1")

    await log_in(first)
    await log_in(second)
    await add_endpoint(seller, receiver, "all")
    await seller.ok("ban", key=first, reason="leaked", userToo=1)
    await seller.ok("unban", key=first)
    await seller.ok("pauseuser", username=second)
    await seller.ok("unpauseuser", username=second)
    await log_in(second)
    await seller.ok("pausesub", sub="default")
    await seller.ok("unpausesub", sub="default")
    await log_in(second)
    await seller.ok("pauseapp")
    await seller.ok("unpauseapp")
    got = await recorded(services, seller.app_id)
    ended = [(data["reason"], data["count"]) for name, data in got if name == "session.ended"]
    assert [name for name, _ in got] == [
        "key.banned",
        "session.ended",
        "user.banned",  # its sessions ended with the key's: no second session.ended
        "key.unbanned",
        "user.unbanned",
        "user.paused",
        "session.ended",
        "user.unpaused",
        "subscription.paused",
        "session.ended",
        "app.paused",
        "session.ended",
        "app.resumed",
    ]
    assert ended == [("key_banned", 1), ("user_paused", 1), ("subscription_paused", 1), ("app_paused", 1)]
    by_name = {name: data for name, data in got}
    assert by_name["key.unbanned"]["key"]["masked"] == events.masked_key(first)
    assert by_name["user.unpaused"]["grants"] == 1
    assert by_name["session.ended"]["sessions"][0]["ip"]  # the application's pause: listed per batch
    assert first not in orjson.dumps([data for name, data in got if name.startswith("key.")]).decode()
