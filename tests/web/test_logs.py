"""The Logs and Tamper logs pages: newest first, keyset paged, searched, filtered by user or key,
address and a date range (a bad value refused with a 400 and its message next to its field),
counted, the filtered view exported, emptied through the seller operation after a
confirmation; the retention setting and the per-session quota shown; and who reaches them (the
logs area: never a reseller, a manager without it, another owner)."""

from __future__ import annotations

import re

import orjson
import pytest

from licensegate.clock import MovableClock
from licensegate.domain import logs
from licensegate.services import Services
from licensegate.store import logs as log_store
from licensegate.store import tamper as tamper_store
from tests.helpers import user_id_of
from tests.web.pages import Dashboard, Shop, browser, make_member, make_shop, seller_op, text_of

pytestmark = pytest.mark.anyio
DAY = 86400
# The clock starts at 2027-01-15 08:00 UTC.
FIRST, SECOND, THIRD = "2027-01-15", "2027-01-16", "2027-01-17"
MESSAGE = re.compile(r'<td class="wrap">([^<]*)</td>')


def lp(shop: Shop, action: str = "", slug: str = "logs") -> str:
    return f"/dashboard/apps/{shop.app_id}/{slug}" + (f"/{action}" if action else "")


async def log_line(services: Services, app_id: int, now: int, message: str, **sent: str | None) -> None:
    """A client log line (`sent`: credential, pcuser, ip), as the client API stores it."""
    fields = {"credential": None, "pcuser": None, "ip": None, **sent}
    await log_store.insert(services.db, app_id, message=message, now=now, **fields)


async def tamper_report(
    services: Services, app_id: int, now: int, reason: str, user_id: int | None = None, **sent: str | None
) -> None:
    """A tamper report (`sent`: credential, hwid, ip, details) of a session logged in as
    `user_id` (None: before any login)."""
    fields = {"credential": None, "hwid": None, "ip": None, "details": None, **sent}
    await tamper_store.insert(services.db, app_id, user_id=user_id, reason=reason, now=now, **fields)


def messages_on(page_html: str) -> list[str]:
    """The first wrapped cell of each row: a log line's message, a tamper report's reason."""
    return [m for m in MESSAGE.findall(page_html) if m]


async def three_days_of_logs(services: Services, shop: Shop, clock: MovableClock) -> None:
    """Day 1: ann's "started" and "Crash in module X"; day 2: bob's "started" (from another
    address) and a line sent before any login; day 3: ann's "closed"."""
    lines: list[list[tuple[str | None, str | None, str, str]]] = [
        [("ann", "ANN-PC", "started", "203.0.113.5"), ("ann", "ANN-PC", "Crash in module X", "203.0.113.5")],
        [("bob", "bobs-pc", "started", "198.51.100.7"), (None, None, "before login", "198.51.100.7")],
        [("ann", "ANN-PC", "closed", "203.0.113.5")],
    ]
    for day in lines:
        for credential, pcuser, message, ip in day:
            await log_line(
                services, shop.app_id, clock.now(), message, credential=credential, pcuser=pcuser, ip=ip
            )
            clock.advance(60)
        clock.advance(DAY - 60 * len(day))


async def signed_in_with_logs(services: Services, dash: Dashboard, clock: MovableClock) -> Shop:
    """Alice signed in, her application holding `three_days_of_logs`."""
    shop = await make_shop(services)
    await three_days_of_logs(services, shop, clock)
    await dash.sign_in("alice")
    return shop


