"""In Chromium, against a real server: the Chats page. A channel created (a taken name refused
next to its field, htmx), a program's user sending a message over the client API, a post as the
developer (which the program then reads with role `developer`), the messages searched, the
user muted for a chosen time from its message and unmuted, a message deleted, the delay
changed, the channel cleared and deleted through the dialog; both pages audited."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]
HWID = "S-1-5-21-chat-browser-1001"


def client_call(http: httpx.Client, session: dict[str, str], type_: str, **params: str) -> dict[str, Any]:
    body: dict[str, Any] = http.post("/api/1.0/", params={**session, "type": type_, **params}).json()
    return body


def program_of(
    server: LiveServer, http: httpx.Client, ownerid: str, sellerkey: str, name: str = "Chat Shop"
) -> dict[str, str]:
    """A program's session of the application `name`, registered and logged in as kim."""
    key = seller_call(server, sellerkey, "add", expiry="30").json()["key"]
    base = {"ownerid": ownerid, "name": name}
    init = client_call(http, base, "init")
    session = {**base, "sessionid": init["sessionid"]}
    registered = client_call(http, session, "register", username="kim", key=key, hwid=HWID, **{"pass": "pw1"})
    assert registered["success"] is True, registered
    return session


def test_chats_page(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("chatseller", PASSWORD)
    page = tab.page
    sign_in(tab, "chatseller")
    ownerid, sellerkey = _create_app(tab, "Chat Shop")
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Chats").click()
    expect(page.get_by_role("heading", name="Chats", exact=True)).to_be_visible()
    channels = page.get_by_role("table", name="Channels")
    expect(channels).to_contain_text("No channels yet")

    page.get_by_label("Channel name").fill("general")
    page.get_by_label("Delay between a user's messages").fill("5")
    page.get_by_role("button", name="Create the channel").click()
    expect(page.get_by_role("status")).to_contain_text("The channel general is created (delay 5 seconds).")
    page.get_by_label("Channel name").fill("general")
    page.get_by_role("button", name="Create the channel").click()
    expect(page.locator("#f-name-error")).to_contain_text("already exists")
    expect(page.get_by_label("Channel name")).to_have_attribute("aria-invalid", "true")

    with httpx.Client(base_url=dashboard_server.url, timeout=30) as http:
        session = program_of(dashboard_server, http, ownerid, sellerkey)
        sent = client_call(http, session, "chatsend", channel="general", message="hello from kim")
        assert sent["success"] is True, sent
        page.goto(page.url.split("?")[0])
        page.get_by_label("Message", exact=True).fill("Maintenance at noon")
        page.get_by_label("Shown as author").fill("Support")
        page.get_by_role("button", name="Post", exact=True).click()
        expect(page.get_by_role("status")).to_contain_text(
            "Your message is posted in general as the developer."
        )
        read = client_call(http, session, "chatget", channel="general")
        assert [(m["author"], m["role"], m["message"]) for m in read["messages"]] == [
            ("kim", "user", "hello from kim"),
            ("Support", "developer", "Maintenance at noon"),
        ]

    table = page.get_by_role("table", name="Messages")
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("tbody tr").first).to_contain_text("Developer")
    tab.audit("chats")

    page.get_by_label("Message text").fill("KIM")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"search=KIM"))
    expect(table.locator("tbody tr")).to_have_count(1)

    page.get_by_role("link", name="Mute kim…").click()
    expect(page.get_by_role("heading", name="Mute a user")).to_be_visible()
    expect(page.get_by_label("Username")).to_have_value("kim")
    page.get_by_label("Another length", exact=True).check()
    page.get_by_label("How many (for another length)").fill("999999999")
    page.get_by_label("Unit (for another length)").select_option(label="days")
    page.get_by_role("button", name="Mute", exact=True).click()
    expect(page.locator("#f-amount-error")).to_be_visible()
    tab.audit("chats-mute")
    page.get_by_label("1 week").check()
    page.get_by_role("button", name="Mute", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("kim is muted for 7 days")
    mutes = page.get_by_role("table", name="Muted users")
    expect(mutes).to_contain_text("kim")
    page.get_by_role("button", name="Unmute kim").click()
    expect(page.get_by_role("status")).to_contain_text("kim is no longer muted.")
    expect(mutes).to_contain_text("Nobody is muted.")

    page.get_by_role("button", name=re.compile(r"^Delete the message of kim")).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Delete this message of kim?")
    dialog.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The message is deleted.")
    expect(table.locator("tbody tr")).to_have_count(1)

    page.get_by_label("New delay of general").fill("2")
    page.get_by_label("Unit of the delay of general").select_option(label="minutes")
    page.get_by_role("button", name="Set the delay of general").click()
    expect(page.get_by_role("status")).to_contain_text("The delay of general is now 2 minutes.")
    expect(channels).to_contain_text("2 minutes")

    page.get_by_role("button", name="Clear general").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The channel general is cleared (1 message deleted).")
    page.get_by_role("button", name="Delete general").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("The channel general is deleted.")
    expect(channels).to_contain_text("No channels yet")
    tab.check_console()
