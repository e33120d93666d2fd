"""Seller API — Webhooks group, over HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from licensegate.config import Settings
from licensegate.services import Services
from licensegate.store import webhooks as webhook_store
from tests.conftest import make_settings
from tests.helpers import Seller, create_seller
from tests.httpservers import FakeDNS, keep_off_the_network, serving

pytestmark = pytest.mark.anyio

PUBLIC = "https://hooks.example.com/api/v1/notify"


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path / "data", outbound_allow=("127.0.0.1",))


@pytest.fixture(autouse=True)
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    # Names resolve through this table only; nothing is ever requested by these operations.
    return keep_off_the_network(
        monkeypatch,
        FakeDNS({"hooks.example.com": ("93.184.216.34",), "intranet.example.com": ("10.20.30.40",)}),
    )


# --- addwebhook --------------------------------------------------------------------------------


async def test_addwebhook_with_defaults(seller: Seller, services: Services) -> None:
    body = await seller.ok("addwebhook", baseurl=PUBLIC + "?key=s3cret")
    assert set(body) == {"success", "message", "webid"}
    assert body["message"] == "Successfully added webhook!"
    assert re.fullmatch(r"[A-Za-z0-9]{10}", body["webid"])
    listed = (await seller.ok("fetchallwebhooks"))["webhooks"]
    assert listed == [
        {
            "webid": body["webid"],
            "short_baselink": PUBLIC,
            "useragent": "licensegate",
            "authed": 1,
            "enabled": 1,
        }
    ]
    # The full URL is kept for the client API's Webhook operation, sealed under the deployment key.
    row = await webhook_store.find(services.db, seller.app_id, body["webid"])
    assert row is not None
    assert "s3cret" not in row["base_url"]
    assert services.secrets.open(row["base_url"], "webhooks.base_url") == PUBLIC + "?key=s3cret"
    assert await webhook_store.find(services.db, seller.app_id, "nope") is None


async def test_addwebhook_with_a_chosen_id_user_agent_and_authed(seller: Seller) -> None:
    body = await seller.ok("addwebhook", baseurl=PUBLIC, webid="order-hook_1", ua="MyApp/1.0", authed=0)
    assert body["webid"] == "order-hook_1"
    # KeyAuth's Discord bot sends `us` for the user agent.
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="second", us="Bot/2")
    hooks = {h["webid"]: h for h in (await seller.ok("fetchallwebhooks"))["webhooks"]}
    assert (hooks["order-hook_1"]["useragent"], hooks["order-hook_1"]["authed"]) == ("MyApp/1.0", 0)
    assert (hooks["second"]["useragent"], hooks["second"]["authed"]) == ("Bot/2", 1)


async def test_addwebhook_refuses_a_taken_webid(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="hook")
    await seller.fails("addwebhook", 409, "webhook_exists", baseurl=PUBLIC, webid="hook")
    # Ids are per application.
    other = await create_seller(services, client, owner="other", name="other app")
    await other.ok("addwebhook", baseurl=PUBLIC, webid="hook")


async def test_addwebhook_validates_its_parameters(seller: Seller) -> None:
    await seller.fails("addwebhook", 400, "missing_parameter")
    await seller.fails("addwebhook", 400, "parameter_too_long", baseurl=PUBLIC + "?" + "x" * 2048)
    await seller.fails("addwebhook", 400, "invalid_webid", baseurl=PUBLIC, webid="has space")
    await seller.fails("addwebhook", 400, "invalid_webid", baseurl=PUBLIC, webid="dots.not.allowed")
    await seller.fails("addwebhook", 400, "parameter_too_long", baseurl=PUBLIC, webid="w" * 33)
    await seller.fails("addwebhook", 400, "parameter_too_long", baseurl=PUBLIC, ua="u" * 129)
    await seller.fails("addwebhook", 400, "invalid_user_agent", baseurl=PUBLIC, ua="a\r\nX-Injected: 1")
    await seller.fails("addwebhook", 400, "invalid_boolean", baseurl=PUBLIC, authed="maybe")
    assert (await seller.ok("fetchallwebhooks"))["webhooks"] == []


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("http://10.0.0.1/hook", "target_not_allowed"),
        ("http://169.254.169.254/latest/meta-data/", "target_not_allowed"),
        ("http://[::1]:8080/", "target_not_allowed"),
        ("http://0.0.0.0/", "target_not_allowed"),
        ("http://127.0.0.2/", "target_not_allowed"),  # only 127.0.0.1 is allowed here
        ("https://intranet.example.com/hook", "target_not_allowed"),
        ("http://no-such-host.invalid/hook", "host_not_found"),
        ("ftp://hooks.example.com/", "unsupported_scheme"),
        ("javascript:alert(1)", "unsupported_scheme"),
        ("not a url", "unsupported_scheme"),
        ("https:///path-only", "invalid_url"),
    ],
)
async def test_addwebhook_refuses_urls_the_outbound_rules_refuse(
    seller: Seller, url: str, error: str
) -> None:
    body = await seller.fails("addwebhook", 400, error, baseurl=url)
    assert "cannot be used" in body["message"]


async def test_addwebhook_accepts_an_internal_target_the_operator_allows(seller: Seller) -> None:
    body = await seller.ok("addwebhook", baseurl="http://127.0.0.1:9/hook")
    assert (await seller.ok("fetchallwebhooks"))["webhooks"][0]["webid"] == body["webid"]


# --- fetchallwebhooks --------------------------------------------------------------------------


async def test_fetchallwebhooks_never_shows_credentials_or_the_query(seller: Seller) -> None:
    assert await seller.ok("fetchallwebhooks") == {
        "success": True,
        "message": "Successfully retrieved webhooks",
        "webhooks": [],
    }
    await seller.ok(
        "addwebhook", baseurl="https://alice:pa55@hooks.example.com:8443/a/b?token=t0k#frag", webid="w"
    )
    response = await seller.call("fetchallwebhooks")
    assert "pa55" not in response.text
    assert "t0k" not in response.text
    assert "alice" not in response.text
    assert response.json()["webhooks"][0]["short_baselink"] == "https://hooks.example.com:8443/a/b"


async def test_fetchallwebhooks_shows_only_this_applications_webhooks(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="a")
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="b")
    other = await create_seller(services, client, owner="other", name="other app")
    assert (await other.ok("fetchallwebhooks"))["webhooks"] == []
    assert [h["webid"] for h in (await seller.ok("fetchallwebhooks"))["webhooks"]] == ["a", "b"]


# --- delwebhook / delallwebhooks ---------------------------------------------------------------


async def test_delwebhook_deletes_one(seller: Seller) -> None:
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="a")
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="b")
    body = await seller.ok("delwebhook", webid="a")
    assert body == {"success": True, "message": "Successfully deleted webhook!"}
    assert [h["webid"] for h in (await seller.ok("fetchallwebhooks"))["webhooks"]] == ["b"]
    await seller.fails("delwebhook", 404, "webhook_not_found", webid="a")
    await seller.fails("delwebhook", 400, "missing_parameter")


async def test_delwebhook_cannot_touch_another_applications_webhook(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="mine")
    other = await create_seller(services, client, owner="other", name="other app")
    await other.fails("delwebhook", 404, "webhook_not_found", webid="mine")
    assert len((await seller.ok("fetchallwebhooks"))["webhooks"]) == 1


async def test_delallwebhooks_deletes_this_applications_webhooks_only(
    seller: Seller, services: Services, client: httpx.AsyncClient
) -> None:
    await seller.ok("addwebhook", baseurl=PUBLIC)
    await seller.ok("addwebhook", baseurl=PUBLIC)
    other = await create_seller(services, client, owner="other", name="other app")
    await other.ok("addwebhook", baseurl=PUBLIC)
    body = await seller.ok("delallwebhooks")
    assert body == {"success": True, "message": "Successfully deleted all webhooks!", "deleted": 2}
    assert (await seller.ok("fetchallwebhooks"))["webhooks"] == []
    assert len((await other.ok("fetchallwebhooks"))["webhooks"]) == 1
    assert (await seller.ok("delallwebhooks"))["deleted"] == 0


async def test_webhooks_need_the_webhooks_permission(seller: Seller) -> None:
    limited = (await seller.ok("addsellerkey", permissions="files"))["sellerkey"]
    await seller.fails("fetchallwebhooks", 403, "permission_denied", sellerkey=limited)
    await seller.fails("addwebhook", 403, "permission_denied", sellerkey=limited, baseurl=PUBLIC)


async def test_the_audit_log_names_the_webhook_but_never_its_url(seller: Seller) -> None:
    await seller.ok(
        "addwebhook", baseurl="https://alice:pa55@hooks.example.com/p?token=t0k", webid="w", ua="UA"
    )
    await seller.ok("delwebhook", webid="w")
    await seller.ok("delallwebhooks")
    response = await seller.call("fetchauditlogs")
    for secret in ("pa55", "t0k", "alice", "/p"):
        assert secret not in response.text
    logs = {entry["action"]: entry for entry in response.json()["logs"]}
    view = {"webid": "w", "host": "hooks.example.com", "useragent": "UA", "authed": 1}
    assert (logs["addwebhook"]["target"], logs["addwebhook"]["before"], logs["addwebhook"]["after"]) == (
        "webhook:w",
        None,
        view,
    )
    assert (logs["delwebhook"]["before"], logs["delwebhook"]["after"]) == (view, None)
    assert logs["delallwebhooks"]["before"] == {"count": 0}


# --- editwebhook -------------------------------------------------------------------------------


async def test_editwebhook_changes_what_is_given(seller: Seller, services: Services) -> None:
    await seller.ok("addwebhook", baseurl=PUBLIC + "?key=one", webid="w", ua="UA/1", authed=1)
    body = await seller.ok("editwebhook", webid="w", ua="UA/2")
    assert body == {"success": True, "message": "Successfully edited webhook!"}
    assert (await seller.ok("fetchallwebhooks"))["webhooks"] == [
        {"webid": "w", "short_baselink": PUBLIC, "useragent": "UA/2", "authed": 1, "enabled": 1}
    ]
    await seller.ok("editwebhook", webid="w", baseurl="https://hooks.example.com/other?key=two", authed=0)
    row = await webhook_store.find(services.db, seller.app_id, "w")
    assert row is not None
    assert "two" not in row["base_url"]  # sealed
    assert (
        services.secrets.open(row["base_url"], "webhooks.base_url")
        == "https://hooks.example.com/other?key=two"
    )
    assert (row["user_agent"], row["authed"]) == ("UA/2", 0)
    # KeyAuth's Discord bot's `us` is the user agent here too.
    await seller.ok("editwebhook", webid="w", us="Bot/1")
    assert (await seller.ok("fetchallwebhooks"))["webhooks"][0]["useragent"] == "Bot/1"


async def test_editwebhook_refuses_what_addwebhook_refuses(seller: Seller) -> None:
    await seller.ok("addwebhook", baseurl=PUBLIC, webid="w")
    await seller.fails("editwebhook", 400, "missing_parameter", ua="x")
    await seller.fails("editwebhook", 400, "nothing_to_change", webid="w")
    await seller.fails("editwebhook", 404, "webhook_not_found", webid="nope", ua="x")
    await seller.fails(
        "editwebhook", 400, "unsupported_scheme", webid="w", baseurl="ftp://hooks.example.com/"
    )
    await seller.fails(
        "editwebhook", 400, "target_not_allowed", webid="w", baseurl="https://intranet.example.com/"
    )
    await seller.fails("editwebhook", 400, "invalid_user_agent", webid="w", ua="a\r\nX-Injected: 1")
    await seller.fails("editwebhook", 400, "invalid_boolean", webid="w", authed="maybe")
    assert (await seller.ok("fetchallwebhooks"))["webhooks"][0]["short_baselink"] == PUBLIC


async def test_editwebhook_audits_the_host_never_the_url(seller: Seller) -> None:
    await seller.ok("addwebhook", baseurl="https://hooks.example.com/p?token=t0k", webid="w", ua="UA")
    await seller.ok("editwebhook", webid="w", baseurl="https://hooks.example.com/p?token=n3w")
    response = await seller.call("fetchauditlogs")
    for secret in ("t0k", "n3w", "/p"):
        assert secret not in response.text
    logs = {entry["action"]: entry for entry in response.json()["logs"]}
    assert logs["editwebhook"]["target"] == "webhook:w"
    assert logs["editwebhook"]["after"] == {
        "webid": "w",
        "host": "hooks.example.com",
        "useragent": "UA",
        "authed": 1,
        "url_changed": 1,
    }


# --- testwebhook -------------------------------------------------------------------------------


async def test_testwebhook_calls_the_target_and_says_how_it_went(seller: Seller, services: Services) -> None:
    with serving() as target:
        target.reply("/hook", b"pong")
        await seller.ok("addwebhook", baseurl=target.url("/hook?key=s3cret"), webid="w", ua="UA/1")
        body = await seller.ok("testwebhook", webid="w", params="a=1", body="x=y")
        assert set(body) == {"success", "message", "status", "duration_ms", "error", "error_code", "response"}
        assert (body["status"], body["error"], body["error_code"], body["response"]) == (
            200,
            None,
            None,
            "pong",
        )
        assert isinstance(body["duration_ms"], int)
        assert body["message"] == f"The target answered with HTTP status 200 in {body['duration_ms']} ms."
        [seen] = target.requests
        assert (seen.method, seen.path, seen.body) == ("POST", "/hook?key=s3cret&a=1", b"x=y")
        assert seen.headers["user-agent"] == "UA/1"
    # The receiver is gone: the test still succeeds, and says why the call failed.
    failed = await seller.ok("testwebhook", webid="w")
    assert (failed["status"], failed["error_code"], failed["response"]) == (None, "connection_failed", "")
    assert failed["message"].startswith("The test call failed after ")
    await seller.fails("testwebhook", 404, "webhook_not_found", webid="nope")
    await seller.fails("testwebhook", 400, "param_fixed", webid="w", params="key=mine")
    noted = await services.db.fetch_all(
        "SELECT source, status, error_code FROM webhook_deliveries WHERE app_id = ? ORDER BY id",
        seller.app_id,
    )
    assert [tuple(row.values()) for row in noted] == [
        ("test", 200, None),
        ("test", None, "connection_failed"),
    ]


async def test_testwebhooks_values_stay_out_of_the_seller_log(seller: Seller) -> None:
    await seller.ok("updatesettings", sellerlogs=1)
    await seller.ok("addwebhook", baseurl="http://127.0.0.1:1/x", webid="w")
    await seller.ok("testwebhook", webid="w", params="pw=hunter22", body="card=4242")
    await seller.ok("editwebhook", webid="w", baseurl="http://127.0.0.1:1/y?token=t0ken")
    logged = await seller.call("fetchsellerlogs")
    operations = [entry["operation"] for entry in logged.json()["logs"]]
    assert {"testwebhook", "editwebhook"} <= set(operations)
    for secret in ("hunter22", "4242", "t0ken"):
        assert secret not in logged.text
