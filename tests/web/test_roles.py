"""Who reaches what, over every dashboard route (table-driven: a page added later is covered by
the same rules as soon as its routes are mounted).

- A manager reaches an application section only with its permission area; the navigation lists
  exactly the sections it may use; any other URL of the application, GET or POST, answers the 403
  page and changes nothing.
- A reseller is a team account with the licenses and users areas only.
- An owner reaches nothing of another owner's application: every route answers 403 (the same as
  for an application that does not exist) without a word of the other application's data, and no
  POST changes anything.
- Outside an application (the account pages, the application list), whoever is signed in (another
  owner, a manager, a reseller) sees and changes only its own account: another account's session
  or security key ids posted there end or touch nothing, and none of its data is shown.
- Every GET page of an application is reachable by following links from its home.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.routing import Route

from licensegate.domain import licenses, permissions, subscriptions, webhooks
from licensegate.domain.permissions import Scope
from licensegate.services import Services
from licensegate.store import sessions as session_store
from licensegate.store import webhooks as webhook_store
from licensegate.web.dashboard import dashboard_app
from licensegate.web.navigation import SECTIONS, SectionArea
from tests.helpers import user_id_of
from tests.web.pages import (
    PASSWORD,
    Dashboard,
    Shop,
    browser,
    make_keys,
    make_member,
    make_shop,
    seller_op,
    seller_upload,
    text_of,
)
from tests.web.test_logs import log_line, tamper_report

pytestmark = pytest.mark.anyio

APP = "{app_id:int}"
SECRET_NAME = "Zanzibar Secret Shop"
# Routes of an application that are not under a section's slug: what they need.
# Pausing is the seller operations' pauseapp/unpauseapp (area settings, as in the seller API).
ACTIONS: dict[str, SectionArea] = {
    "rename": "owner",
    "delete": "owner",
    "pause": "settings",
    "unpause": "settings",
    "online": "sessions",
    "ready": "owner",
}
SESSION_ID = "5e" * 16  # the populated application's open client session
# A POST that passed the permission check would act on these (so a leak would show).
BAIT = {
    "name": "default",
    "newName": "renamed",
    "typed": SECRET_NAME,
    "confirmed": "1",
    "level": "9",
    "user": "victim",
    "var": "motd",
    "data": "changed",
    "everyone": "1",
    "scope": "all",
    "action": "delete",
    "amount": "5",
    "expiry": "30",
    "duration": "30",
    "reason": "denied",
    "ip": "192.0.2.1",
    "hwid": "HW-BAIT",
    "blacktype": "hwid",
    "sessid": SESSION_ID,
    "ver": "bait-9",
    "keynotfound": "bait text",
    "channel": "default",
    "message": "bait",
    "id": "1",
    "length": "3600",
    "url": "http://192.0.2.1/bait",
    "useragent": "bait-agent",
    "webid": "bait",
    "params": "bait=1",
    "value": "bait",
    "text": "changed",
    "button": "bait",
    "position": "1",
    "webdownload": "https://example.com/bait",
    "customerpanel": "1",
    "authed": "0",
}
TABLES = (
    "apps",
    "license_keys",
    "users",
    "subscriptions",
    "user_subscriptions",
    "user_vars",
    "global_vars",
    "sessions",
    "blacklist",
    "whitelist",
    "tokens",
    "app_messages",
    "chat_channels",
    "chat_messages",
    "chat_mutes",
    "client_logs",
    "tamper_logs",
    "webhooks",
    "webhook_deliveries",
    "loader_buttons",
    "files",
    "team_invitations",
)


@dataclass(frozen=True)
class AppRoute:
    path: str  # e.g. /apps/{app_id:int}/subscriptions/{sub_id:int}/edit
    method: str

    @property
    def slug(self) -> str:
        rest = self.path.split(APP, 1)[1].strip("/")
        return rest.split("/", 1)[0]

    def area(self) -> SectionArea | None:
        """What the route needs: its section's area, or (for an application-level action) what
        ACTIONS says; None when nothing says (only the other-owner rule is checked)."""
        for section in SECTIONS:
            if section.slug == self.slug:
                return section.area
        return ACTIONS.get(self.slug)


def app_routes() -> list[AppRoute]:
    found: list[AppRoute] = []
    router: Any = dashboard_app().app  # type: ignore[attr-defined]
    for route in router.routes:
        if isinstance(route, Route) and APP in route.path:
            found += [
                AppRoute(route.path, method) for method in sorted(route.methods or ()) if method != "HEAD"
            ]
    return found


def fill(path: str, values: dict[str, str]) -> str:
    """The route's URL with real ids of the populated application where its parameters name them
    (app_id, sub_id, user_id, key_id, key, username, tab, webid), else 1 or x."""

    def one(match: re.Match[str]) -> str:
        name, _, kind = match.group(1).partition(":")
        return values.get(name, "1" if kind == "int" else "x")

    return "/dashboard" + re.sub(r"\{([^}]+)\}", one, path)


async def populate(services: Services) -> tuple[Shop, dict[str, str]]:
    shop = await make_shop(services, "alice", SECRET_NAME)
    await seller_op(services, shop, "adduser", user="victim", expiry="30")
    await seller_op(services, shop, "setvar", user="victim", var="motd", data="hello")
    await seller_op(services, shop, "addvar", name="motd", data="hello")
    await seller_op(services, shop, "black", hwid="HW-BAIT", reason="denied")
    await seller_op(services, shop, "addWhite", ip="192.0.2.1")
    await seller_op(services, shop, "addchannel", name="default")
    await seller_op(services, shop, "chatpost", channel="default", message="Zanzibar secret news")
    # A webhook whose URL no check would pass now (192.0.2.1 is not public): a test call that
    # leaked through would be refused, and noted in the delivery log all the same.
    await webhook_store.insert(
        services.db,
        app_id=shop.app_id,
        webid="hook",
        base_url=services.secrets.seal("http://192.0.2.1/Zanzibar", webhooks.BASE_URL),
        user_agent="licensegate",
        authed=True,
        now=services.clock.now(),
    )
    await seller_op(services, shop, "addbutton", value="bait", text="Zanzibar secret button")
    await seller_op(services, shop, "addbutton", value="other", text="Another button")
    uploaded = await seller_upload(services, shop, "Zanzibar build.exe", b"secret build")
    now = services.clock.now()
    await log_line(services, shop.app_id, now, "hello", credential="victim", ip="192.0.2.1")
    await tamper_report(services, shop.app_id, now, "hello", credential="victim", hwid="HW-BAIT")
    await session_store.start(
        services.db, session_id=SESSION_ID, app_id=shop.app_id, ip="192.0.2.1", now=now, expires_at=now + 3600
    )
    keys = await make_keys(services, shop, 3)
    subs = await subscriptions.list_all(services.db, shop.app_id)
    db = services.db
    user_id = await user_id_of(services, shop.app_id, "victim")
    key_id = (await licenses.get(db, Scope(shop.app_id), keys[0]))["id"]
    return shop, {
        "app_id": str(shop.app_id),
        "sub_id": str(subs[0]["id"]),
        "user_id": str(user_id),
        "key_id": str(key_id),
        "key": keys[0],
        "username": "victim",
        "tab": "general",
        "webid": "hook",
        "file_id": uploaded["id"],
    }


async def snapshot(services: Services) -> list[Any]:
    state: list[Any] = [await services.db.fetch_value(f"SELECT COUNT(*) FROM {t}") for t in TABLES]
    state += [
        tuple(row.values())
        for row in await services.db.fetch_all(
            "SELECT name, paused_at, version, enabled, customer_panel, web_loader_download "
            "FROM apps ORDER BY id"
        )
    ]
    state += [
        tuple(row.values())
        for row in await services.db.fetch_all("SELECT name, level, paused_at FROM subscriptions ORDER BY id")
    ]
    state += [
        tuple(row.values()) for row in await services.db.fetch_all("SELECT value FROM user_vars ORDER BY id")
    ]
    state += [
        tuple(row.values())
        for row in await services.db.fetch_all("SELECT name, delay_seconds FROM chat_channels ORDER BY id")
    ]
    state += [
        tuple(row.values())
        for row in await services.db.fetch_all("SELECT webid, user_agent, authed FROM webhooks ORDER BY id")
    ]
    state += [
        tuple(row.values())
        for row in await services.db.fetch_all("SELECT value, text, position FROM loader_buttons ORDER BY id")
    ]
    state += [
        tuple(row.values())
        for row in await services.db.fetch_all(
            "SELECT file_id, name, authed, url, storage_key FROM files ORDER BY id"
        )
    ]
    return state


def allowed(granted: frozenset[str], area: SectionArea) -> bool:
    """`granted` holds the account's areas, and "reseller" for a reseller (its Balance page)."""
    return area == "" or (area != "owner" and area in granted)


