"""In Chromium at 1280 pixels wide, against a real server (issue 20's dashboard points):

- every page of an application with data in it (license keys, a user named by its license key,
  tokens, an audit log, team members), for the owner, a manager with every area and a reseller,
  and every page those pages link to, fits the window (the page never scrolls sideways); the
  columns a person acts on (each list's last column, Status, "Before → after") are inside it; a
  key or name takes two lines at most; no introduction touches the card below it;
- a banned key's token reads as refused; the reseller's balance form is laid out;
- the menu is grouped by task, the account page keeps the frame and names browsers;
- a new team member is reached by post/redirect/get, its seller key shown once;
- security changes in a row do not lock the owner out.
"""

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
  // An introduction never touches the card, filters or list below it.
  const touching = [];
  for (const block of document.querySelectorAll('main > p, main > .hint')) {
    const next = block.nextElementSibling;
    const below = '.card, .filters, .table-wrap, section, details';
    if (!next || !block.offsetParent || !next.matches(below)) continue;
    const gap = next.getBoundingClientRect().top - block.getBoundingClientRect().bottom;
    const start = block.textContent.trim().slice(0, 40);
    if (gap < 8) touching.push(`"${start}" is ${Math.round(gap)} px from the next`);
  }
  return {width: document.documentElement.scrollWidth, late, wrapped, touching};
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
    limited = seller_call(
        server, sellerkey, "setratelimit", user="ann", name="api", requests="100", window="60"
    )
    assert limited.json()["success"] is True, limited.text
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


def links_in(page: Page, home: str, where: str) -> list[str]:
    """The application's pages `where` links to on this page (no downloads; without the query or
    fragment, so one page is not checked once per filter)."""
    found: list[str] = page.locator(where).evaluate_all(
        "links => links.filter(a => !a.hasAttribute('download')).map(a => a.origin + a.pathname)"
    )
    return [url for url in found if url.startswith(home.rstrip("/")) and "/export" not in url]


def check_every_page(tab: Tab, home: str) -> list[str]:
    """Every page the navigation offers (the account page included), and every page of the
    application those pages link to (a key, a user, a team member, the create and edit forms)."""
    page = tab.page
    page.goto(home)
    first = [
        *links_in(page, home, "nav.side a"),
        home.split("/dashboard/")[0] + "/dashboard/account",
        home.split("/dashboard/")[0] + "/dashboard/apps",
    ]
    queue, seen = [(url, 0) for url in dict.fromkeys(first)], set(first)
    problems: list[str] = []
    while queue:
        url, depth = queue.pop(0)
        page.goto(url)
        page.wait_for_load_state("load")
        measured = page.evaluate(MEASURE)
        if measured["width"] > WIDTH:
            problems.append(f"{url}: the page is {measured['width']} px wide")
        problems += [f"{url}: {late}" for late in measured["late"]]
        problems += [f"{url}: wraps: {cell}" for cell in measured["wrapped"]]
        problems += [f"{url}: {text}" for text in measured["touching"]]
        if depth == 0:
            for found in links_in(page, home, "main a[href]"):
                if found not in seen:
                    seen.add(found)
                    queue.append((found, 1))
    assert len(seen) >= 8, seen  # a reseller has the fewest: its menu, its pages, the account
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