async def test_newest_first_searched_and_filtered_by_user_address_and_dates(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await signed_in_with_logs(services, dash, clock)
    page = await dash.get(lp(shop))
    assert page.status_code == 200
    assert messages_on(page.text) == ["closed", "before login", "started", "Crash in module X", "started"]
    said = text_of(page.text)
    assert "(5 in all)" in said
    for part in ("ANN-PC", "203.0.113.5", "Not signed in"):
        assert part in said, part

    async def shown(**params: str) -> list[str]:
        answer = await dash.get(lp(shop), params=params)
        assert answer.status_code == 200, text_of(answer.text)
        return messages_on(answer.text)

    assert await shown(search="crash") == ["Crash in module X"]  # any case
    assert await shown(search="bobs") == ["started"]  # the PC user name is searched too
    assert await shown(search="100%") == []  # a LIKE wildcard is only a character
    assert await shown(user="ann") == ["closed", "Crash in module X", "started"]
    assert await shown(user="an") == []  # a whole value
    assert await shown(ip="198.51.100.7") == ["before login", "started"]
    assert await shown(**{"from": SECOND}) == ["closed", "before login", "started"]
    assert await shown(to=SECOND) == ["before login", "started", "Crash in module X", "started"]
    assert await shown(**{"from": SECOND, "to": SECOND}) == ["before login", "started"]
    assert await shown(user="ann", **{"from": FIRST, "to": FIRST}, search="start") == ["started"]
    oldest = await dash.get(lp(shop), params={"sort": "created_at"})
    assert messages_on(oldest.text) == ["started", "Crash in module X", "started", "before login", "closed"]
    # Each user and address links to its filter.
    assert f'href="{lp(shop)}?user=bob"' in page.text
    assert f'href="{lp(shop)}?ip=198.51.100.7"' in page.text


async def test_keyset_pages_and_the_export_of_the_filtered_view(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    for i in range(60):
        # Three lines share each second: the id breaks the tie.
        await log_line(
            services,
            shop.app_id,
            clock.now() + i // 3,
            f"line {i:02d}",
            credential="ann" if i % 2 else "bob",
            pcuser="=cmd",
        )
    await dash.sign_in("alice")
    page = await dash.get(lp(shop), params={"size": "25"})
    seen = messages_on(page.text)
    assert "(60 in all)" in text_of(page.text)
    while (found := re.search(r'<a href="([^"]+)" rel="next">', page.text)) is not None:
        page = await dash.get(found.group(1).replace("&amp;", "&"))
        seen += messages_on(page.text)
    assert seen == [f"line {i:02d}" for i in reversed(range(60))]
    back = re.search(r'<a href="([^"]+)" rel="prev">', page.text)
    assert back is not None
    previous = await dash.get(back.group(1).replace("&amp;", "&"))
    assert messages_on(previous.text) == [f"line {i:02d}" for i in reversed(range(10, 35))]

    as_json = await dash.get(lp(shop, "export"), params={"user": "ann", "format": "json"})
    assert as_json.headers["content-disposition"] == f'attachment; filename="logs-{shop.app_id}.json"'
    entries = orjson.loads(as_json.content)
    assert [e["message"] for e in entries] == [f"line {i:02d}" for i in range(1, 60, 2)]  # oldest first
    assert set(entries[0]) == {"id", "created_at", "credential", "pcuser", "message", "ip"}
    as_csv = await dash.get(lp(shop, "export"), params={"search": "line 1"})
    lines = as_csv.text.strip().splitlines()
    assert lines[0] == "id,created_at,credential,pcuser,message,ip"
    assert len(lines) == 11  # line 1 and lines 10-19
    assert ",'=cmd," in lines[1]  # a formula is not left for a spreadsheet to run


async def test_counts_stop_at_their_cap(
    services: Services, dash: Dashboard, clock: MovableClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs, "COUNT_CAP", 20)
    monkeypatch.setattr(logs, "SEARCH_COUNT_CAP", 5)
    shop = await make_shop(services)
    for i in range(30):
        await log_line(services, shop.app_id, clock.now(), f"line {i:02d}", credential="ann")
    await dash.sign_in("alice")
    said = text_of((await dash.get(lp(shop), params={"size": "25"})).text)
    assert "(more than 20)" in said
    assert "Stored now More than 20" in said
    assert "Export the log lines of this view (more than 20):" in said
    searched = text_of((await dash.get(lp(shop), params={"size": "25", "search": "line"})).text)
    assert "(more than 5)" in searched
    assert "Stored now More than 20" in searched
    few = text_of((await dash.get(lp(shop), params={"search": "line 0"})).text)
    assert "(10 in all)" in few  # a first page holding every match is its own count


async def test_a_bad_filter_is_refused_next_to_its_field(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    for params, field, said in (
        ({"from": "2027-13-01"}, "from", "The date 'From' must look like 2026-01-31."),
        ({"to": "yesterday"}, "to", "The date 'Until' must look like 2026-01-31."),
        ({"from": THIRD, "to": FIRST}, "to", "'from' must not be later than 'to'."),
        ({"ip": "not-an-ip"}, "ip", "'not-an-ip' is not an IPv4 or IPv6 address."),
        ({"user": "x" * 129}, "user", "The filter 'User or key' is too long."),
        ({"search": "a\x00b"}, "search", "The filter 'Search' holds a control character."),
    ):
        for slug in ("logs", "tamper-logs"):
            answer = await dash.get(lp(shop, slug=slug), params=params)
            assert answer.status_code == 400, (slug, params)
            assert f'<p class="error" id="flt-{field}-error">{said}</p>' in answer.text.replace("&#39;", "'")
            assert f'aria-describedby="flt-{field}-error"' in answer.text
            assert "Correct the filter marked above" in text_of(answer.text)
        assert (await dash.get(lp(shop, "export"), params=params)).status_code == 400
    assert (await dash.get(lp(shop, "export"), params={"format": "xls"})).status_code == 400
    assert (await dash.get(lp(shop), params={"sort": "message"})).status_code == 400
    shown = await dash.get(lp(shop), params={"search": "a\x00b"})
    assert 'name="search" type="search" value="ab"' in shown.text  # shown again without the NUL
    # Every list refuses a NUL in a text filter (PostgreSQL would fail on it), not only these.
    for slug, name in (("audit-log", "actor"), ("chats", "search"), ("licenses", "note")):
        refused = await dash.get(f"/dashboard/apps/{shop.app_id}/{slug}", params={name: "a\x00b"})
        assert refused.status_code == 400, slug
        assert "holds a control character" in text_of(refused.text)


async def test_tamper_reports_are_listed_searched_and_exported(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    for credential, hwid, reason, details in (
        ("ann", "HW-ANN", "debugger attached", "x64dbg"),
        (None, "HW-NOBODY", "hash mismatch", None),
        ("bob", None, "patched file", "client.dll changed"),
    ):
        await tamper_report(
            services,
            shop.app_id,
            clock.now(),
            reason,
            credential=credential,
            hwid=hwid,
            ip="192.0.2.44",
            details=details,
        )
        clock.advance(DAY)
    await dash.sign_in("alice")
    page = await dash.get(lp(shop, slug="tamper-logs"))
    said = text_of(page.text)
    assert said.index("patched file") < said.index("hash mismatch") < said.index("debugger attached")
    for part in ("HW-ANN", "x64dbg", "client.dll changed", "192.0.2.44", "(3 in all)", "only records it"):
        assert part in said, part

    async def reasons(**params: str) -> list[str]:
        answer = await dash.get(lp(shop, slug="tamper-logs"), params=params)
        assert answer.status_code == 200
        return [
            m for m in messages_on(answer.text) if m in ("patched file", "hash mismatch", "debugger attached")
        ]

    assert await reasons(search="DLL") == ["patched file"]  # the details
    assert await reasons(search="hw-nob") == ["hash mismatch"]  # the HWID
    assert await reasons(user="ann") == ["debugger attached"]
    assert await reasons(to=SECOND) == ["hash mismatch", "debugger attached"]
    exported = await dash.get(lp(shop, "export", "tamper-logs"), params={"format": "json", "search": "a"})
    assert [e["reason"] for e in orjson.loads(exported.content)] == [
        "debugger attached",
        "hash mismatch",
        "patched file",
    ]
    header = (await dash.get(lp(shop, "export", "tamper-logs"))).text.splitlines()[0]
    assert header == "id,created_at,credential,hwid,reason,details,ip"


async def test_a_report_names_its_user_and_a_ban_that_followed(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "logkeeper", permissions="logs")
    for name in ("kim", "lee"):
        await seller_op(services, shop, "adduser", user=name, expiry="30")
        await tamper_report(
            services,
            shop.app_id,
            clock.now(),
            f"debugger of {name}",
            await user_id_of(services, shop.app_id, name),
        )
    await tamper_report(services, shop.app_id, clock.now(), "before login")
    await seller_op(services, shop, "banuser", user="kim", reason="Tamper detected: debugger of kim")
    kim = await user_id_of(services, shop.app_id, "kim")
    await dash.sign_in("alice")
    page = await dash.get(lp(shop, slug="tamper-logs"))
    said = text_of(page.text)
    assert "kim Banned for tampering" in said
    assert "lee Banned" not in said
    assert f'href="/dashboard/apps/{shop.app_id}/users/{kim}"' in page.text
    async with browser(services) as manager:  # without the users area: the name, not its page
        await manager.sign_in("logkeeper")
        shown = await manager.get(lp(shop, slug="tamper-logs"))
        assert "kim Banned for tampering" in text_of(shown.text)
        assert "/users/" not in shown.text


async def test_retention_quota_and_forwarding_are_shown(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await make_shop(services)
    await seller_op(services, shop, "updatesettings", logretention="7", tamperaction="ban")
    await dash.sign_in("alice")
    said = text_of((await dash.get(lp(shop))).text)
    assert "Kept for 7 days" in said
    assert "Log lines older than 7 days are deleted" in said
    assert f"At most {services.settings.log_lines_per_session}" in said
    assert "Lines are not forwarded" in said
    page = await dash.get(lp(shop, slug="tamper-logs"))
    assert f'href="/dashboard/apps/{shop.app_id}/settings/general#f-logretention"' in page.text
    said = text_of(page.text)
    assert f"At most {services.settings.tamper_reports_per_session}" in said
    assert "bans the user" in said
    await seller_op(services, shop, "updatesettings", webhook="https://hooks.example.com/x")
    assert "Each line is also posted" in text_of((await dash.get(lp(shop))).text)


async def test_a_manager_without_settings_sees_the_retention_without_the_link(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "manager", "logkeeper", permissions="logs")
    async with browser(services) as dash:
        await dash.sign_in("logkeeper")
        page = await dash.get(lp(shop))
        assert page.status_code == 200
        assert "settings/general" not in page.text
        assert "which your account cannot change" in text_of(page.text)


@pytest.mark.parametrize("slug", ["logs", "tamper-logs"])
async def test_deleting_every_entry_asks_first(
    services: Services, dash: Dashboard, clock: MovableClock, slug: str
) -> None:
    shop = await make_shop(services)
    other = await make_shop(services, "bob", "Bob Shop")
    for app in (shop, other):
        await three_days_of_logs(services, app, clock)
        await tamper_report(services, app.app_id, clock.now(), "debugger")
    table = "client_logs" if slug == "logs" else "tamper_logs"
    before = await services.db.fetch_value(f"SELECT COUNT(*) FROM {table}")
    await dash.sign_in("alice")
    await dash.get(lp(shop, slug=slug))
    asked = await dash.post(lp(shop, "clear", slug), {})
    assert "Delete every one of the" in text_of(asked.text)
    assert await services.db.fetch_value(f"SELECT COUNT(*) FROM {table}") == before
    done = await dash.post(lp(shop, "clear", slug), {"confirmed": "1"})
    assert "is deleted" in text_of(done.text)
    assert "Stored now 0" in text_of(done.text)
    left = await services.db.fetch_value(f"SELECT COUNT(*) FROM {table} WHERE app_id = ?", shop.app_id)
    assert left == 0
    assert await services.db.fetch_value(f"SELECT COUNT(*) FROM {table}") > 0  # bob's stay
    action = "dellogs" if slug == "logs" else "deltamperlogs"
    assert await services.db.fetch_value("SELECT COUNT(*) FROM audit_log WHERE action = ?", action) == 1


async def test_the_lines_of_one_address_are_deleted_once_confirmed(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    shop = await signed_in_with_logs(services, dash, clock)
    unfiltered = await dash.get(lp(shop))
    assert "Delete the log lines from" not in text_of(unfiltered.text)
    page = await dash.get(lp(shop), params={"ip": "198.51.100.7"})
    assert "Delete the log lines from 198.51.100.7…" in text_of(page.text)
    asked = await dash.post(lp(shop, "clear-address"), {"ip": "198.51.100.7"})
    assert "Delete every log line sent from 198.51.100.7?" in text_of(asked.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM client_logs") == 5
    done = await dash.post(lp(shop, "clear-address"), {"ip": "198.51.100.7", "confirmed": "1"})
    assert "The log lines from 198.51.100.7 are deleted." in text_of(done.text)
    assert messages_on(done.text) == ["closed", "Crash in module X", "started"]
    refused = await dash.post(lp(shop, "clear-address"), {"ip": "nowhere", "confirmed": "1"})
    assert "'nowhere' is not an IPv4 or IPv6 address." in text_of(refused.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM client_logs") == 3
    assert (
        await dash.post(lp(shop, "clear-address", "tamper-logs"), {"ip": "198.51.100.7"})
    ).status_code == 404


@pytest.mark.parametrize(("who", "granted"), [("bob", ""), ("manager", "licenses"), ("reseller", "")])
async def test_who_may_not_reach_them_gets_the_403_page(
    services: Services, clock: MovableClock, who: str, granted: str
) -> None:
    shop = await make_shop(services)
    await three_days_of_logs(services, shop, clock)
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(services, shop, who, who, permissions=granted or None)
    async with browser(services) as dash:
        await dash.sign_in(who)
        await dash.get("/dashboard/account")
        for slug in ("logs", "tamper-logs"):
            answers = [
                await dash.http.get(lp(shop, slug=slug)),
                await dash.http.get(lp(shop, "export", slug)),
                await dash.post(lp(shop, "clear", slug), {"confirmed": "1"}, follow=False),
            ]
            if slug == "logs":
                bait = {"ip": "203.0.113.5", "confirmed": "1"}
                answers.append(await dash.post(lp(shop, "clear-address"), bait, follow=False))
            for answer in answers:
                assert answer.status_code == 403
                assert "Not allowed" in answer.text
                assert "Crash in module X" not in answer.text
    assert await services.db.fetch_value("SELECT COUNT(*) FROM client_logs") == 5