async def refused_everywhere_but(
    services: Services,
    dash: Dashboard,
    granted: frozenset[str],
    values: dict[str, str],
    hidden: tuple[str, ...] = (),
) -> list[str]:
    """Every application route for a team account holding `granted`: the 403 page where the
    area is not granted (GET and POST, nothing changed); not 403 where it is (GET only: a POST
    that is allowed would act), and none of the `hidden` texts on those pages."""
    wrong: list[str] = []
    before = await snapshot(services)
    for route in app_routes():
        area = route.area()
        if area is None:
            continue
        url = fill(route.path, values)
        if allowed(granted, area):
            if route.method == "GET":
                answer = await dash.http.get(url)
                if answer.status_code == 403:
                    wrong.append(f"GET {route.path}: 403 although {area!r} is granted")
                shown = text_of(answer.text)
                # (a detail page of someone else's key may name the key its URL asked for)
                wrong += [f"GET {url} shows {text!r}" for text in hidden if text in shown and text not in url]
            continue
        if route.method == "GET":
            answer = await dash.http.get(url)
        else:
            answer = await dash.post(url, dict(BAIT), follow=False)
        if answer.status_code != 403 or "Not allowed" not in answer.text:
            wrong.append(f"{route.method} {route.path}: {answer.status_code}, not the 403 page ({area!r})")
    if await snapshot(services) != before:
        wrong.append("a refused request changed the database")
    return wrong


