"""The Webhooks page: webhooks listed with their URL masked (revealed by the owner alone, noted in
the audit log), added (a bad URL, id or user agent refused next to its field with a 400), edited,
deleted once confirmed; a test call to a loopback HTTP receiver with its outcome shown; and the
delivery log of real calls (clients' and tests'), with status and duration, a failure's error,
filters and its bound per application."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from licensegate.config import Settings
from licensegate.domain import webhooks
from licensegate.services import Services
from licensegate.store import keyauthimport as keyauth_store
from licensegate.store import webhooks as webhook_store
from tests.conftest import make_settings
from tests.helpers import Client
from tests.httpservers import LocalServer, keep_off_the_network, serving
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio

SECRET = "s3cretSellerKey"
MAX_REPLY = 4096
LOG_ROW = re.compile(r"<tr>\s*<td class=\"when\">.*?</tr>", re.S)


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
        server.reply("/broken", f"no such key {SECRET} here".encode(), status=500)
        yield server


def hooks(shop: Shop, rest: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/webhooks" + (f"/{rest}" if rest else "")


async def add_hook(
    services: Services, shop: Shop, url: str, webid: str = "orders", authed: str = "0"
) -> None:
    await seller_op(services, shop, "addwebhook", baseurl=url, webid=webid, authed=authed, ua="MyApp/2.0")


async def deliveries(services: Services, shop: Shop) -> list[dict[str, object]]:
    rows = await services.db.fetch_all(
        "SELECT webid, source, method, status, duration_ms, error_code, error, excerpt "
        "FROM webhook_deliveries WHERE app_id = ? ORDER BY id",
        shop.app_id,
    )
    return [dict(row) for row in rows]


async def test_add_a_webhook_bad_input_next_to_its_field_and_the_url_masked(
    services: Services, dash: Dashboard, target: LocalServer
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    empty = await dash.get(hooks(shop))
    assert empty.status_code == 200
    assert "No webhooks yet." in text_of(empty.text)
    assert "No calls yet." in text_of(empty.text)

    for fields, field, text in (
        ({"url": "ftp://example.com/x"}, "url", "Only http:// and https:// URLs"),
        ({"url": "http://10.1.2.3/hook"}, "url", "a private address"),
        ({"url": "not a url"}, "url", "cannot be used"),
        ({"url": ""}, "url", "Fill this in."),
        ({"url": target.url("/hook"), "webid": "bad id!"}, "webid", "letters, digits"),
        ({"url": target.url("/hook"), "useragent": "x\u0007y"}, "useragent", "control characters"),
        ({"url": "http://h/" + "a" * 3000}, "url", "2048"),
    ):
        refused = await dash.post(hooks(shop), {"authed": "1", **fields})
        assert refused.status_code == 400, (fields, refused.status_code)
        found = re.search(rf'id="f-{field}-error">([^<]*)<', refused.text)
        assert found is not None, fields
        assert text in found.group(1), (fields, found.group(1))
        assert re.search(rf'id="f-{field}"[^>]*aria-invalid="true"', refused.text, re.S)
    assert await webhooks.list_all(services.db, services.secrets, shop.app_id) == []

    url = target.url(f"/hook?key={SECRET}&type=info")
    added = await dash.post(
        hooks(shop), {"url": url, "useragent": "MyApp/2.0", "webid": "orders", "authed": "1"}
    )
    assert added.status_code == 200
    assert str(added.url).endswith(hooks(shop, "orders"))
    shown = text_of(added.text)
    assert "The webhook orders is added; clients call it with webid=orders." in shown
    assert f"http://127.0.0.1:{target.port}/•••" in shown
    assert SECRET not in added.text
    assert "/hook" not in added.text  # neither its path
    taken = await dash.post(hooks(shop), {"url": url, "webid": "orders"})
    assert taken.status_code == 409
    assert re.search(r'id="f-webid-error">[^<]*already exists', taken.text)
    generated = await dash.post(hooks(shop), {"url": target.url("/")})
    assert generated.status_code == 200

    listed = await dash.get(hooks(shop))
    assert SECRET not in listed.text
    assert "/hook" not in listed.text
    assert "MyApp/2.0" in listed.text
    assert "Logged-in clients" in text_of(listed.text)
    assert "Any client session" in text_of(listed.text)
    assert f"http://127.0.0.1:{target.port}</code>" in listed.text  # nothing after the host: no mark
    # The URL is sealed at rest.
    stored = await services.db.fetch_all("SELECT base_url FROM webhooks WHERE app_id = ?", shop.app_id)
    assert all(SECRET not in row["base_url"] and "/hook" not in row["base_url"] for row in stored)


async def test_only_the_owner_reveals_a_url_and_it_is_audited(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    url = f"http://127.0.0.1:9/hook?key={SECRET}"
    await add_hook(services, shop, url)
    await dash.sign_in("alice")
    page = await dash.get(hooks(shop, "orders"))
    assert SECRET not in page.text
    assert 'aria-label="Reveal the URL of orders"' in page.text
    revealed = await dash.post(hooks(shop, "orders/reveal"))
    assert revealed.status_code == 200
    assert f'<code class="secret" id="webhook-url">{url.replace("&", "&amp;")}</code>' in revealed.text
    again = await dash.get(hooks(shop, "orders"))
    assert SECRET not in again.text  # hidden again on the next page
    entry = await services.db.fetch_one(
        "SELECT actor, action, target, before, after FROM audit_log WHERE app_id = ? "
        "ORDER BY id DESC LIMIT 1",
        shop.app_id,
    )
    assert entry is not None
    assert dict(entry) == {
        "actor": "alice (dashboard)",
        "action": "revealwebhook",
        "target": "webhook:orders",
        "before": None,
        "after": None,
    }
    audit_texts = await services.db.fetch_all(
        "SELECT before, after FROM audit_log WHERE app_id = ?", shop.app_id
    )
    assert all(SECRET not in str(dict(row)) for row in audit_texts)

    await make_member(services, shop, "manager", "mia", permissions="webhooks")
    async with browser(services) as mia:
        await mia.sign_in("mia")
        seen = await mia.get(hooks(shop))
        assert seen.status_code == 200
        assert "Reveal" not in text_of(seen.text)
        detail = await mia.get(hooks(shop, "orders"))
        assert "Only the application's owner can reveal the URL." in text_of(detail.text)
        refused = await mia.post(hooks(shop, "orders/reveal"), follow=False)
        assert refused.status_code == 403
        assert SECRET not in refused.text
        # A manager edits and tests without reading the URL.
        edited = await mia.post(hooks(shop, "orders/edit"), {"useragent": "Mia/1", "authed": "1"})
        assert "The webhook orders is saved." in text_of(edited.text)
        assert SECRET not in edited.text


async def test_edit_a_webhook(services: Services, dash: Dashboard, target: LocalServer) -> None:
    shop = await make_shop(services)
    await add_hook(services, shop, target.url(f"/hook?key={SECRET}"), authed="1")
    await dash.sign_in("alice")
    await dash.get(hooks(shop, "orders"))
    bad = await dash.post(
        hooks(shop, "orders/edit"), {"url": "gopher://x", "useragent": "New/1", "authed": "1"}
    )
    assert bad.status_code == 400
    assert re.search(r'id="f-url-error">[^<]*Only http', bad.text)
    assert 'value="New/1"' in bad.text  # what was typed stays
    kept = await dash.post(hooks(shop, "orders/edit"), {"url": "", "useragent": "New/1"})
    assert "The webhook orders is saved." in text_of(kept.text)
    row = await webhooks.get(services.db, services.secrets, shop.app_id, "orders")
    assert (row["base_url"], row["user_agent"], row["authed"]) == (
        target.url(f"/hook?key={SECRET}"),
        "New/1",
        0,
    )
    moved = await dash.post(
        hooks(shop, "orders/edit"), {"url": target.url("/hook?key=other"), "useragent": "", "authed": "1"}
    )
    assert "The webhook orders is saved (its URL replaced)." in text_of(moved.text)
    row = await webhooks.get(services.db, services.secrets, shop.app_id, "orders")
    assert (row["base_url"], row["user_agent"], row["authed"]) == (
        target.url("/hook?key=other"),
        webhooks.DEFAULT_USER_AGENT,
        1,
    )
    raw = await webhook_store.find(services.db, shop.app_id, "orders")
    assert raw is not None
    assert "other" not in raw["base_url"]
    audited = await services.db.fetch_all(
        "SELECT before, after FROM audit_log WHERE app_id = ? AND action = 'editwebhook' ORDER BY id",
        shop.app_id,
    )
    assert len(audited) == 2
    assert all(SECRET not in str(dict(row)) and "other" not in str(dict(row)) for row in audited)
    assert '"url_changed":1' in audited[1]["after"]
    missing = await dash.get(hooks(shop, "nope"))
    assert missing.status_code == 404


async def test_delete_once_confirmed_and_delete_every_webhook(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    for webid in ("one", "two", "three"):
        await add_hook(services, shop, "http://127.0.0.1:9/h", webid)
    await dash.sign_in("alice")
    await dash.get(hooks(shop))
    asked = await dash.post(hooks(shop, "one/delete"))
    assert "Delete the webhook one?" in text_of(asked.text)
    assert len(await webhooks.list_all(services.db, services.secrets, shop.app_id)) == 3
    done = await dash.post(hooks(shop, "one/delete"), {"confirmed": "1"})
    assert "The webhook one is deleted." in text_of(done.text)
    assert str(done.url).endswith(hooks(shop))
    assert [row["webid"] for row in await webhooks.list_all(services.db, services.secrets, shop.app_id)] == [
        "two",
        "three",
    ]
    asked = await dash.post(hooks(shop, "delete-all"))
    assert "All 2 webhooks are deleted" in text_of(asked.text)
    emptied = await dash.post(hooks(shop, "delete-all"), {"confirmed": "1"})
    assert "Every webhook is deleted (2 webhooks)." in text_of(emptied.text)
    assert await webhooks.list_all(services.db, services.secrets, shop.app_id) == []


async def test_the_delivery_log_shows_real_calls_and_their_failures(
    services: Services, dash: Dashboard, target: LocalServer
) -> None:
    shop = await make_shop(services)
    await add_hook(services, shop, target.url(f"/hook?key={SECRET}"))
    await add_hook(services, shop, target.url(f"/broken?key={SECRET}"), "broken")
    await add_hook(services, shop, f"http://127.0.0.1:1/closed?key={SECRET}", "closed")
    async with browser(services) as program:
        client = Client(program.http, shop.ownerid, "Shop")
        await client.init()
        answered = await client.ok("webhook", 69, webid="orders", params="user=kim")
        assert answered["response"] == '{"ok":true}'
        await client.ok("webhook", 69, webid="broken", body="a=1")
        await client.fails("webhook", 403, "webhook_failed", webid="closed")
    assert target.requests[0].path == f"/hook?key={SECRET}&user=kim"
    logged = await deliveries(services, shop)
    assert [(d["webid"], d["source"], d["method"], d["status"], d["error_code"]) for d in logged] == [
        ("orders", "client", "GET", 200, None),
        ("broken", "client", "POST", 500, None),
        ("closed", "client", "GET", None, "connection_failed"),
    ]
    assert all(isinstance(d["duration_ms"], int) and 0 <= d["duration_ms"] < 5000 for d in logged)
    assert logged[0]["excerpt"] is None  # a successful reply is never kept
    assert logged[1]["excerpt"] == "no such key ••• here"  # a failed one's start, its secret blanked
    assert "127.0.0.1" in str(logged[2]["error"])
    assert all(SECRET not in str(d) for d in logged)

    await dash.sign_in("alice")
    page = await dash.get(hooks(shop))
    rows = LOG_ROW.findall(page.text)
    assert len(rows) == 3
    assert "Delivery log (3 in all)" in text_of(page.text)
    newest = text_of(rows[0])
    assert "closed" in newest
    assert "Client GET" in newest
    assert "No reply" in newest
    assert "Could not connect to '127.0.0.1'" in newest
    assert re.search(r"\d+ ms", newest)
    assert "500" in text_of(rows[1])
    assert "The reply began: no such key ••• here" in text_of(rows[1])
    assert "200" in text_of(rows[2])
    assert "Client GET" in text_of(rows[2])
    assert SECRET not in page.text

    only = await dash.get(hooks(shop), params={"webid": "orders"})
    assert len(LOG_ROW.findall(only.text)) == 1
    failed = await dash.get(hooks(shop), params={"outcome": "failed"})
    assert len(LOG_ROW.findall(failed.text)) == 2
    for bad in ({"webid": "x" * 100}, {"outcome": "odd"}, {"size": "7"}):
        assert (await dash.get(hooks(shop), params=bad)).status_code == 400
    # A deleted webhook's calls stay, marked.
    await seller_op(services, shop, "delwebhook", webid="closed")
    after = await dash.get(hooks(shop), params={"webid": "closed"})
    assert after.status_code == 200
    assert "closed (deleted)" in text_of(after.text)
    detail = await dash.get(hooks(shop, "broken"))
    assert len(LOG_ROW.findall(detail.text)) == 1


async def test_the_delivery_log_is_keyset_paged(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    for number in range(30):
        await webhook_store.add_delivery(
            services.db,
            shop.app_id,
            webid=f"w{number:02d}",
            source="client",
            method="GET",
            status=200,
            duration_ms=number,
            error_code=None,
            error=None,
            excerpt=None,
            now=services.clock.now(),
        )
    await dash.sign_in("alice")
    first = await dash.get(hooks(shop))
    assert "Delivery log (30 in all)" in text_of(first.text)
    shown = re.findall(r"<td>(w\d\d) <span class=\"hint\">\(deleted\)", first.text)
    assert shown == [f"w{n:02d}" for n in range(29, 4, -1)]
    found = re.search(r'<a href="([^"]+)" rel="next">', first.text)
    assert found is not None
    second = await dash.get(found.group(1).replace("&amp;", "&"))
    assert re.findall(r"<td>(w\d\d) <span", second.text) == ["w04", "w03", "w02", "w01", "w00"]


async def test_send_test_shows_the_outcome_and_notes_it(
    services: Services, dash: Dashboard, target: LocalServer
) -> None:
    shop = await make_shop(services)
    await add_hook(services, shop, target.url(f"/hook?key={SECRET}"))
    await add_hook(services, shop, f"http://127.0.0.1:1/closed?key={SECRET}", "closed")
    await dash.sign_in("alice")
    await dash.get(hooks(shop))
    tested = await dash.post(hooks(shop, "orders/test"))
    assert tested.status_code == 200
    shown = text_of(tested.text)
    assert re.search(r"HTTP 200 The target answered with HTTP status 200 in \d+ ms\.", shown)
    assert '{"ok":true}' in shown
    assert target.requests[-1].path == f"/hook?key={SECRET}"
    assert target.requests[-1].headers["user-agent"] == "MyApp/2.0"
    assert SECRET not in tested.text
    with_values = await dash.post(hooks(shop, "orders/test"), {"params": "user=kim", "body": "a=1"})
    assert with_values.status_code == 200
    seen = target.requests[-1]
    assert (seen.method, seen.path, seen.body) == ("POST", f"/hook?key={SECRET}&user=kim", b"a=1")
    fixed = await dash.post(hooks(shop, "orders/test"), {"params": "key=mine"})
    assert fixed.status_code == 400
    assert re.search(r'id="f-params-error">[^<]*fixed by this webhook', fixed.text)

    failed = await dash.post(hooks(shop, "closed/test"))
    assert failed.status_code == 200
    assert re.search(
        r"Failed The test call failed after \d+ ms: Could not connect to '127\.0\.0\.1'", text_of(failed.text)
    )
    logged = await deliveries(services, shop)
    assert [(d["webid"], d["source"], d["method"], d["status"]) for d in logged] == [
        ("orders", "test", "GET", 200),
        ("orders", "test", "POST", 200),
        ("closed", "test", "GET", None),
    ]
    page = await dash.get(hooks(shop))
    assert "Test GET" in text_of(page.text)
    tests = await services.db.fetch_all(
        "SELECT after FROM audit_log WHERE app_id = ? AND action = 'testwebhook' ORDER BY id", shop.app_id
    )
    assert [row["after"] for row in tests] == ['{"test":200}', '{"test":200}', '{"test":"connection_failed"}']


async def test_a_refused_target_is_noted_and_the_log_is_bounded(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = await make_shop(services)
    # Stored before the operator withdrew the address: the call is refused, and noted.
    await webhook_store.insert(
        services.db,
        app_id=shop.app_id,
        webid="orders",
        base_url=services.secrets.seal("http://10.0.0.1/x", webhooks.BASE_URL),
        user_agent="licensegate",
        authed=False,
        now=services.clock.now(),
    )
    other = await make_shop(services, "bob", "Other")
    await add_hook(services, other, "http://127.0.0.1:1/x")
    body = await seller_op(services, shop, "testwebhook", webid="orders")
    assert body["status"] is None
    assert body["error_code"] == "target_not_allowed"
    [noted] = await deliveries(services, shop)
    assert (noted["status"], noted["error_code"]) == (None, "target_not_allowed")

    monkeypatch.setattr(webhooks, "KEPT_DELIVERIES", 5)
    monkeypatch.setattr(webhooks, "PRUNE_ONE_IN", 1)
    for _ in range(7):
        await seller_op(services, shop, "testwebhook", webid="orders")
    await seller_op(services, other, "testwebhook", webid="orders")
    assert await webhooks.count_deliveries(services.db, shop.app_id) == 5
    assert await webhooks.count_deliveries(services.db, other.app_id) == 1
    kept = await services.db.fetch_all(
        "SELECT id FROM webhook_deliveries WHERE app_id = ? ORDER BY id", shop.app_id
    )
    everything = await services.db.fetch_value("SELECT MAX(id) FROM webhook_deliveries")
    assert kept[-1]["id"] == everything - 1  # the newest five of the shop's (bob's came last)
    # Pruned now and then, at random: 400 more calls leave the limit's 5 and those since the last
    # prune (all 400 only if none of them pruned: odds below one in 10**11).
    monkeypatch.setattr(webhooks, "PRUNE_ONE_IN", 16)
    for _ in range(400):
        await webhooks._note(
            services.db,
            shop.app_id,
            "orders",
            "client",
            "GET",
            "http://10.0.0.1/x",
            webhooks.Delivery(1, result=webhooks.WebhookResult(200, "")),
            services.clock.now(),
        )
    assert 5 <= await webhooks.count_deliveries(services.db, shop.app_id) < 5 + 400


async def test_a_failure_to_note_never_fails_the_call(
    services: Services, target: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = await make_shop(services)
    await add_hook(services, shop, target.url("/hook"))

    async def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the database is gone")

    monkeypatch.setattr(webhook_store, "add_delivery", broken)
    async with browser(services) as program:
        client = Client(program.http, shop.ownerid, "Shop")
        await client.init()
        body = await client.ok("webhook", 69, webid="orders")
        assert body["response"] == '{"ok":true}'
    assert await deliveries(services, shop) == []


def test_masked_urls() -> None:
    assert webhooks.masked("https://example.com/api?key=1") == "https://example.com/•••"
    assert webhooks.masked("https://example.com") == "https://example.com"
    assert webhooks.masked("https://example.com/") == "https://example.com"
    assert webhooks.masked("https://user:pw@example.com:8443/x") == "https://example.com:8443/•••"
    assert webhooks.masked("http://[::1]:8080/t") == "http://[::1]:8080/•••"
    assert webhooks.masked("nonsense") == "•••"


def test_secrets_are_scrubbed() -> None:
    url = "https://discord.com/api/webhooks/123/AbCdEfGhIjKlMnOp?wait=true&token=tok3n"
    text = "404 at /api/webhooks/123/AbCdEfGhIjKlMnOp?wait=true&token=tok3n for tok3n"
    scrubbed = webhooks.scrub(text, url)
    assert "AbCdEfGhIjKlMnOp" not in scrubbed
    assert "tok3n" not in scrubbed
    assert scrubbed.startswith("404 at /api/webhooks/123/•••")


async def test_a_webhook_imported_without_its_url_shows_disabled_until_it_is_entered(
    services: Services, dash: Dashboard, target: LocalServer
) -> None:
    shop = await make_shop(services)
    # As `import-keyauth` writes one from KeyAuth's seller API, which gives only a short link.
    await keyauth_store.add_webhook(
        services.db,
        shop.app_id,
        "imported",
        services.secrets.seal(target.url("/hook"), webhooks.BASE_URL),
        "KeyAuth",
        True,
        enabled=False,
        now=0,
    )
    await dash.sign_in("alice")
    listed = text_of((await dash.get(hooks(shop))).text)
    assert "Disabled needs its full URL again" in listed
    page = await dash.get(hooks(shop, "imported"))
    assert 'id="webhook-disabled"' in page.text
    assert "Enter its full URL under Settings below to enable it." in text_of(page.text)
    kept = await dash.post(hooks(shop, "imported/edit"), {"url": "", "useragent": "New/1"})
    assert "The webhook imported is saved." in text_of(kept.text)
    assert 'id="webhook-disabled"' in kept.text  # a new user agent is not a URL
    moved = await dash.post(
        hooks(shop, "imported/edit"), {"url": target.url(f"/hook?key={SECRET}"), "useragent": ""}
    )
    assert "The webhook imported is saved (its URL replaced)." in text_of(moved.text)
    assert 'id="webhook-disabled"' not in moved.text
    assert "Disabled" not in text_of((await dash.get(hooks(shop))).text)
    row = await webhooks.get(services.db, services.secrets, shop.app_id, "imported")
    assert (row["enabled"], row["base_url"]) == (1, target.url(f"/hook?key={SECRET}"))