LAYOUT_OF_AMOUNTS = """() => {
  const card = document.querySelector('.amounts').closest('.card').getBoundingClientRect();
  const boxes = [...document.querySelectorAll('.amounts .field')].map(field => {
    const label = field.querySelector('label').getBoundingClientRect();
    const input = field.querySelector('input').getBoundingClientRect();
    return {name: field.querySelector('label').textContent.trim(),
            label: [label.left, label.top, label.right, label.bottom],
            input: [input.left, input.top, input.right, input.bottom]};
  });
  return {card: [card.left, card.top, card.right, card.bottom], boxes};
}"""


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def test_the_balance_form_is_laid_out(tab: Tab, dashboard_server: LiveServer) -> None:
    """The owner's "Add to the balance" form of a reseller: no label or input overlaps another,
    each label above its input, every input inside the card, the inputs in line."""
    dashboard_server.create_account("balancefit", PASSWORD)
    page = tab.page
    sign_in(tab, "balancefit")
    _create_app(tab, "Balance Fit")
    add_member(page, "Reseller", "rhea")
    expect(page.get_by_role("heading", name="Add to the balance")).to_be_visible()
    for width in (WIDTH, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        laid: dict[str, Any] = page.evaluate(LAYOUT_OF_AMOUNTS)
        boxes, card = laid["boxes"], laid["card"]
        assert [box["name"] for box in boxes][-1].startswith("Lifetime")
        everything = [box[part] for box in boxes for part in ("label", "input")]
        for i, one in enumerate(everything):
            for other in everything[i + 1 :]:
                assert not overlap(one, other), (width, one, other, boxes)
        for box in boxes:
            assert box["label"][3] <= box["input"][1] + 0.5, (width, box)
            for part in ("input", "label"):
                assert card[0] <= box[part][0], (width, box, card)
                assert box[part][2] <= card[2], (width, box, card)
        rows: dict[float, list[float]] = {}
        for box in boxes:
            rows.setdefault(round(box["input"][1]), []).append(box["input"][3])
        assert all(len(set(map(round, bottoms))) == 1 for bottoms in rows.values()), (width, boxes)
    page.set_viewport_size({"width": WIDTH, "height": 820})
    tab.audit("team-reseller-balance")


def test_the_menu_is_grouped_by_task_and_the_account_page_keeps_it(
    tab: Tab, dashboard_server: LiveServer
) -> None:
    dashboard_server.create_account("menufit", PASSWORD)
    page = tab.page
    sign_in(tab, "menufit")
    _create_app(tab, "Menu Fit")
    nav = page.get_by_role("navigation", name="Application")
    groups = nav.locator(".nav-group").all_inner_texts()
    assert [g.lower() for g in groups[:2]] == ["customers", "your program"], groups
    links = nav.get_by_role("link").all_inner_texts()
    assert links[:4] == ["Overview", "Licenses", "Users", "Subscriptions"], links
    customers = nav.get_by_role("list", name="Customers")
    expect(customers.get_by_role("link", name="Licenses")).to_be_visible()
    expect(customers.get_by_role("link", name="Users")).to_be_visible()
    assert links[-1] == "All applications"

    # The account page: the same frame, with the way back to the application.
    page.get_by_role("link", name="menufit").click()
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    frame = page.get_by_role("navigation", name="Dashboard")
    expect(frame.get_by_role("link", name="Your account")).to_have_attribute("aria-current", "page")
    frame.get_by_role("link", name="Menu Fit").click()
    expect(page.get_by_role("navigation", name="Application")).to_contain_text("Menu Fit")

    # Sessions and sign-ins name the browser and its system, not the raw header.
    page.get_by_role("link", name="menufit").click()
    sessions = page.get_by_role("table", name=re.compile("Sessions|Signed in", re.I)).first
    expect(sessions).to_contain_text(re.compile(r"Chrome \d+ on Linux"))
    expect(page.locator("main")).not_to_contain_text("Mozilla/5.0")
    tab.audit("account")


def test_a_new_team_member_is_redirected_to_and_its_seller_key_shown_once(
    tab: Tab, dashboard_server: LiveServer
) -> None:
    """Creating a reseller under /team lands on its own address (post/redirect/get, through htmx);
    the seller key addAccount made acting as it is shown there once and works."""
    dashboard_server.create_account("teamfit", PASSWORD)
    page = tab.page
    sign_in(tab, "teamfit")
    _create_app(tab, "Team Fit")
    add_member(page, "Reseller", "remy")
    expect(page).to_have_url(re.compile(r"/team/remy$"))
    key = page.locator("#sellerkey").inner_text()
    assert re.fullmatch(r"[0-9a-f]{32}", key)
    expect(page.get_by_role("heading", name="Its seller key (shown once)")).to_be_visible()
    tab.audit("team-member-created")
    assert seller_call(dashboard_server, key, "setseller").json()["success"] is True
    page.reload()  # a GET of the member's page: nothing posted again, the key not shown again
    expect(page.get_by_role("heading", name="remy (reseller)")).to_be_visible()
    expect(page.locator("#sellerkey")).to_have_count(0)
    expect(page.get_by_role("alert")).to_have_count(0)


def test_security_changes_in_a_row_do_not_lock_the_owner_out(tab: Tab, dashboard_server: LiveServer) -> None:
    """Confirming the password on the account page counts against the sign-in budget (10 in 15
    minutes) only when it is wrong: twelve password changes in a row, then the owner still signs
    in; wrong passwords are still counted, and refused once the budget is spent."""
    dashboard_server.create_account("lockfit", PASSWORD)
    page = tab.page
    sign_in(tab, "lockfit")
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()
    passwords = [PASSWORD, "another long passphrase"]
    for turn in range(12):
        tab.goto("/dashboard/account")
        page.get_by_label("Current password").fill(passwords[turn % 2])
        page.get_by_label("New password", exact=True).fill(passwords[(turn + 1) % 2])
        page.get_by_label("New password again").fill(passwords[(turn + 1) % 2])
        page.get_by_role("button", name="Change password").click()
        expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    page.get_by_role("button", name="Sign out").click()
    sign_in(tab, "lockfit", PASSWORD)
    expect(page.get_by_role("heading", name="Applications")).to_be_visible()

    # Wrong confirmations are still counted: within one window at most 10 are checked (split
    # between the workers when their counters are their own), so 22 in a row (even across one
    # window's end) reach a refusal that comes before any check.
    refusals: list[str] = []
    while len(refusals) < 22 and not any("Too many" in text for text in refusals):
        tab.goto("/dashboard/account")
        page.get_by_label("Current password").fill("not my password at all")
        page.get_by_label("New password", exact=True).fill(passwords[1])
        page.get_by_label("New password again").fill(passwords[1])
        page.get_by_role("button", name="Change password").click()
        refusals.append(page.locator("#flash").inner_text())
    assert "Too many sign-in attempts" in refusals[-1], refusals
    assert all("The password is wrong" in text for text in refusals[:-1]), refusals
