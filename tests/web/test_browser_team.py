"""In Chromium, against a real server: the Seller team page. A reseller and a manager created
(a refusal next to its field first), the reseller's balance changed (a shortfall refused beside
the form), its levels changed, the manager's areas ticked, the reseller deleted after the dialog
(with what it made); then the manager signs in and its navigation offers only its areas. Every
page audited for accessibility."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.live import LiveServer
from tests.web.browser import Tab, open_tab
from tests.web.test_browser_account import sign_in
from tests.web.test_browser_seller_pages import open_shop

pytestmark = [pytest.mark.browser, pytest.mark.server]
MEMBER_PASSWORD = "member password 42"


def test_seller_team_page(tab: Tab, dashboard_server: LiveServer) -> None:
    page = tab.page
    open_shop(tab, dashboard_server, "teamowner", "Team Shop")
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Seller team").click()
    expect(page.get_by_role("heading", name="Seller team", exact=True)).to_be_visible()
    expect(page.get_by_role("table", name=re.compile("Resellers"))).to_contain_text("No resellers yet")

    # A taken username is refused beside its field (through htmx).
    page.get_by_label("Username").fill("teamowner")
    page.get_by_label("Password").fill(MEMBER_PASSWORD)
    page.get_by_role("button", name="Create the account").click()
    expect(page.locator("#f-username-error")).to_contain_text("teamowner")
    tab.audit("team-refused")

    page.get_by_label("Username").fill("rita")
    page.get_by_label("E-mail (optional)").fill("rita@example.com")
    page.get_by_label("Password").fill(MEMBER_PASSWORD)
    page.get_by_label("Levels it may sell (resellers) (optional)").fill("1,2")
    page.get_by_role("button", name="Create the account").click()
    expect(page.get_by_role("heading", name="rita (reseller)")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("The reseller rita is created")

    page.get_by_label("Day (optional)").fill("5")
    page.get_by_label("Month (optional)").fill("2")
    page.get_by_role("button", name="Change the balance").click()
    expect(page.locator("#balance-day")).to_have_text("5")
    expect(page.locator("#balance-month")).to_have_text("2")
    page.get_by_label("Month (optional)").fill("-3")
    page.get_by_role("button", name="Change the balance").click()
    expect(page.locator("#balance-error")).to_contain_text("month")
    expect(page.locator("#balance-month")).to_have_text("2")
    tab.audit("team-reseller")
    page.get_by_label("Levels it may sell (optional)", exact=True).fill("2")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("The reseller rita is changed.")
    expect(page.get_by_label("Levels it may sell (optional)", exact=True)).to_have_value("2")

    page.get_by_role("link", name="← Seller team").click()
    page.get_by_role("radio", name="Manager").check()
    page.get_by_label("Username").fill("max")
    page.get_by_label("Password").fill(MEMBER_PASSWORD)
    page.get_by_label("licenses (license keys)").check()
    page.get_by_role("button", name="Create the account").click()
    expect(page.get_by_role("heading", name="max (manager)")).to_be_visible()
    page.get_by_label("users (users)").check()
    page.get_by_label("licenses (license keys)").uncheck()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("The manager max is changed.")
    expect(page.get_by_label("users (users)")).to_be_checked()
    tab.audit("team-manager")

    page.get_by_role("link", name="← Seller team").click()
    table = page.get_by_role("table", name=re.compile("Resellers"))
    expect(table).to_contain_text("rita@example.com")
    expect(page.get_by_role("table", name=re.compile("Managers"))).to_contain_text("users")
    tab.audit("team")
    table.get_by_role("link", name="rita").click()
    expect(page.get_by_role("region", name="Delete")).to_contain_text("It generated 0 license keys")
    page.get_by_label("Also delete the license keys it generated and the users that belong to it").check()
    page.get_by_role("button", name="Delete rita").click()
    page.get_by_role("dialog").get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text(
        "The reseller rita is deleted, with 0 license keys and 0 users it made."
    )
    expect(table).not_to_contain_text("rita")
    tab.check_console()

    # The manager sees only its area in the navigation, and the team page refuses it.
    member = open_tab(page.context.browser, dashboard_server.public_url, shots=tab.shots)  # type: ignore[arg-type]
    try:
        sign_in(member, "max", MEMBER_PASSWORD)
        member.page.goto(page.url.split("/team")[0] + "/")
        links = member.page.get_by_role("navigation", name="Application")
        expect(links.get_by_role("link", name="Users")).to_be_visible()
        offered = set(links.get_by_role("link").all_inner_texts())
        assert not offered & {"Licenses", "Seller team", "Seller keys", "Audit log", "Settings"}
        member.audit("manager-view")  # the manager's view: only the pages its areas allow
        answer = member.page.goto(page.url)
        assert answer is not None
        assert answer.status == 403
        member.audit("team-refused-manager")
    finally:
        member.context.close()


def test_invite_a_manager(tab: Tab, dashboard_server: LiveServer) -> None:
    """Invited instead of given a password: the link shown once (no SMTP on this server), opened
    in another browser where the manager chooses its password and signs in; used, it is refused."""
    page = tab.page
    open_shop(tab, dashboard_server, "inviter", "Invite Shop")
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Seller team").click()
    page.get_by_role("radio", name="Manager").check()
    page.get_by_label("Username").fill("ivy")
    page.get_by_label("E-mail (optional)").fill("ivy@example.com")
    page.get_by_role("radio", name="Chosen by it through an invitation link").check()
    page.get_by_label("licenses (license keys)").check()
    page.get_by_role("button", name="Create the account").click()
    expect(page.get_by_role("heading", name="Invitation link for ivy")).to_be_visible()
    expect(page.locator("main")).to_contain_text("E-mail is not set up on this server")
    link = page.locator("#invitation-link").inner_text().strip()
    assert "/dashboard/invitation?token=" in link
    tab.audit("team-invited")
    page.get_by_role("link", name="Go to ivy").click()
    expect(page.get_by_role("region", name="Invitation link")).to_contain_text("waiting to be used")
    page.get_by_role("link", name="← Seller team").click()
    expect(page.get_by_role("table", name=re.compile("Managers"))).to_contain_text(
        "Invited: its link works until"
    )
    tab.check_console()

    ivy = open_tab(page.context.browser, dashboard_server.public_url, shots=tab.shots)  # type: ignore[arg-type]
    try:
        ivy.page.goto(link)
        expect(ivy.page.get_by_role("heading", name="Choose your password")).to_be_visible()
        expect(ivy.page.locator("main")).to_contain_text("the manager ivy of the application Invite Shop")
        ivy.page.get_by_label("Password", exact=True).fill(MEMBER_PASSWORD)
        ivy.page.get_by_label("Password again").fill("something else 42")
        ivy.page.get_by_role("button", name="Set my password").click()
        expect(ivy.page.locator("#f-confirm-error")).to_contain_text("The two passwords differ.")
        ivy.audit("team-invitation")
        ivy.page.get_by_label("Password", exact=True).fill(MEMBER_PASSWORD)
        ivy.page.get_by_label("Password again").fill(MEMBER_PASSWORD)
        ivy.page.get_by_role("button", name="Set my password").click()
        expect(ivy.page.get_by_role("status")).to_contain_text("Your password is set, ivy")
        sign_in(ivy, "ivy", MEMBER_PASSWORD)
        offered = ivy.page.get_by_role("navigation", name="Application").get_by_role("link")
        expect(offered.filter(has_text="Licenses")).to_be_visible()
        again = ivy.page.goto(link)
        assert again is not None
        assert again.status == 400
        expect(ivy.page.get_by_role("heading", name="Link expired")).to_be_visible()
        ivy.check_console()
    finally:
        ivy.context.close()
