"""Client API — Webhook (`type=webhook`): its exact shape (code 69), its only statuses (200, 400,
401, 403), and the outbound call against a local HTTP server: the query it receives, POST bodies,
time and size limits, refused targets, and that the webhook's URL never leaks."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from licensegate import outbound
from licensegate.config import Settings
from licensegate.domain import webhooks
from licensegate.services import Services
from licensegate.store import keyauthimport as keyauth_store
from licensegate.store import webhooks as webhook_store
from tests.conftest import make_settings
from tests.helpers import Client, Seller, client_of
from tests.httpservers import LocalServer, keep_off_the_network, serving
from tests.live import free_port

pytestmark = pytest.mark.anyio

HWID = "S-1-5-21-1111111111-2222222222-3333333333-1001"
WEBHOOK_STATUSES = {200, 400, 401, 403}
SUCCESS_KEYS = {"success", "code", "message", "response", "nonce", "ownerid"}
MAX_REPLY = 4096
SECRET = "s3cretSellerKey"


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(
        db_url,
        tmp_path / "data",
        outbound_allow=("127.0.0.1",),
        outbound_timeout=1,
        outbound_max_bytes=MAX_REPLY,
    )


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    keep_off_the_network(monkeypatch)


@pytest.fixture
def target() -> Iterator[LocalServer]:
    with serving() as server:
        server.reply("/hook", b'{"ok":true}', headers={"Content-Type": "application/json"})
        yield server


@pytest.fixture
async def app(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def log_in(client: Client, seller: Seller) -> None:
    key = (await seller.ok("add", expiry=30))["key"]
    await client.ok("register", username="kim", key=key, hwid=HWID, **{"pass": "pw"})


async def add_hook(seller: Seller, url: str, webid: str = "hook", **options: Any) -> None:
    await seller.ok("addwebhook", baseurl=url, webid=webid, authed=options.pop("authed", 0), **options)


# --- success ----------------------------------------------------------------------------------


async def test_a_get_with_params_answers_the_documented_shape(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url(f"/hook?key={SECRET}"), ua="MyApp/2.0")
    body = await app.ok("webhook", 69, webid="hook", params="user=kim&note=hello world")
    assert set(body) == SUCCESS_KEYS
    assert (body["code"], body["message"], body["response"]) == (
        69,
        "Webhook request successful",
        '{"ok":true}',
    )
    assert isinstance(body["response"], str)
    [seen] = target.requests
    assert seen.method == "GET"
    assert seen.path == f"/hook?key={SECRET}&user=kim&note=hello%20world"
    assert seen.headers["user-agent"] == "MyApp/2.0"
    assert seen.body == b""


async def test_params_can_never_leave_the_query(app: Client, seller: Seller, target: LocalServer) -> None:
    await add_hook(seller, target.url("/hook"))
    params = "?a=../../admin&b=@evil.com&c=x#frag&d=%2F&e=a+b&../f=1&flag&/g?h=i"
    await app.ok("webhook", 69, webid="hook", params=params)
    assert target.requests[-1].path == (
        "/hook?a=..%2F..%2Fadmin&b=%40evil.com&c=x%23frag&d=%2F&e=a%20b&..%2Ff=1&flag&%2Fg%3Fh=i"
    )
    # A leading `&`, empty pieces and no params at all.
    await app.ok("webhook", 69, webid="hook", params="&x=1&&y=")
    assert target.requests[-1].path == "/hook?x=1&y="
    await app.ok("webhook", 69, webid="hook")
    assert target.requests[-1].path == "/hook"


async def test_params_join_the_base_urls_query_and_its_fragment_is_dropped(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url(f"/hook?key={SECRET}&empty=&#section"))
    await app.ok("webhook", 69, webid="hook", params="a=1")
    assert target.requests[-1].path == f"/hook?key={SECRET}&empty=&a=1"


async def test_params_cannot_replace_what_the_base_url_fixes(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url(f"/hook?seller_key={SECRET}&type=info&user="))
    for params in ("type=delall", "a=1&type=x", "type[]=x", "seller.key=x", "seller key=x"):
        body = await app.fails("webhook", 400, "param_fixed", webid="hook", params=params)
        assert SECRET not in body["message"]
    # A name set empty by the base URL may be filled in; other names are free.
    await app.ok("webhook", 69, webid="hook", params="user=kim&Type=ok")
    assert target.requests[-1].path == f"/hook?seller_key={SECRET}&type=info&user=&user=kim&Type=ok"
    assert len(target.requests) == 1


async def test_a_body_makes_a_post_with_its_content_type(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/hook"))
    payload = '{"event": "started", "text": "  ünïcode  "}'
    body = await app.ok("webhook", 69, webid="hook", body=payload, conttype="application/json")
    assert body["response"] == '{"ok":true}'
    seen = target.requests[-1]
    assert (seen.method, seen.path, seen.body) == ("POST", "/hook", payload.encode())
    assert seen.headers["content-type"] == "application/json"
    # Without conttype: form encoding, as KeyAuth's clients got.
    await app.ok("webhook", 69, webid="hook", body="a=1&b=2", params="q=1")
    seen = target.requests[-1]
    assert (seen.method, seen.path, seen.body) == ("POST", "/hook?q=1", b"a=1&b=2")
    assert seen.headers["content-type"] == "application/x-www-form-urlencoded"
    # A content type without a body changes nothing: a GET.
    await app.ok("webhook", 69, webid="hook", conttype="text/plain")
    seen = target.requests[-1]
    assert (seen.method, seen.body) == ("GET", b"")
    assert "content-type" not in seen.headers


async def test_a_content_type_with_a_line_break_is_refused(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/hook"))
    for bad in ("text/plain\r\nX-Injected: 1", "text/plain\nX: 1", "text/\x7fplain", "tëxt/plain"):
        await app.fails("webhook", 400, "invalid_content_type", webid="hook", body="x", conttype=bad)
    await app.fails("webhook", 400, "parameter_too_long", webid="hook", body="x", conttype="t" * 129)
    assert target.requests == []


async def test_a_reply_of_any_status_is_passed_through(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/missing"))
    target.reply("/missing", b'{"success":false,"error":"nope"}', status=404)
    body = await app.ok("webhook", 69, webid="hook")
    assert set(body) == SUCCESS_KEYS
    assert body["response"] == '{"success":false,"error":"nope"}'
    assert body["message"] == "Webhook request completed; the target answered with HTTP status 404."


async def test_the_reply_is_decoded_as_utf8_with_replacement(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/bytes"))
    target.reply("/bytes", "grüße ".encode() + b"\xff\xfe end")
    assert (await app.ok("webhook", 69, webid="hook"))["response"] == "grüße \ufffd\ufffd end"
    target.reply("/bytes", b"")
    assert (await app.ok("webhook", 69, webid="hook"))["response"] == ""


async def test_a_non_ascii_user_agent_is_sent_percent_encoded(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/hook"), ua="Mÿ App 100%")
    await app.ok("webhook", 69, webid="hook")
    assert target.requests[-1].headers["user-agent"] == "M%C3%BF App 100%25"


async def test_message_and_pcuser_are_accepted_and_not_forwarded(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/hook"))
    await app.ok("webhook", 69, webid="hook", message="hello", pcuser="DESKTOP-1")
    seen = target.requests[-1]
    assert seen.path == "/hook"
    assert "DESKTOP-1" not in str(seen.headers)
    await app.fails("webhook", 400, "parameter_too_long", webid="hook", pcuser="p" * 129)


async def test_a_redirect_within_the_allowed_targets_is_followed(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/old"))
    target.redirect("/old", "/hook")
    assert (await app.ok("webhook", 69, webid="hook", params="a=1"))["response"] == '{"ok":true}'
    assert [r.path for r in target.requests] == ["/old?a=1", "/hook"]


# --- who may call ------------------------------------------------------------------------------


async def test_an_authed_webhook_needs_a_logged_in_session(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/hook"), webid="private", authed=1)
    body = await app.fails("webhook", 403, "session_not_validated", webid="private")
    assert body["message"] == "Session is not validated"
    assert target.requests == []
    await log_in(app, seller)
    assert (await app.ok("webhook", 69, webid="private"))["response"] == '{"ok":true}'


async def test_an_open_webhook_needs_a_session_only(app: Client, seller: Seller, target: LocalServer) -> None:
    await add_hook(seller, target.url("/hook"), authed=0)
    await app.ok("webhook", 69, webid="hook")
    await app.fresh().fails("webhook", 401, "missing_session", webid="hook")
    ghost = Client(app.http, app.ownerid, app.name, "f" * 32)
    await ghost.fails("webhook", 403, "session_not_found", webid="hook")


async def test_webhook_refusals(app: Client, seller: Seller, target: LocalServer) -> None:
    await add_hook(seller, target.url("/hook"))
    await app.fails("webhook", 403, "webhook_not_found", webid="nope")
    await app.fails("webhook", 400, "missing_parameter")
    await app.fails("webhook", 400, "parameter_too_long", webid="w" * 33)
    await app.fails("webhook", 400, "parameter_too_long", webid="hook", params="a=" + "b" * 2047)
    too_many = "&".join(f"p{n}=1" for n in range(101))
    await app.fails("webhook", 400, "too_many_params", webid="hook", params=too_many)
    stranger = Client(app.http, app.ownerid, "no such app", app.sessionid)
    await stranger.fails("webhook", 401, "unknown_application", webid="hook")
    await Client(app.http, "", app.name, app.sessionid).fails("webhook", 401, "missing_ownerid", webid="hook")
    assert target.requests == []


async def test_another_applications_webhook_is_not_found(
    app: Client, seller: Seller, services: Services, target: LocalServer
) -> None:
    from tests.helpers import create_seller

    other = await create_seller(services, app.http, owner="someone", name="other")
    await add_hook(other, target.url("/hook"), webid="theirs")
    await app.fails("webhook", 403, "webhook_not_found", webid="theirs")


async def test_a_throttled_webhook_is_403_rate_limited(
    app: Client, seller: Seller, services: Services, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/hook"))
    await seller.ok("updatesettings", clientratelimit=4)
    statuses = [(await app.call("webhook", webid="hook")).status_code for _ in range(4)]
    response = await app.call("webhook", webid="hook")
    assert (response.status_code, response.json()["error"]) == (403, "rate_limited")
    assert int(response.headers["Retry-After"]) >= 1
    assert set(statuses) <= {200, 403}


async def test_an_unexpected_fault_is_403_internal_error(
    app: Client, seller: Seller, target: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await add_hook(seller, target.url("/hook"))

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(outbound, "request", broken)
    response = await app.call("webhook", webid="hook")
    body = response.json()
    # The document lists no 500 for Webhook.
    assert (response.status_code, body["error"], body["success"]) == (403, "internal_error", False)
    assert isinstance(body["request_id"], str)
    app.check_envelope(body)


# --- failing outbound calls --------------------------------------------------------------------


async def test_a_slow_target_is_403_webhook_timeout(app: Client, seller: Seller, target: LocalServer) -> None:
    await add_hook(seller, target.url("/slow"))
    target.reply("/slow", b"late", delay=3)
    body = await app.fails("webhook", 403, "webhook_timeout", webid="hook")
    assert body["message"] == "The webhook's target did not answer in time."
    # A reply that starts at once but trickles in counts against the same limit.
    target.reply("/slow", b"x" * 100, trickle=0.05)
    await app.fails("webhook", 403, "webhook_timeout", webid="hook")


async def test_an_oversize_reply_is_403_webhook_response_too_large(
    app: Client, seller: Seller, target: LocalServer
) -> None:
    await add_hook(seller, target.url("/big"))
    target.reply("/big", b"x" * MAX_REPLY)
    assert len((await app.ok("webhook", 69, webid="hook"))["response"]) == MAX_REPLY
    target.reply("/big", b"x" * (MAX_REPLY + 1))
    body = await app.fails("webhook", 403, "webhook_response_too_large", webid="hook")
    assert body["message"] == "The webhook's reply is larger than the server accepts."
    # Without a Content-Length the reply is cut off while it is read.
    target.reply("/big", b"x" * (MAX_REPLY * 4), chunked=True)
    await app.fails("webhook", 403, "webhook_response_too_large", webid="hook")


async def test_an_unreachable_target_is_403_webhook_failed(app: Client, seller: Seller) -> None:
    await add_hook(seller, f"http://127.0.0.1:{free_port()}/hook")
    body = await app.fails("webhook", 403, "webhook_failed", webid="hook")
    assert "127.0.0.1" not in body["message"]


async def test_an_internal_target_is_403_webhook_refused(
    app: Client, seller: Seller, services: Services
) -> None:
    # The seller API refuses such a URL; one stored before a configuration change still is.
    await webhook_store.insert(
        services.db,
        app_id=seller.app_id,
        webid="intranet",
        base_url=f"http://10.0.0.1/admin?key={SECRET}",
        user_agent="licensegate",
        authed=False,
        now=services.clock.now(),
    )
    body = await app.fails("webhook", 403, "webhook_refused", webid="intranet")
    assert (
        body["message"]
        == "This webhook's target is not allowed by the server; ask the application's developer."
    )
    assert "10.0.0.1" not in str(body)


class TestWithoutOutboundAllow:
    """A server that does not allow loopback targets refuses the local server before any
    request is made."""

    @pytest.fixture
    def settings(self, db_url: str, tmp_path: Path) -> Settings:
        return make_settings(db_url, tmp_path / "data", outbound_timeout=1)

    async def test_a_loopback_target_is_refused_and_never_contacted(
        self, app: Client, seller: Seller, services: Services, target: LocalServer
    ) -> None:
        await webhook_store.insert(
            services.db,
            app_id=seller.app_id,
            webid="local",
            base_url=target.url("/hook"),
            user_agent="licensegate",
            authed=False,
            now=services.clock.now(),
        )
        await app.fails("webhook", 403, "webhook_refused", webid="local")
        assert target.requests == []


# --- the URL never leaks -----------------------------------------------------------------------


async def test_no_answer_or_log_line_reveals_the_webhooks_url(
    app: Client,
    seller: Seller,
    target: LocalServer,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = target.url(f"/private/path?key={SECRET}")
    await add_hook(seller, base)
    target.reply("/private/path", b"fine")
    host_port = f"127.0.0.1:{target.port}"
    responses: list[httpx.Response] = []
    statuses: set[int] = set()

    async def call(webid: str = "hook", **params: Any) -> None:
        response = await app.call("webhook", webid=webid, **params)
        responses.append(response)
        statuses.add(response.status_code)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("unexpected")

    with caplog.at_level(logging.DEBUG):
        await call()  # success
        target.reply("/private/path", b"not there", status=404)
        await call()  # a 404 passed through
        await call(params="key=x")  # a fixed parameter
        await call(conttype="a\nb", body="x")  # a bad content type
        target.reply("/private/path", b"slow", delay=3)
        await call()  # timeout
        target.reply("/private/path", b"x" * (MAX_REPLY + 1))
        await call()  # too large
        await call(webid="nope")  # unknown
        # A redirect to an address outside the allowed targets.
        target.redirect("/private/path", f"http://10.1.2.3/elsewhere?key={SECRET}")
        await call()
        monkeypatch.setattr(outbound, "request", broken)
        await call()  # an unexpected fault
    assert statuses <= WEBHOOK_STATUSES
    assert {200, 400, 403} <= statuses
    texts = [r.text for r in responses] + [str(dict(r.headers)) for r in responses]
    # The HTTP client library's own INFO/DEBUG lines name every URL it requests; they are the
    # logging configuration's to silence (reported), not this operation's.
    ours = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]
    logged = "\n".join(caplog.handler.format(r) for r in ours)
    for leak in (base, SECRET, "/private/path", host_port, "10.1.2.3"):
        assert all(leak not in text for text in texts), leak
        assert leak not in logged, leak
    # The failures are logged, by webhook id and error code.
    assert "webhook 'hook' of application" in logged
    assert "failed: timeout" in logged


# --- a webhook imported from KeyAuth without its full URL ----------------------------------------


async def test_a_disabled_webhook_is_refused_until_its_url_is_entered(
    app: Client, seller: Seller, services: Services, target: LocalServer
) -> None:
    # As `import-keyauth` writes one from KeyAuth's seller API, which gives only a short link.
    short = target.url("/hook")
    await keyauth_store.add_webhook(
        services.db,
        seller.app_id,
        "imported",
        services.secrets.seal(short, webhooks.BASE_URL),
        "KeyAuth",
        False,
        enabled=False,
        now=0,
    )
    listed = (await seller.ok("fetchallwebhooks"))["webhooks"]
    assert [(h["webid"], h["enabled"]) for h in listed] == [("imported", 0)]
    body = await app.fails("webhook", 403, "webhook_disabled", webid="imported")
    assert "full URL" in body["message"]
    assert short not in body["message"]
    await seller.fails("testwebhook", 403, "webhook_disabled", webid="imported")
    assert target.requests == []
    # Changing anything but the URL leaves it disabled; entering the URL enables it.
    await seller.ok("editwebhook", webid="imported", ua="MyApp/3")
    await app.fails("webhook", 403, "webhook_disabled", webid="imported")
    await seller.ok("editwebhook", webid="imported", baseurl=target.url(f"/hook?key={SECRET}"))
    body = await app.ok("webhook", 69, webid="imported")
    assert body["response"] == '{"ok":true}'
    assert [h["enabled"] for h in (await seller.ok("fetchallwebhooks"))["webhooks"]] == [1]
    row = await webhook_store.find(services.db, seller.app_id, "imported")
    assert row is not None
    assert row["enabled"] == 1