def nav_links(page_html: str, app_id: int) -> set[str]:
    nav = page_html.split('<nav class="side"', 1)[1].split("</nav>", 1)[0]
    return set(re.findall(rf'href="/dashboard/apps/{app_id}/([^"]*)"', nav))


@pytest.mark.parametrize(
    ("role", "granted"),
    [
        ("manager", "licenses"),
        ("manager", "users"),
        ("manager", "subscriptions,variables"),
        ("manager", "all"),
        ("reseller", ""),
    ],
)
async def test_team_accounts_reach_only_their_areas(services: Services, role: str, granted: str) -> None:
    shop, values = await populate(services)
    await make_member(services, shop, role, "member", permissions=granted or None)
    if role == "reseller":
        areas = frozenset((*permissions.names(permissions.RESELLER_AREAS), "reseller"))
    else:
        areas = frozenset(permissions.names(permissions.team_areas("manager", permissions.parse(granted))))
    async with browser(services) as dash:
        await dash.sign_in("member")
        home = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert home.status_code == 200
        expected = {s.slug for s in SECTIONS if allowed(areas, s.area)}
        assert nav_links(home.text, shop.app_id) == expected
        # A reseller sees none of the keys and users it did not make, on any page it reaches.
        hidden = (values["key"], values["username"]) if role == "reseller" else ()
        assert await refused_everywhere_but(services, dash, areas, values, hidden) == []
        created = await dash.post("/dashboard/apps", {"name": "Mine now"}, follow=False)
        assert created.status_code == 403


async def test_an_owner_reaches_nothing_of_another_owners_application(services: Services) -> None:
    _shop, values = await populate(services)
    await make_shop(services, "bob", "Bob Shop")
    routes = app_routes()
    assert len(routes) >= 10, "the dashboard's routes were not found"
    before = await snapshot(services)
    async with browser(services) as dash:
        await dash.sign_in("bob")
        await dash.get("/dashboard/account")
        for app_id in (values["app_id"], "999999"):
            for route in routes:
                url = fill(route.path, {**values, "app_id": app_id})
                if route.method == "GET":
                    answer = await dash.http.get(url)
                else:
                    answer = await dash.post(url, dict(BAIT), follow=False)
                assert answer.status_code in (403, 404), f"{route.method} {route.path}: {answer.status_code}"
                shown = text_of(answer.text)
                for secret in (SECRET_NAME, "victim", "hello", "Zanzibar secret button"):
                    assert secret not in shown, f"{route.method} {route.path} shows {secret!r}"
    assert await snapshot(services) == before


