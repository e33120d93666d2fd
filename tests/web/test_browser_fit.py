"""In Chromium at 1280 pixels wide, against a real server: every page of an application with
data in it (license keys, a user named by its license key, tokens, an audit log), for
the owner, a manager with every area and a reseller, fits the window (the page never scrolls
sideways) and the columns a person acts on (the last column of each list, its Status column) are
inside the window without scrolling anything."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.live import LiveServer, seller_call
from tests.web.browser import Tab, open_tab
from tests.web.test_browser_account import PASSWORD, sign_in
from tests.web.test_browser_overview import _create_app

pytestmark = [pytest.mark.browser, pytest.mark.server]
WIDTH = 1280
MEMBER_PASSWORD = "member password 42"
HWID = "S-1-5-21-fit-browser-1001"

# Every table's header cells that a person acts on or reads first: where they end on the page
# (table scroll boxes at rest), and how wide the document is.
MEASURE = """() => {
  const late = [];
  for (const table of document.querySelectorAll('main table')) {
    if (!table.offsetParent) continue;  // inside a closed <details>
    const heads = [...table.querySelectorAll('thead th')];
    if (!heads.length) continue;
    const wanted = heads.filter((th, i) => i === heads.length - 1
      || /^(Status|State|Actions|Before → after)$/.test(th.textContent.trim()));
    for (const th of wanted) {
      const box = th.getBoundingClientRect();
      if (box.right > window.innerWidth + 0.5) {
        const name = table.querySelector('caption')?.textContent.trim().split('\\n')[0] || '?';
        late.push(`${name}: "${th.textContent.trim()}" ends at ${Math.round(box.right)}`);
      }
    }
  }
  // A name or key (a cell's link or code) wraps onto at most two lines.
  const wrapped = [];
  for (const item of document.querySelectorAll('main td > a:first-child, main td > code:first-child')) {
    if (!item.offsetParent) continue;
    const range = document.createRange();
    range.selectNodeContents(item);
    const height = range.getBoundingClientRect().height;
    const lines = Math.round(height / parseFloat(getComputedStyle(item).lineHeight));
    const text = item.textContent.trim();
    if (lines > 2 && !/\\s/.test(text)) wrapped.push(`${text.slice(0, 41)} (${lines} lines)`);
  }
  return {width: document.documentElement.scrollWidth, late, wrapped};
}"""


def client_call(http: httpx.Client, params: dict[str, str], type_: str, **more: str) -> dict[str, Any]:
    body: dict[str, Any] = http.post("/api/1.0/", params={**params, "type": type_, **more}).json()
    return body


def populate(server: LiveServer, ownerid: str, sellerkey: str, name: str) -> str:
    """Keys (one banned, with a note), a user whose name is its license key, another user with a
    subscription: the rows the lists show. The banned key."""
    note = "summer sale for the forum regulars who asked twice"
    keys = seller_call(server, sellerkey, "add", expiry="30", amount="3", note=note).json()["keys"]
    banned = seller_call(server, sellerkey, "ban", key=keys[0], reason="chargeback on the card")
    assert banned.json()["success"] is True, banned.text
    with httpx.Client(base_url=server.url, timeout=30) as http:
        base = {"ownerid": ownerid, "name": name}
        init = client_call(http, base, "init")
        session = {**base, "sessionid": init["sessionid"]}
        made = client_call(http, session, "license", key=keys[1], hwid=HWID)
        assert made["success"] is True, made
    added = seller_call(server, sellerkey, "adduser", user="ann", sub="default", expiry="30")
    assert added.json()["success"] is True, added.text
    return str(keys[0])


def add_member(page: Page, role: str, username: str) -> None:
    nav = page.get_by_role("navigation", name="Application")
    nav.get_by_role("link", name="Seller team").click()
    page.get_by_role("radio", name=role).check()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(MEMBER_PASSWORD)
    if role == "Manager":
        for box in page.locator("input[name='areas']").all():
            box.check()
    page.get_by_role("button", name="Create the account").click()
    expect(page.get_by_role("heading", name=f"{username} ({role.lower()})")).to_be_visible()


def pages_of(page: Page, home: str) -> list[str]:
    """Every page the navigation offers, the detail pages its lists link to and the account."""
    page.goto(home)
    found: list[str] = (
        page.get_by_role("navigation", name="Application")
        .locator("a")
        .evaluate_all("links => links.map(a => a.href)")
    )
    for listing in ("licenses", "users"):
        url = home.rstrip("/") + "/" + listing
        if url in found:
            page.goto(url)
            details = page.locator(f"main table tbody a[href*='/{listing}/']").first
            if details.count():
                found.append(details.evaluate("a => a.href"))
    found.append(home.split("/dashboard/")[0] + "/dashboard/account")
    return [url for url in dict.fromkeys(found) if not url.endswith("/dashboard/apps")]


def check_every_page(tab: Tab, home: str) -> list[str]:
    page = tab.page
    problems: list[str] = []
    for url in pages_of(page, home):
        page.goto(url)
        page.wait_for_load_state("load")
        measured = page.evaluate(MEASURE)
        if measured["width"] > WIDTH:
            problems.append(f"{url}: the page is {measured['width']} px wide")
        problems += [f"{url}: {late}" for late in measured["late"]]
        problems += [f"{url}: wraps: {cell}" for cell in measured["wrapped"]]
    return problems


def test_every_page_fits_1280_pixels_for_every_role(tab: Tab, dashboard_server: LiveServer) -> None:
    dashboard_server.create_account("fitowner", PASSWORD)
    page = tab.page
    sign_in(tab, "fitowner")
    ownerid, sellerkey = _create_app(tab, "Fit Shop")
    home = page.url
    populate(dashboard_server, ownerid, sellerkey, "Fit Shop")
    add_member(page, "Reseller", "rosa")
    add_member(page, "Manager", "mona")
    assert page.viewport_size == {"width": WIDTH, "height": 820}

    problems = check_every_page(tab, home)
    for member in ("rosa", "mona"):
        other = open_tab(page.context.browser, dashboard_server.public_url)  # type: ignore[arg-type]
        try:
            sign_in(other, member, MEMBER_PASSWORD)
            expect(other.page.get_by_role("navigation", name="Application")).to_be_visible()
            problems += [f"{member}: {p}" for p in check_every_page(other, other.page.url)]
        finally:
            other.context.close()
    assert not problems, "\n".join(problems)


def test_a_banned_keys_token_is_shown_refused(tab: Tab, dashboard_server: LiveServer) -> None:
    """init refuses the token of a banned key (its own ban, its key's or its user's): the Tokens
    page says so, and its Banned filter finds it."""
    dashboard_server.create_account("tokenfit", PASSWORD)
    page = tab.page
    sign_in(tab, "tokenfit")
    ownerid, sellerkey = _create_app(tab, "Token Fit")
    banned = populate(dashboard_server, ownerid, sellerkey, "Token Fit")
    page.get_by_role("navigation", name="Application").get_by_role("link", name="Tokens").click()
    table = page.get_by_role("table", name=re.compile("Tokens"))
    row = table.locator("tbody tr", has=page.get_by_role("link", name=banned))
    expect(row).to_contain_text("Refused: its license key is banned (chargeback on the card)")
    expect(row).not_to_contain_text("Active")
    page.get_by_label("State").select_option("banned")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"state=banned"))
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table).to_contain_text(banned)
    page.get_by_label("State").select_option("active")
    page.get_by_role("button", name="Apply").click()
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table).not_to_contain_text(banned)
