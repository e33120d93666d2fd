"""Entitlements (issue 21): the seller operations, a user's union over live subscriptions and
extras, and the field in the answers of License Login, Login, register and Upgrade."""

from __future__ import annotations

import orjson
import pytest

from licensegate.clock import MovableClock
from licensegate.services import Services
from tests.api.test_client_license import HWID, new_key
from tests.api.test_client_license import app as app  # the fixture: an initialised program
from tests.helpers import SELLER_PATH, Client, Seller

pytestmark = pytest.mark.anyio


def codes(body: dict[str, object]) -> list[str]:
    listed = body["entitlements"]
    assert isinstance(listed, list)
    return [item["code"] for item in listed]


async def test_create_list_edit_delete(seller: Seller) -> None:
    meta = orjson.dumps({"seats": 5}).decode()
    created = await seller.ok("addentitlement", code="export", name="Export", metadata=meta)
    assert created["entitlement"]["code"] == "export"
    assert created["entitlement"]["metadata"] == {"seats": 5}
    await seller.ok("addentitlement", code="pro.filters")  # the name defaults to the code
    listed = (await seller.ok("fetchentitlements"))["entitlements"]
    assert [(e["code"], e["name"]) for e in listed] == [("export", "Export"), ("pro.filters", "pro.filters")]

    await seller.fails("addentitlement", 409, "entitlement_exists", code="export")
    await seller.fails("addentitlement", 400, "invalid_entitlement_code", code="no spaces")
    await seller.fails("addentitlement", 400, "invalid_metadata", code="x", metadata="[1, 2]")
    await seller.fails("addentitlement", 400, "invalid_metadata", code="x", metadata="{not json")
    # 16 KB of metadata is taken (sent in a POST body), a byte more is not.
    fits = orjson.dumps({"blob": "a" * (16 * 1024 - 11)}).decode()
    for code, metadata, status in (("fits", fits, 200), ("over", fits.replace("a", "ab", 1), 400)):
        form = {"sellerkey": seller.key, "type": "addentitlement", "code": code, "metadata": metadata}
        response = await seller.http.post(SELLER_PATH, data=form)
        assert response.status_code == status, response.json()
    await seller.ok("delentitlement", code="fits")

    edited = await seller.ok(
        "editentitlement", code="export", newCode="export.csv", name="CSV", metadata="{}"
    )
    assert edited["entitlement"] | {"created_at": 0, "updated_at": 0} == {
        "code": "export.csv",
        "name": "CSV",
        "metadata": {},
        "created_at": 0,
        "updated_at": 0,
    }
    await seller.fails("editentitlement", 409, "entitlement_exists", code="export.csv", newCode="pro.filters")
    await seller.fails("editentitlement", 404, "entitlement_not_found", code="export")
    await seller.ok("delentitlement", code="export.csv")
    await seller.fails("delentitlement", 404, "entitlement_not_found", code="export.csv")
    assert codes(await seller.ok("fetchentitlements")) == ["pro.filters"]


async def test_attach_and_detach_name_exactly_one_target(seller: Seller, app: Client) -> None:
    await seller.ok("addentitlement", code="export")
    await seller.fails("attachentitlement", 400, "entitlement_target", code="export")
    await seller.fails("attachentitlement", 400, "entitlement_target", code="export", sub="default", user="x")
    await seller.fails("attachentitlement", 404, "subscription_not_found", code="export", sub="nope")
    await seller.fails("attachentitlement", 404, "user_not_found", code="export", user="nobody")
    await seller.fails("attachentitlement", 404, "entitlement_not_found", code="nope", sub="default")
    await seller.ok("attachentitlement", code="export", sub="default")
    await seller.ok("attachentitlement", code="export", sub="default")  # twice: no change
    assert codes(await seller.ok("fetchentitlements", sub="default")) == ["export"]
    await seller.ok("detachentitlement", code="export", sub="default")
    assert codes(await seller.ok("fetchentitlements", sub="default")) == []