async def test_the_owner_reaches_every_page_of_its_application(services: Services) -> None:
    _shop, values = await populate(services)
    async with browser(services) as dash:
        await dash.sign_in("alice")
        home = await dash.get(f"/dashboard/apps/{values['app_id']}/")
        assert nav_links(home.text, int(values["app_id"])) == {
            s.slug for s in SECTIONS if s.area != "reseller"
        }
        for route in app_routes():
            if route.area() == "reseller":  # a reseller's own balance: the owner reads it on the team page
                continue
            if route.method == "GET":
                answer = await dash.http.get(fill(route.path, values))
                assert answer.status_code not in (403, 500), f"GET {route.path}: {answer.status_code}"


async def test_a_manager_with_every_area_never_reaches_the_audit_log_nor_the_secret(
    services: Services,
) -> None:
    from licensegate.domain import appkeys

    shop, values = await populate(services)
    await make_member(services, shop, "manager", "member", permissions="all")
    secret = (await appkeys.client_keys(services.db, services.secrets, shop.app_id)).secret
    assert len(secret) >= 32
    async with browser(services) as dash:
        await dash.sign_in("member")
        home = await dash.get(f"/dashboard/apps/{shop.app_id}/")
        assert "audit-log" not in nav_links(home.text, shop.app_id)
        for tail in ("", "/verify", "/export"):
            audit = await dash.http.get(f"/dashboard/apps/{shop.app_id}/audit-log{tail}")
            assert audit.status_code == 403, tail
        shown = 0
        for route in app_routes():
            if route.method != "GET":
                continue
            answer = await dash.http.get(fill(route.path, values))
            assert secret not in answer.text, f"GET {route.path} shows the application secret"
            shown += answer.status_code == 200
        assert shown >= 10
        integration = await dash.get(f"/dashboard/apps/{shop.app_id}/integration")
        assert integration.status_code == 200
        assert "Show the application secret" not in integration.text
        assert "the application secret, shown above to the owner" in integration.text
        for path in ("/dashboard/account", "/dashboard/apps"):
            assert secret not in (await dash.get(path)).text


# --- routes outside an application: the signed-in account's own pages ---------------------------

OWN_MAIL = "alice-hidden@example.org"
OWN_KEY = "Zanzibar security key"


def account_routes() -> list[tuple[str, str]]:
    """Every dashboard route that is not an application's and acts on the signed-in account (its
    account pages, the application list): a route added later is covered too."""
    found: list[tuple[str, str]] = []
    router: Any = dashboard_app().app  # type: ignore[attr-defined]
    for route in router.routes:
        own = isinstance(route, Route) and (route.path in ("/", "/apps") or route.path.startswith("/account"))
        if own:
            found += [(route.path, m) for m in sorted(route.methods or ()) if m != "HEAD"]
    return found


