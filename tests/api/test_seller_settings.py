"""Seller API — Settings group (application settings, client messages, program hashes, pausing
the application, statistics, details), over HTTP."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import messages as catalogue
from licensegate.domain import settings as app_settings
from licensegate.services import Services
from tests.helpers import SELLER_PATH, Seller, client_of, make_user

pytestmark = pytest.mark.anyio

WEBHOOK = "https://discord.example/api/webhooks/123/s3cr3t-t0ken"

DEFAULT_SETTINGS = {
    "version": "1.0",
    "download_link": None,
    "enabled": 1,
    "paused": 0,
    "paused_at": None,
    "hwid_lock": 1,
    "force_hwid": 0,
    "min_hwid_length": 0,
    "max_hwids": 1,
    "hwid_reset_cooldown": 604800,
    "session_seconds": 21600,
    "min_username_length": 1,
    "hash_check": 0,
    "seller_log": 0,
    "log_webhook": "unset",
    "tamper_action": "log",
    "client_rate_limit": 60000,
    "client_rate_window": 60,
    "auth_rate_limit": 30,
    "auth_rate_window": 60,
    "chat_history": 50,
    "log_retention_days": 30,
    "token_validation": 0,
    "case_insensitive_usernames": 0,
    "web_loader_download": None,
    "customer_panel": 0,
}


async def limited_key(seller: Seller, permissions: str) -> str:
    key: str = (await seller.ok("addsellerkey", name="limited", permissions=permissions))["sellerkey"]
    return key


# --- getsettings ---------------------------------------------------------------------------------


async def test_getsettings_reports_every_setting_message_and_hash(seller: Seller) -> None:
    body = await seller.ok("getsettings")
    assert body["message"] == "Retrieved Settings Successfully"
    assert body["settings"] == DEFAULT_SETTINGS
    assert body["messages"] == catalogue.DEFAULTS
    assert body["hashes"] == []
    # KeyAuth's flat fields, for existing clients.
    assert (body["enabled"], body["hwid-lock"], body["version"], body["download"]) == (True, True, "1.0", "")
    assert body["webdownload"] == ""


async def test_getsettings_never_shows_the_app_secret_or_the_webhook_url(
    seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", webhook=WEBHOOK)
    secret = await services.db.fetch_value("SELECT secret FROM apps WHERE id = ?", seller.app_id)
    response = await seller.call("getsettings")
    assert response.status_code == 200
    assert secret not in response.text
    assert "s3cr3t" not in response.text
    assert response.json()["settings"]["log_webhook"] == "set"


async def test_settings_operations_need_the_settings_permission(seller: Seller) -> None:
    key = await limited_key(seller, "licenses")
    for type_ in ("getsettings", "updatesettings", "fetchmessages", "stats", "appdetails", "pauseapp"):
        response = await seller.call(type_, sellerkey=key, ver="2")
        assert (response.status_code, response.json()["error"]) == (403, "permission_denied"), type_


# --- updatesettings ------------------------------------------------------------------------------


async def test_updatesettings_changes_only_the_given_settings(seller: Seller) -> None:
    body = await seller.ok("updatesettings", ver="2.5", enabled="false", hwidcheck="false")
    assert body["message"] == "Settings Update Successful"
    expected = dict(DEFAULT_SETTINGS, version="2.5", enabled=0, hwid_lock=0)
    assert body["settings"] == expected
    got = await seller.ok("getsettings")
    assert got["settings"] == expected
    assert (got["enabled"], got["hwid-lock"], got["version"]) == (False, False, "2.5")


async def test_updatesettings_sets_every_setting_of_ours(seller: Seller) -> None:
    body = await seller.ok(
        "updatesettings",
        download="https://example.com/app-2.zip",
        forcehwid=1,
        minhwid=20,
        maxhwids=3,
        hwidcooldown=0,
        session=3600,
        minusernamelength=4,
        hashcheck="true",
        sellerlogs=1,
        tamperaction="ban",
        clientratelimit=500,
        clientratewindow=30,
        authratelimit=10,
        authratewindow=120,
        chathistory=200,
        logretention=90,
        webdownload="https://example.com/loader.exe",
        customerpanel=1,
    )
    assert body["settings"] == dict(
        DEFAULT_SETTINGS,
        download_link="https://example.com/app-2.zip",
        force_hwid=1,
        min_hwid_length=20,
        max_hwids=3,
        hwid_reset_cooldown=0,
        session_seconds=3600,
        min_username_length=4,
        hash_check=1,
        seller_log=1,
        tamper_action="ban",
        client_rate_limit=500,
        client_rate_window=30,
        auth_rate_limit=10,
        auth_rate_window=120,
        chat_history=200,
        log_retention_days=90,
        web_loader_download="https://example.com/loader.exe",
        customer_panel=1,
    )
    assert (await seller.ok("getsettings"))["download"] == "https://example.com/app-2.zip"
    assert (await seller.ok("getsettings"))["webdownload"] == "https://example.com/loader.exe"
    cleared = await seller.ok("updatesettings", clearwebdownload=1)
    assert cleared["settings"]["web_loader_download"] is None


RANGES = [
    ("minhwid", 0, 256),
    ("maxhwids", 1, 100),
    ("hwidcooldown", 0, 31_536_000),
    ("session", 60, 604_800),
    ("minusernamelength", 1, 64),
    ("clientratelimit", 1, 1_000_000),
    ("clientratewindow", 1, 86_400),
    ("authratelimit", 1, 1_000_000),
    ("authratewindow", 1, 86_400),
    ("chathistory", 1, 1000),
    ("logretention", 1, 3650),
]


@pytest.mark.parametrize(("param", "low", "high"), RANGES)
async def test_updatesettings_enforces_each_range(seller: Seller, param: str, low: int, high: int) -> None:
    await seller.fails("updatesettings", 400, "number_out_of_range", **{param: low - 1})
    await seller.fails("updatesettings", 400, "number_out_of_range", **{param: high + 1})
    await seller.fails("updatesettings", 400, "invalid_number", **{param: "ten"})
    await seller.ok("updatesettings", **{param: low})
    await seller.ok("updatesettings", **{param: high})


async def test_updatesettings_refuses_bad_values(seller: Seller) -> None:
    await seller.fails("updatesettings", 400, "nothing_to_update")
    await seller.fails("updatesettings", 400, "invalid_boolean", enabled="maybe")
    await seller.fails("updatesettings", 400, "invalid_parameter", tamperaction="kill")
    await seller.fails("updatesettings", 400, "parameter_too_long", ver="v" * 33)
    await seller.fails("updatesettings", 400, "invalid_setting", ver="1.0\x07")
    await seller.fails("updatesettings", 400, "invalid_url", download="ftp://example.com/a.zip")
    await seller.fails("updatesettings", 400, "invalid_url", webdownload="javascript:alert(1)")
    await seller.fails(
        "updatesettings", 400, "conflicting_parameters", webdownload="https://e.com/l", clearwebdownload=1
    )
    await seller.fails("updatesettings", 400, "invalid_url", download="example.com/a.zip")
    await seller.fails("updatesettings", 400, "invalid_url", download="https://exa mple.com/")
    await seller.fails("updatesettings", 400, "parameter_too_long", download="https://e.com/" + "a" * 2040)
    await seller.fails("updatesettings", 400, "invalid_url", webhook="discord.example/hook")
    await seller.fails("updatesettings", 400, "parameter_too_long", keynotfound="m" * 301)
    # A refused call changes nothing, not even the valid parameters given with it.
    await seller.fails("updatesettings", 400, "invalid_url", ver="9", download="nope")
    assert (await seller.ok("getsettings"))["settings"] == DEFAULT_SETTINGS


async def test_updatesettings_accepts_the_longest_values(seller: Seller) -> None:
    long_url = "https://e.com/" + "a" * (2048 - len("https://e.com/"))
    body = await seller.ok("updatesettings", ver="v" * 32, download=long_url, keynotfound="m" * 300)
    assert body["settings"]["download_link"] == long_url
    assert (await seller.ok("getsettings"))["messages"]["keynotfound"] == "m" * 300


async def test_webhook_is_set_then_cleared_with_clearwebhook(seller: Seller) -> None:
    await seller.ok("updatesettings", webhook=WEBHOOK)
    # An empty parameter counts as not given: it does not clear the URL.
    await seller.fails("updatesettings", 400, "nothing_to_update", webhook="")
    assert (await seller.ok("getsettings"))["settings"]["log_webhook"] == "set"
    await seller.fails("updatesettings", 400, "conflicting_parameters", webhook=WEBHOOK, clearwebhook=1)
    body = await seller.ok("updatesettings", clearwebhook=1)
    assert body["settings"]["log_webhook"] == "unset"


async def test_cleardownload_removes_the_download_link(seller: Seller) -> None:
    await seller.ok("updatesettings", download="http://example.com/a.zip")
    await seller.fails(
        "updatesettings", 400, "conflicting_parameters", download="http://e.com/b", cleardownload=1
    )
    body = await seller.ok("updatesettings", cleardownload=1)
    assert body["settings"]["download_link"] is None
    assert (await seller.ok("getsettings"))["download"] == ""


async def test_updatesettings_sets_messages_by_keyauth_names(seller: Seller) -> None:
    await seller.ok(
        "updatesettings",
        keynotfound="That key does not exist",
        keypaused="Paused, sorry",
        appdisabled="  Closed for maintenance  ",
    )
    texts = (await seller.ok("getsettings"))["messages"]
    assert texts["keynotfound"] == "That key does not exist"
    assert texts["pausedsub"] == "Paused, sorry"  # KeyAuth's `keypaused` is our `pausedsub`
    assert texts["appdisabled"] == "  Closed for maintenance  "  # kept as given
    assert texts["usernametaken"] == catalogue.DEFAULTS["usernametaken"]


async def test_keyexpired_and_noactivesubs_name_the_same_message(seller: Seller) -> None:
    await seller.fails("updatesettings", 400, "conflicting_parameters", keyexpired="a", noactivesubs="b")
    await seller.ok("updatesettings", keyexpired="Expired", noactivesubs="Expired")
    assert (await seller.ok("getsettings"))["messages"]["noactivesubs"] == "Expired"
    await seller.ok("updatesettings", keyexpired="Gone")
    assert (await seller.ok("getsettings"))["messages"]["noactivesubs"] == "Gone"


# --- setmessage / fetchmessages ------------------------------------------------------------------


async def test_fetchmessages_lists_every_message_with_its_default_flag(seller: Seller) -> None:
    body = await seller.ok("fetchmessages")
    assert body["messages"] == [
        {"name": name, "text": text, "default": 1} for name, text in catalogue.DEFAULTS.items()
    ]


async def test_setmessage_replaces_and_empty_text_restores_the_default(seller: Seller) -> None:
    body = await seller.ok("setmessage", name="pausedApp", text=" Back soon! ")
    assert body == {
        "success": True,
        "message": "Successfully set message",
        "name": "pausedApp",
        "text": " Back soon! ",
        "default": 0,
    }
    listed = {m["name"]: m for m in (await seller.ok("fetchmessages"))["messages"]}
    assert listed["pausedApp"] == {"name": "pausedApp", "text": " Back soon! ", "default": 0}
    assert (await seller.ok("getsettings"))["messages"]["pausedApp"] == " Back soon! "

    body = await seller.ok("setmessage", name="pausedApp", text="")
    assert (body["text"], body["default"]) == (catalogue.DEFAULTS["pausedApp"], 1)
    listed = {m["name"]: m for m in (await seller.ok("fetchmessages"))["messages"]}
    assert listed["pausedApp"]["default"] == 1
    await seller.ok("setmessage", name="userbanned", text="Banned: {reason}")
    await seller.ok("setmessage", name="userbanned")  # no text at all: the default too
    assert (await seller.ok("getsettings"))["messages"]["userbanned"] == catalogue.DEFAULTS["userbanned"]


async def test_setmessage_refuses_unknown_names_and_bad_text(seller: Seller) -> None:
    body = await seller.fails("setmessage", 400, "unknown_message", name="nosuchmessage", text="x")
    assert "keynotfound" in body["message"]  # the answer lists the valid names
    await seller.fails("setmessage", 400, "unknown_message", name="PAUSEDAPP", text="x")  # exact names
    await seller.fails("setmessage", 400, "missing_parameter", text="x")
    await seller.fails("setmessage", 400, "parameter_too_long", name="keynotfound", text="x" * 301)
    await seller.fails("setmessage", 400, "invalid_message", name="keynotfound", text="bad\x01text")
    await seller.ok("setmessage", name="keynotfound", text="two\nlines")


# --- program hashes ------------------------------------------------------------------------------


async def test_addhash_fetchhashes_delhash_resethash(seller: Seller, clock: MovableClock) -> None:
    md5 = "d41d8cd98f00b204e9800998ecf8427e"
    assert (await seller.ok("addhash", hash=md5))["message"] == "Added hash successfully"
    await seller.ok("addhash", hash="ABC123")
    body = await seller.ok("fetchhashes")
    assert body["hashes"] == [
        {"hash": md5, "created": clock.now()},
        {"hash": "ABC123", "created": clock.now()},
    ]
    assert (await seller.ok("getsettings"))["hashes"] == [md5, "ABC123"]

    await seller.fails("addhash", 409, "hash_exists", hash=md5)
    assert (await seller.ok("delhash", hash=md5))["message"] == "Deleted hash successfully"
    await seller.fails("delhash", 404, "hash_not_found", hash=md5)
    await seller.ok("addhash", hash=md5)
    body = await seller.ok("resethash")
    assert (body["message"], body["deleted"]) == ("Reset hash successfully!", 2)
    assert (await seller.ok("fetchhashes"))["hashes"] == []
    assert (await seller.ok("resethash"))["deleted"] == 0


async def test_addhash_validates_the_hash(seller: Seller) -> None:
    await seller.fails("addhash", 400, "missing_parameter")
    await seller.fails("addhash", 400, "invalid_hash", hash="abc-123")
    await seller.fails("addhash", 400, "invalid_hash", hash="abc 123")
    await seller.fails("addhash", 400, "parameter_too_long", hash="a" * 129)
    await seller.ok("addhash", hash="a" * 128)
    await seller.fails("delhash", 400, "missing_parameter")


async def test_addhash_refuses_more_than_the_limit(seller: Seller, services: Services) -> None:
    for i in range(99):
        await app_settings.add_hash(services.db, seller.app_id, f"h{i}", services.clock.now())
    await seller.ok("addhash", hash="last")
    await seller.fails("addhash", 409, "too_many_hashes", hash="onemore")


# --- pauseapp / unpauseapp -----------------------------------------------------------------------


async def grant(services: Services, app_id: int, username: str, seconds: int) -> int:
    """A user holding the default subscription for `seconds` from now; its id."""
    return await make_user(services, app_id, username, days=seconds / 86400)


async def expiry_of(services: Services, user_id: int) -> int:
    value: int = await services.db.fetch_value(
        "SELECT expires_at FROM user_subscriptions WHERE user_id = ?", user_id
    )
    return value


async def test_pauseapp_and_unpauseapp_report_state_and_refuse_repeats(
    seller: Seller, clock: MovableClock
) -> None:
    await seller.fails("unpauseapp", 409, "not_paused")
    body = await seller.ok("pauseapp")
    assert body["message"] == "Subscription paused application"
    settings = (await seller.ok("getsettings"))["settings"]
    assert (settings["paused"], settings["paused_at"]) == (1, clock.now())
    await seller.fails("pauseapp", 409, "already_paused")
    clock.advance(30)
    body = await seller.ok("unpauseapp")
    assert (body["message"], body["paused_seconds"]) == ("Subscription unpaused application", 30)
    assert (await seller.ok("getsettings"))["settings"]["paused"] == 0
    await seller.fails("unpauseapp", 409, "not_paused")


async def test_unpausing_the_app_gives_back_the_paused_time(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    expired = await grant(services, seller.app_id, "bob", 5)
    clock.advance(10)
    start = clock.now()  # bob's grant ended 5 s ago
    running = await grant(services, seller.app_id, "alice", 1000)
    await seller.ok("pauseapp")
    clock.advance(500)
    await seller.ok("unpauseapp")
    assert await expiry_of(services, running) - clock.now() == 1000  # still 1000 s left
    assert await expiry_of(services, expired) == start - 5  # was over before the pause


async def test_unpausing_leaves_other_applications_and_user_paused_grants_alone(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    from tests.helpers import create_seller

    other = await create_seller(services, seller.http, owner="other", name="other")
    start = clock.now()
    theirs = await grant(services, other.app_id, "carol", 1000)
    frozen = await grant(services, seller.app_id, "dave", 1000)
    await seller.ok("pauseuser", username="dave")
    clock.advance(50)
    await seller.ok("pauseapp")
    clock.advance(200)
    await seller.ok("unpauseapp")
    assert await expiry_of(services, theirs) == start + 1000
    assert await expiry_of(services, frozen) == start + 1000  # its own unpause gives its time back


async def test_a_subscription_paused_during_the_app_pause_is_not_given_time_twice(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    start = clock.now()
    user_id = await grant(services, seller.app_id, "erin", 1000)
    await seller.ok("pauseapp")
    clock.advance(100)
    await seller.ok("pausesub", subscription="default")
    clock.advance(300)
    await seller.ok("unpauseapp")  # gives back the 100 s before the subscription's pause
    assert await expiry_of(services, user_id) == start + 1100
    clock.advance(50)
    await seller.ok("unpausesub", subscription="default")  # gives back its own 350 s
    assert await expiry_of(services, user_id) - clock.now() == 1000


# --- stats and appdetails ------------------------------------------------------------------------


async def test_stats_of_a_new_application(seller: Seller) -> None:
    body = await seller.ok("stats")
    assert body == {
        "success": True,
        "message": "Successfully retrieved statistics",
        "users": 0,
        "keys": {"unused": 0, "used": 0, "banned": 0, "total": 0},
        "sessions": {"active": 0, "online": 0},
        "subscriptions": 1,
        "globalvars": 0,
        "files": 0,
        "webhooks": 0,
        "resellers": 0,
        "managers": 0,
    }


async def test_stats_counts_what_the_application_holds(
    seller: Seller, services: Services, clock: MovableClock
) -> None:
    keys = (await seller.ok("add", expiry=1, amount=4))["keys"]
    await seller.ok("ban", key=keys[0], reason="chargeback")
    await seller.ok("adduser", user="u1", expiry=1)
    await seller.ok("adduser", user="u2", expiry=1)
    await seller.ok("assignkey", user="u1", key=keys[1])
    await seller.ok("addvar", name="motd", data="hi")
    # Sessions: one validated whose time has run out, then one validated and one not, both live.
    await seller.ok("updatesettings", session=60)
    ended, online, idle = client_of(seller), client_of(seller), client_of(seller)
    await ended.init()
    await ended.ok("login", username="u2", **{"pass": "pw2"})
    clock.advance(61)
    await online.init()
    await online.ok("login", username="u1", **{"pass": "pw1"})
    await idle.init()
    upload = await seller.http.post(
        SELLER_PATH,
        params={"sellerkey": seller.key, "type": "upload"},
        files={"file": ("a.bin", b"content", "application/octet-stream")},
    )
    assert upload.status_code == 200, upload.text
    await seller.ok("addwebhook", baseurl="https://93.184.216.34/hook", webid="w1")
    for name, role in (("res1", "Reseller"), ("res2", "Reseller"), ("man1", "Manager")):
        await seller.ok("addAccount", role=role, user=name, **{"pass": "a long password"})

    body = await seller.ok("stats")
    assert body["users"] == 2
    assert body["keys"] == {"unused": 2, "used": 1, "banned": 1, "total": 4}
    assert body["sessions"] == {"active": 2, "online": 1}
    assert (body["subscriptions"], body["globalvars"], body["files"], body["webhooks"]) == (1, 1, 1, 1)
    assert (body["resellers"], body["managers"]) == (2, 1)


async def test_appdetails_names_the_application_without_its_secret(
    seller: Seller, services: Services
) -> None:
    await seller.ok("updatesettings", ver="3.1")
    response = await seller.call("appdetails")
    body = response.json()
    assert body == {
        "success": True,
        "message": "Successfully retrieved application details",
        "appdetails": {"name": seller.name, "ownerid": seller.ownerid, "version": "3.1"},
    }
    secret = await services.db.fetch_value("SELECT secret FROM apps WHERE id = ?", seller.app_id)
    assert secret not in response.text
