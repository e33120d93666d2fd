"""Importing keys from CSV or JSON: a dry-run report first (what would be created, duplicates in
the file and against existing keys, invalid rows with their line), then the confirmed import."""

from __future__ import annotations

import re

import httpx
import orjson
import pytest

from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, browser, give_balance, make_keys, make_member, make_shop, text_of

pytestmark = pytest.mark.anyio
CONTENT = re.compile(r'<textarea name="content"[^>]*>([^<]*)</textarea>', re.S)


def path(shop: Shop) -> str:
    return f"/dashboard/apps/{shop.app_id}/licenses/import"


async def upload(
    dash: Dashboard, shop: Shop, name: str, content: str | bytes, **fields: str
) -> httpx.Response:
    await dash.get(path(shop))
    data = {"csrf": dash.csrf, "level": "1", "days": "30", **fields}
    raw = content.encode() if isinstance(content, str) else content
    dash.last = await dash.http.post(
        path(shop), data=data, files={"file": (name, raw)}, follow_redirects=True
    )
    return dash.last


async def confirm(dash: Dashboard, shop: Shop, report: httpx.Response) -> httpx.Response:
    found = CONTENT.search(report.text)
    assert found is not None
    import html

    data = {
        "csrf": dash.csrf,
        "confirmed": "1",
        "level": "1",
        "days": "30",
        "content": html.unescape(found.group(1)),
    }
    dash.last = await dash.http.post(
        path(shop), files={k: (None, v) for k, v in data.items()}, follow_redirects=True
    )
    return dash.last


async def keys_of(services: Services, shop: Shop) -> dict[str, tuple[str, int, str | None, str]]:
    rows = await services.db.fetch_all(
        "SELECT key, level, duration, note, generated_by FROM license_keys WHERE app_id = ?", shop.app_id
    )
    return {row["key"]: (row["level"], row["duration"], row["note"], row["generated_by"]) for row in rows}


async def test_a_csv_dry_run_reports_every_problem_then_imports_what_is_valid(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    (old,) = await make_keys(services, shop, 1)
    await dash.sign_in("alice")
    content = (
        "key,level,duration_days,note,status\n"
        "AAAA-1111,1,7,first,Used\n"
        "BBBB-2222,,,\n"
        "AAAA-1111,1,7,again,\n"
        f"{old},1,7,,\n"
        "CC CC,1,7,,\n"
        "DDDD-****,1,7,,\n"
        "EEEE-5555,9,7,,\n"
        "FFFF-6666,1,soon,,\n"
        ",1,7,,\n"
    )
    report = await upload(dash, shop, "keys.csv", content)
    assert report.status_code == 200
    said = text_of(report.text)
    assert "2 keys would be created." in said
    assert "1 repeated within the file (skipped)." in said
    assert "1 already exists in this application (skipped)." in said
    assert "5 invalid (skipped)." in said
    for line, reason in (
        ("6", "must not contain white space"),
        ("7", "cannot contain '*'"),
        ("8", "No subscription has level '9'"),
        ("9", "is not a number of days"),
        ("10", "The key is empty."),
    ):
        assert re.search(
            rf"<tr><td>{line}</td><td><code>[^<]*</code></td><td>[^<]*{re.escape(reason)}",
            report.text.replace("&#39;", "'"),
        ), line
    assert "<td>4</td><td><code>AAAA-1111</code></td><td>line 2</td>" in report.text
    assert len(await keys_of(services, shop)) == 1  # a dry run creates nothing
    done = await confirm(dash, shop, report)
    assert "Imported 2 keys." in text_of(done.text)
    keys = await keys_of(services, shop)
    assert keys["AAAA-1111"] == ("1", 7 * 86400, "first", "alice")
    assert keys["BBBB-2222"] == ("1", 30 * 86400, None, "alice")  # the form's defaults
    adds = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND action = 'add' AND actor = 'alice (dashboard)'",
        shop.app_id,
    )
    assert adds == 2


async def test_json_lists_of_keys_or_objects_and_unreadable_files(
    services: Services, dash: Dashboard
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    report = await upload(
        dash, shop, "keys.json", orjson.dumps(["J-1", {"key": "J-2", "duration_days": 2}, 5, ["x"]])
    )
    said = text_of(report.text)
    assert "2 keys would be created." in said
    assert "2 invalid (skipped)." in said
    assert "Entry" in said
    for name, content, message in (
        ("a.json", "[1, 2", "The file is not valid JSON"),
        ("a.json", '{"key": "x"}', "A JSON file holds a list"),
        ("a.csv", "code,level\nX,1\n", "naming a 'key' column"),
        ("a.csv", b"key\n\xff\xfe\n", "not UTF-8"),
        ("a.csv", "key\n" + "K\n" * 0, "holds no keys"),
        ("a.csv", "key\n" + "".join(f"K{i}\n" for i in range(1001)), "at most 1,000 keys"),
        ("a.csv", "key\n" + "K" * (129 * 1024), "larger than 128 KiB"),
    ):
        refused = await upload(dash, shop, name, content)
        assert refused.status_code == 400, name
        assert message in text_of(refused.text), message
    missing = await dash.http.post(path(shop), data={"csrf": dash.csrf}, files={"other": ("x", b"")})
    assert missing.status_code == 400


async def test_a_reseller_imports_only_levels_and_durations_it_sells_and_pays(services: Services) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    await give_balance(services, shop, "rita", week=1)
    async with browser(services) as dash:
        await dash.sign_in("rita")
        report = await upload(dash, shop, "k.csv", "key,duration_days\nR-1,7\nR-2,5\nR-3,7\n")
        said = text_of(report.text)
        assert "2 keys would be created." in said
        assert "can only give durations its balance pays for" in said
        assert "2 week (you have 1)" in said
        done = await confirm(dash, shop, report)
        assert "Imported 1 key, then stopped at line 4" in text_of(done.text)
    keys = await keys_of(services, shop)
    assert keys["R-1"][3] == "rita"
    assert "R-3" not in keys