async def test_union_of_live_subscriptions_and_extras_in_every_login_answer(
    seller: Seller, app: Client, clock: MovableClock
) -> None:
    await seller.ok("addsub", name="pro", level="2")
    for code in ("basic", "pro.tools", "key.extra", "user.extra", "unused"):
        await seller.ok("addentitlement", code=code)
    await seller.ok("attachentitlement", code="basic", sub="default")
    await seller.ok("attachentitlement", code="pro.tools", sub="pro")
    key = await new_key(seller, days=10)
    await seller.ok("attachentitlement", code="key.extra", key=key)

    body = await app.ok("license", key=key, hwid=HWID)
    assert body["entitlements"] == [
        {"code": "basic", "name": "basic"},
        {"code": "key.extra", "name": "key.extra"},
    ]

    await seller.ok("attachentitlement", code="user.extra", user=key)
    body = await app.ok("entitlements")
    assert codes(body) == ["basic", "key.extra", "user.extra"]
    assert body["entitlements"][0] == {"code": "basic", "name": "basic", "metadata": {}}

    # Upgrade: a level-2 key gives `pro` for 2 days, so its entitlement joins.
    pro_key = await new_key(seller, days=2, level="2")
    upgraded = await app.ok("upgrade", username=key, key=pro_key)
    assert codes(upgraded) == ["basic", "key.extra", "pro.tools", "user.extra"]

    # A paused subscription gives nothing, and neither does an expired grant.
    await seller.ok("pausesub", subscription="pro")
    relog = app.fresh()
    await relog.init()
    assert codes(await relog.ok("license", key=key, hwid=HWID)) == ["basic", "key.extra", "user.extra"]
    await seller.ok("unpausesub", subscription="pro")
    assert codes(await relog.ok("entitlements")) == ["basic", "key.extra", "pro.tools", "user.extra"]
    clock.advance(3 * 86400)
    later = app.fresh()
    await later.init()
    assert codes(await later.ok("license", key=key, hwid=HWID)) == ["basic", "key.extra", "user.extra"]

    await seller.ok("detachentitlement", code="key.extra", key=key)
    await seller.ok("delentitlement", code="user.extra")
    assert codes(await later.ok("entitlements")) == ["basic"]


async def test_register_and_login_answer_entitlements(seller: Seller, app: Client) -> None:
    await seller.ok("addentitlement", code="export", name="Export")
    await seller.ok("attachentitlement", code="export", sub="default")
    key = await new_key(seller)
    registered = await app.ok("register", username="alice", **{"pass": "pw-alice-1"}, key=key, hwid=HWID)
    assert registered["entitlements"] == [{"code": "export", "name": "Export"}]
    again = app.fresh()
    await again.init()
    logged = await again.ok("login", username="alice", **{"pass": "pw-alice-1"}, hwid=HWID)
    assert logged["entitlements"] == [{"code": "export", "name": "Export"}]


async def test_get_entitlements_needs_a_logged_in_session(app: Client) -> None:
    await app.fails("entitlements", 403, "session_not_validated")


async def test_changes_are_in_the_audit_log(seller: Seller, services: Services) -> None:
    await seller.ok("addentitlement", code="export")
    await seller.ok("attachentitlement", code="export", sub="default")
    targets = await services.db.fetch_all(
        "SELECT action, target FROM audit_log WHERE app_id = ? ORDER BY id", seller.app_id
    )
    assert [(row["action"], row["target"]) for row in targets][-2:] == [
        ("addentitlement", "entitlement:export"),
        ("attachentitlement", "subscription:default"),
    ]


async def test_the_first_entitlement_of_an_application_shows_at_the_next_login(
    seller: Seller, app: Client
) -> None:
    """A worker remembers that an application has no entitlements (its logins then skip the
    query); creating one makes it ask again, and deleting the last one forgets it again."""
    key = await new_key(seller)
    assert (await app.ok("license", key=key, hwid=HWID))["entitlements"] == []
    await seller.ok("addentitlement", code="export")
    await seller.ok("attachentitlement", code="export", sub="default")
    assert codes(await app.ok("license", key=key, hwid=HWID)) == ["export"]
    await seller.ok("delentitlement", code="export")
    assert (await app.ok("license", key=key, hwid=HWID))["entitlements"] == []
