"""The Settings page: each tab saves through `updatesettings`, a refused value is shown next to its
field with a 4xx, client messages are previewed and saved through `setmessage` (and are then what
the client API answers), and nobody without the settings area reaches any of it."""

from __future__ import annotations

import re

import httpx
import pytest

from licensegate.domain import messages as catalogue
from licensegate.services import Services
from tests.helpers import CLIENT_PATH
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio


def path(shop: Shop, tab: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/settings" + (f"/{tab}" if tab else "")


async def current(services: Services, shop: Shop) -> dict[str, object]:
    settings: dict[str, object] = (await seller_op(services, shop, "getsettings"))["settings"]
    return settings


def error_next_to(page_html: str, field: str) -> str:
    """The error paragraph of one field (its id is the field's id + '-error')."""
    found = re.search(rf'<p class="error" id="f-{re.escape(field)}-error">([^<]*)</p>', page_html)
    assert found, f"no error next to {field}"
    return found.group(1)


async def client_answer(dash: Dashboard, shop: Shop, **params: str) -> dict[str, object]:
    query = {"ownerid": shop.ownerid, "name": "Shop", **params}
    answer: httpx.Response = await dash.http.post(CLIENT_PATH, params=query)
    body: dict[str, object] = answer.json()
    return body


async def test_every_tab_shows_its_fields_and_saves(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    general = await dash.get(path(shop))
    assert general.status_code == 200
    assert 'aria-current="page">General</a>' in general.text
    assert 'id="f-enabled" name="enabled" type="checkbox" value="1" checked' in general.text
    for label in ("Application enabled", "Current version", "Download link", "Log forwarding URL"):
        assert label in general.text

    saved = await dash.post(
        path(shop, "general"),
        {
            "enabled": "1",
            "ver": "2.5",
            "download": "https://example.com/app.zip",
            "sellerlogs": "1",
            "logretention": "45",
            "tamperaction": "ban",
            "webhook": "https://discord.example/api/webhooks/1/t0k",
        },
    )
    assert saved.status_code == 200
    assert "General settings saved." in text_of(saved.text)
    now = await current(services, shop)
    assert (now["version"], now["download_link"], now["log_retention_days"]) == (
        "2.5",
        "https://example.com/app.zip",
        45,
    )
    assert (now["tamper_action"], now["seller_log"], now["log_webhook"]) == ("ban", 1, "set")
    assert "t0k" not in saved.text  # the forwarding URL carries a token: never shown back

    # An unticked checkbox turns its setting off; a URL is removed with its own checkbox.
    await dash.post(
        path(shop, "general"),
        {
            "ver": "2.5",
            "logretention": "45",
            "tamperaction": "log",
            "cleardownload": "1",
            "clearwebhook": "1",
        },
    )
    now = await current(services, shop)
    assert (now["enabled"], now["seller_log"], now["download_link"], now["log_webhook"]) == (
        0,
        0,
        None,
        "unset",
    )

    devices = await dash.post(
        path(shop, "devices"),
        {"hwidcheck": "1", "forcehwid": "1", "minhwid": "12", "maxhwids": "3", "hwidcooldown": "3600"},
    )
    assert "Devices (HWID) settings saved." in text_of(devices.text)
    now = await current(services, shop)
    assert (now["hwid_lock"], now["force_hwid"], now["min_hwid_length"], now["max_hwids"]) == (1, 1, 12, 3)
    assert now["hwid_reset_cooldown"] == 3600

    signin = await dash.post(
        path(shop, "sign-in"),
        {
            "session": "7200",
            "minusernamelength": "4",
            "caseinsensitiveusernames": "1",
            "clientratelimit": "500",
            "clientratewindow": "60",
            "authratelimit": "9",
            "authratewindow": "300",
            "chathistory": "70",
        },
    )
    assert "Sign-in and limits settings saved." in text_of(signin.text)
    now = await current(services, shop)
    assert (now["session_seconds"], now["min_username_length"], now["case_insensitive_usernames"]) == (
        7200,
        4,
        1,
    )
    assert (now["auth_rate_limit"], now["chat_history"], now["hash_check"]) == (9, 70, 0)
    audited = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND action = 'updatesettings'", shop.app_id
    )
    assert audited == 4


@pytest.mark.parametrize(
    ("tab", "fields", "wrong", "says"),
    [
        (
            "general",
            {"ver": "1.0", "logretention": "30", "tamperaction": "log"},
            {"download": "ftp://x/a.zip"},
            "http",
        ),
        (
            "general",
            {"ver": "1.0", "logretention": "30", "tamperaction": "log"},
            {"webhook": "no url"},
            "space",
        ),
        ("general", {"ver": "1.0", "tamperaction": "log"}, {"logretention": "0"}, "at least 1"),
        ("general", {"ver": "1.0", "logretention": "30"}, {"tamperaction": "explode"}, "log, ban"),
        ("general", {"logretention": "30", "tamperaction": "log"}, {"ver": "v" * 33}, "32"),
        ("devices", {"minhwid": "0", "hwidcooldown": "0"}, {"maxhwids": "101"}, "100"),
        ("devices", {"maxhwids": "1", "hwidcooldown": "0"}, {"minhwid": "twelve"}, "number"),
        (
            "sign-in",
            {
                "clientratelimit": "5",
                "clientratewindow": "5",
                "authratelimit": "5",
                "authratewindow": "5",
                "chathistory": "5",
                "minusernamelength": "1",
            },
            {"session": "59"},
            "60",
        ),
    ],
)
async def test_a_refused_value_is_shown_next_to_its_field_and_nothing_changes(
    services: Services, dash: Dashboard, tab: str, fields: dict[str, str], wrong: dict[str, str], says: str
) -> None:
    shop = await make_shop(services)
    before = await current(services, shop)
    await dash.sign_in("alice")
    await dash.get(path(shop, tab))
    refused = await dash.post(path(shop, tab), {**fields, **wrong})
    assert refused.status_code == 400
    ((name, value),) = wrong.items()
    message = error_next_to(refused.text, name)
    assert says in message or says in message.replace("…", "")
    assert 'aria-invalid="true"' in refused.text
    if name not in ("webhook", "tamperaction"):  # never shown back; not an option
        assert f'value="{value}"' in refused.text or f">{value}<" in refused.text  # what was typed is kept
    assert await current(services, shop) == before


async def test_twin_usernames_refuse_case_insensitivity_next_to_its_checkbox(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "adduser", user="Ann", expiry="30")
    await seller_op(services, shop, "adduser", user="ann", expiry="30")
    await dash.sign_in("alice")
    await dash.get(path(shop, "sign-in"))
    fields = {
        "session": "3600",
        "minusernamelength": "1",
        "clientratelimit": "5",
        "clientratewindow": "5",
        "authratelimit": "5",
        "authratewindow": "5",
        "chathistory": "5",
        "caseinsensitiveusernames": "1",
    }
    refused = await dash.post(path(shop, "sign-in"), fields)
    assert refused.status_code == 409
    assert "Ann" in error_next_to(refused.text, "caseinsensitiveusernames")


async def test_a_changed_message_is_previewed_then_what_the_client_api_answers(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    page = await dash.get(path(shop, "messages"))
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "A program receives:" in shown
    assert '{"success": false, "message": "Invalid license key"}' in shown
    assert "Your license is banned: chargeback" in shown  # {reason} filled with an example

    previewed = await dash.post(
        path(shop, "messages"), {"keynotfound": "No such key, ask {reason}", "do": "preview"}
    )
    assert previewed.status_code == 200
    assert '"message": "No such key, ask {reason}"' in text_of(previewed.text)
    assert (await seller_op(services, shop, "getsettings"))["messages"][
        "keynotfound"
    ] == "Invalid license key"

    texts = {
        name: text for name, text in (await seller_op(services, shop, "getsettings"))["messages"].items()
    }
    texts["keynotfound"] = "That key is not one of ours"
    saved = await dash.post(path(shop, "messages"), {**texts, "do": "save"})
    assert "1 message saved." in text_of(saved.text)
    assert "(default)" in saved.text
    await dash.get(path(shop, "messages"))
    init = await client_answer(dash, shop, type="init", ver="1.0")
    assert init["success"] is True
    refused = await client_answer(
        dash, shop, type="license", key="NOPE-NOPE", sessionid=str(init["sessionid"])
    )
    assert refused["message"] == "That key is not one of ours"

    # Back to the default by emptying it.
    texts["keynotfound"] = ""
    await dash.post(path(shop, "messages"), {**texts, "do": "save"})
    assert (await seller_op(services, shop, "getsettings"))["messages"][
        "keynotfound"
    ] == "Invalid license key"
    setmessages = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND action = 'setmessage'", shop.app_id
    )
    assert setmessages == 2


async def test_a_refused_message_is_shown_next_to_it_and_none_is_saved(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get(path(shop, "messages"))
    refused = await dash.post(
        path(shop, "messages"),
        {
            "keynotfound": "fine text",
            "keyused": "x" * (catalogue.MAX_LENGTH + 1),
            "userbanned": "bell\x07",
            "do": "save",
        },
    )
    assert refused.status_code == 400
    assert str(catalogue.MAX_LENGTH) in error_next_to(refused.text, "keyused")
    assert error_next_to(refused.text, "userbanned")
    messages = (await seller_op(services, shop, "getsettings"))["messages"]
    assert messages["keynotfound"] == catalogue.DEFAULTS["keynotfound"]


async def test_an_unknown_tab_is_not_found(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    assert (await dash.get(path(shop, "nope"))).status_code == 404
    await dash.get(path(shop))
    assert (await dash.post(path(shop, "nope"), {"ver": "3"})).status_code == 404


async def test_a_manager_with_the_settings_area_may_use_it(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "meg", permissions="settings")
    async with browser(services) as dash:
        await dash.sign_in("meg")
        page = await dash.get(path(shop))
        assert page.status_code == 200
        assert "Integration</a> page" not in page.text  # the secret's page is the owner's
        saved = await dash.post(
            path(shop, "general"), {"enabled": "1", "ver": "7.0", "logretention": "30", "tamperaction": "log"}
        )
        assert "General settings saved." in text_of(saved.text)
    assert (await current(services, shop))["version"] == "7.0"


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_others_get_the_403_page_and_nothing_changes(services: Services, who: str) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "updatesettings", ver="Secret-9.9", keynotfound="Zanzibar text")
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(
            services, shop, who, "member", permissions="licenses,users" if who == "manager" else None
        )
    before = await seller_op(services, shop, "getsettings")
    async with browser(services) as dash:
        await dash.sign_in("member" if who != "bob" else "bob")
        await dash.get("/dashboard/account")
        for tab in ("", "general", "devices", "messages"):
            shown = await dash.get(path(shop, tab))
            assert shown.status_code == 403
            assert "Secret-9.9" not in shown.text
            assert "Zanzibar text" not in shown.text
        await dash.get("/dashboard/account")
        for tab, fields in (
            ("general", {"ver": "hacked", "enabled": "0"}),
            ("messages", {"keynotfound": "hacked"}),
        ):
            refused = await dash.post(path(shop, tab), {**fields, "do": "save"}, follow=False)
            assert refused.status_code == 403, tab
    assert await seller_op(services, shop, "getsettings") == before