async def alices_own(services: Services) -> list[Any]:
    """What is alice's alone: her account row, security keys, sessions, pending e-mail change."""
    db = services.db
    account = await db.fetch_one(
        "SELECT id, email, password_hash, totp_secret, disabled FROM accounts WHERE username = 'alice'"
    )
    assert account is not None
    return [
        tuple(account.values()),
        [
            tuple(r.values())
            for r in await db.fetch_all("SELECT id, name FROM passkeys WHERE account_id = ?", account["id"])
        ],
        [
            tuple(r.values())
            for r in await db.fetch_all(
                "SELECT id FROM dashboard_sessions WHERE account_id = ?", account["id"]
            )
        ],
        await db.fetch_value("SELECT COUNT(*) FROM email_changes WHERE account_id = ?", account["id"]),
    ]


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_account_pages_show_and_change_only_the_signed_in_account(services: Services, who: str) -> None:
    """Signed in as another owner, a manager or a reseller of alice's application: every account
    route, GET and POST (with alice's session and security key ids as bait), shows nothing of
    alice's account and changes nothing of it."""
    from licensegate.store import passkeys as passkey_store

    shop, _values = await populate(services)
    await services.db.execute("UPDATE accounts SET email = ? WHERE id = ?", OWN_MAIL, shop.owner.id)
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(services, shop, who, who, permissions="licenses" if who == "manager" else None)
    routes = account_routes()
    assert {
        ("/account", "GET"),
        ("/account/sessions/end", "POST"),
        ("/account/passkeys/remove", "POST"),
    } <= set(routes)
    async with browser(services) as alice, browser(services) as other:
        await alice.sign_in("alice")  # (before her security key: no second step)
        passkey_id = await passkey_store.insert(
            services.db,
            account_id=shop.owner.id,
            credential_id="zanzibar-credential",
            public_key="AQID",
            sign_count=0,
            transports="usb",
            name=OWN_KEY,
            now=services.clock.now(),
        )
        session_id = await services.db.fetch_value(
            "SELECT MAX(id) FROM dashboard_sessions WHERE account_id = ?", shop.owner.id
        )
        before = await alices_own(services)
        await other.sign_in(who)
        bait = {
            **BAIT,
            "session": str(session_id),
            "passkey": str(passkey_id),
            "name": "renamed by " + who,
            "current": PASSWORD,
            "password": PASSWORD,
            "email_password": PASSWORD,
            "new": "a new password 42",
            "confirm": "a new password 42",
            "new_email": "bait@example.org",
            "code": "000000",
            "token": "bait",
        }
        hidden = [OWN_MAIL, OWN_KEY] + ([SECRET_NAME] if who == "bob" else [])
        for path, method in sorted(routes, key=lambda r: r[1]):  # every GET before any POST
            url = "/dashboard" + path
            if method == "GET":
                answer = await other.get(url)
            else:
                await other.get("/dashboard/account")  # a fresh CSRF token (a POST may end the session)
                answer = await other.post(url, dict(bait), follow=False)
            assert answer.status_code < 500, f"{method} {path}: {answer.status_code}"
            shown = text_of(answer.text)
            for secret in hidden:
                assert secret not in shown, f"{method} {path} shows {secret!r}"
        assert await alices_own(services) == before
        assert (await alice.get("/dashboard/account")).url.path == "/dashboard/account"  # still signed in


async def test_every_page_is_reachable_from_the_navigation(services: Services) -> None:
    """From the application's home, following the links (and the htmx fragments the pages load)
    an owner reaches every GET route of an application: no page exists only by its URL."""
    shop, values = await populate(services)
    await make_member(services, shop, "reseller", "rita")
    app_id = values["app_id"]
    patterns = {
        route.path: re.compile(
            "^/dashboard" + re.sub(r"\{[^}]+\}", "[^/]+", route.path.replace(APP, app_id)) + "$"
        )
        for route in app_routes()
        # Not the reseller's own pages (the owner reads them on the team page), nor a new
        # application's first page (the redirect after creating it leads there).
        if route.method == "GET" and route.area() != "reseller" and not route.path.endswith("/ready")
    }
    assert len(patterns) >= 30, "the dashboard's routes were not found"
    start = f"/dashboard/apps/{app_id}/"
    seen: set[str] = set()
    queue = [start]
    reached: set[str] = set()
    async with browser(services) as dash:
        await dash.sign_in("alice")
        while queue and len(seen) < 400:
            url = queue.pop(0)
            if url in seen:
                continue
            seen.add(url)
            answer = await dash.http.get(url)
            path = url.split("?", 1)[0]
            reached |= {name for name, pattern in patterns.items() if pattern.match(path)}
            if answer.status_code != 200 or "text/html" not in answer.headers.get("content-type", ""):
                continue
            for link in re.findall(r'(?:href|hx-get)="([^"#]+)"', answer.text):
                link = link.replace("&amp;", "&")
                if link.startswith(f"/dashboard/apps/{app_id}/") and "after=" not in link:
                    queue.append(link)
    missing = sorted(set(patterns) - reached)
    assert missing == [], f"not reachable by a link: {missing}"
