"""The Sessions page: client sessions listed with license keys masked, filtered by state, user and
address and keyset paged; the users online; end one, every session of a user, or all (confirmed);
who may open it."""

from __future__ import annotations

import base64
import re

import orjson
import pytest

from licensegate.domain import overview
from licensegate.services import Services
from licensegate.store import sessions as session_store
from tests.web.pages import Dashboard, Shop, browser, make_keys, make_member, make_shop, text_of
from tests.web.test_users import make_user

pytestmark = pytest.mark.anyio
ROW = re.compile(r'name="sessid" value="([^"]+)"')


def path(shop: Shop, action: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/sessions" + (f"/{action}" if action else "")


async def open_session(
    services: Services,
    shop: Shop,
    session_id: str,
    *,
    user_id: int | None = None,
    credential: str | None = None,
    ip: str = "203.0.113.7",
    hwid: str | None = None,
    started: int = 0,
    lasts: int = 3600,
) -> None:
    now = services.clock.now() - started
    await session_store.start(
        services.db, session_id=session_id, app_id=shop.app_id, ip=ip, now=now, expires_at=now + lasts
    )
    if user_id is not None:
        await services.db.execute(
            "UPDATE sessions SET user_id = ?, credential = ?, validated = 1, hwid = ? WHERE id = ?",
            user_id,
            credential,
            hwid,
            session_id,
        )


async def sessions_of(services: Services, shop: Shop) -> set[str]:
    rows = await services.db.fetch_all("SELECT id FROM sessions WHERE app_id = ?", shop.app_id)
    return {row["id"] for row in rows}


async def a_shop_with_sessions(services: Services) -> tuple[Shop, str]:
    """ann logged in twice (by name), a user named by a license key logged in with it, a session
    not logged in, an expired one; returns the shop and the key."""
    shop = await make_shop(services)
    ann = await make_user(services, shop, "ann")
    [key] = await make_keys(services, shop, 1)
    key_user = await make_user(services, shop, key)
    await services.db.execute("UPDATE users SET created_by = 'license' WHERE id = ?", key_user)
    await open_session(services, shop, "a1" * 16, user_id=ann, credential="ann", hwid="HW-ANN", started=30)
    await open_session(
        services, shop, "a2" * 16, user_id=ann, credential="ann", ip="198.51.100.2", started=20
    )
    await open_session(services, shop, "k1" * 16, user_id=key_user, credential=key, hwid="HW-KEY", started=10)
    await open_session(services, shop, "w1" * 16, started=5)
    await open_session(services, shop, "x1" * 16, user_id=ann, credential="ann", started=7200)
    return shop, key


async def test_the_list_masks_keys_filters_and_shows_who_is_online(
    services: Services, dash: Dashboard
) -> None:
    shop, key = await a_shop_with_sessions(services)
    await dash.sign_in("alice")
    listed = await dash.get(path(shop))
    assert listed.status_code == 200
    shown = text_of(listed.text)
    assert key not in listed.text
    assert key[-4:] in shown
    assert "HW-ANN" in shown
    assert "HW-KEY" in shown
    # Open sessions, newest first; the expired one is not among them.
    assert ROW.findall(listed.text) == ["w1" * 16, "k1" * 16, "a2" * 16, "a1" * 16]
    # Online now: two users logged in, only ann named (the other's name is a key).
    online = shown.split("Online now", 1)[1].split("State", 1)[0]
    assert "Users online 2" in online
    assert "ann" in online
    assert key[-4:] not in online

    def ids(page: str) -> list[str]:
        return ROW.findall(page)

    assert ids((await dash.get(path(shop), params={"state": "online"})).text) == [
        "k1" * 16,
        "a2" * 16,
        "a1" * 16,
    ]
    assert ids((await dash.get(path(shop), params={"state": "waiting"})).text) == ["w1" * 16]
    everything = await dash.get(path(shop), params={"state": "all"})
    assert "Expired" in text_of(everything.text)
    assert len(ids(everything.text)) == 4  # the expired row has no End button
    assert ids((await dash.get(path(shop), params={"user": "ann"})).text) == ["a2" * 16, "a1" * 16]
    assert ids((await dash.get(path(shop), params={"ip": "198.51.100.2"})).text) == ["a2" * 16]
    nobody = await dash.get(path(shop), params={"user": "nobody"})
    assert nobody.status_code == 200
    assert "Nothing matches these filters." in text_of(nobody.text)
    forged = [
        base64.urlsafe_b64encode(orjson.dumps(position)).decode().rstrip("=")
        for position in (["x", "a1" * 16], [1, 5], [True, "a1"])
    ]
    bad_views = [{"ip": "not-an-ip"}, {"state": "gone"}, {"sort": "ip"}, {"after": "!!"}]
    for bad in bad_views + [{"after": cursor} for cursor in forged]:
        refused = await dash.get(path(shop), params=bad)
        assert refused.status_code == 400, bad
        assert "Traceback" not in refused.text


async def test_many_online_are_counted_to_a_cap_and_named_by_user(
    services: Services, dash: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the cap the page says "more than" (the count stops reading there), and the users online
    are found from the named users, past `ONLINE_SCAN` sessions: ann still, the key's user not."""
    monkeypatch.setattr(overview, "ONLINE_CAP", 2)
    monkeypatch.setattr(session_store, "ONLINE_SCAN", 0)
    shop, key = await a_shop_with_sessions(services)
    await dash.sign_in("alice")
    shown = text_of((await dash.get(path(shop))).text)
    online = shown.split("Online now", 1)[1].split("State", 1)[0]
    assert "Users online at least 2" in online
    assert "Sessions logged in more than 2" in online
    assert "ann" in online
    assert key[-4:] not in online


async def test_keyset_pages(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    for i in range(30):
        await open_session(services, shop, f"{i:02d}" * 16, started=i % 3)
    await dash.sign_in("alice")
    page = await dash.get(path(shop), params={"size": "25"})
    seen = ROW.findall(page.text)
    assert len(seen) == 25
    for _ in range(3):  # two pages, bounded
        found = re.search(r'<a href="([^"]+)" rel="next">', page.text)
        if found is None:
            break
        page = await dash.get(found.group(1).replace("&amp;", "&"))
        seen += ROW.findall(page.text)
    assert sorted(seen) == sorted(f"{i:02d}" * 16 for i in range(30))
    back = re.search(r'<a href="([^"]+)" rel="prev">', page.text)
    assert back is not None
    assert len(ROW.findall((await dash.get(back.group(1).replace("&amp;", "&"))).text)) == 25


async def test_end_one_a_users_or_all(services: Services, dash: Dashboard) -> None:
    shop, _key = await a_shop_with_sessions(services)
    await dash.sign_in("alice")
    await dash.get(path(shop))
    ended = await dash.post(path(shop, "end"), {"sessid": "w1" * 16})
    assert "The session has ended." in text_of(ended.text)
    assert "w1" * 16 not in await sessions_of(services, shop)
    again = await dash.post(path(shop, "end"), {"sessid": "w1" * 16})
    assert again.status_code == 200
    assert "ession" in text_of(again.text).split("Sessions", 1)[1]

    empty = await dash.post(path(shop, "end-user"), {"user": ""})
    assert empty.status_code == 400
    assert re.search(r'id="f-user-error"[^>]*>\s*Fill this in', empty.text)
    unknown = await dash.post(path(shop, "end-user"), {"user": "nobody"})
    assert unknown.status_code == 404
    assert re.search(r'id="f-user-error"[^>]*>[^<]*nobody', unknown.text)
    by_user = await dash.post(path(shop, "end-user"), {"user": "ann"})
    assert "2 sessions of ann ended." in text_of(by_user.text)  # the expired one was not open
    assert await sessions_of(services, shop) == {"k1" * 16, "x1" * 16}

    asked = await dash.post(path(shop, "end-all"), {})
    assert asked.status_code == 200
    assert "1 open session end" in text_of(asked.text)
    assert await sessions_of(services, shop) == {"k1" * 16, "x1" * 16}
    done = await dash.post(path(shop, "end-all"), {"confirmed": "1"})
    assert "Every session ended (2 sessions)." in text_of(done.text)
    assert await sessions_of(services, shop) == set()
    audited = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND target = 'sessions:all'", shop.app_id
    )
    assert audited == 1


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_others_get_the_403_page_and_nothing_changes(services: Services, who: str) -> None:
    shop, key = await a_shop_with_sessions(services)
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
    else:
        await make_member(
            services, shop, who, "member", permissions="licenses,users" if who == "manager" else None
        )
    before = await sessions_of(services, shop)
    async with browser(services) as dash:
        await dash.sign_in("member" if who != "bob" else "bob")
        await dash.get("/dashboard/account")
        listed = await dash.get(path(shop), params={"state": "all"})
        assert listed.status_code == 403
        assert "Not allowed" in listed.text
        shown = text_of(listed.text)
        assert "ann" not in shown
        assert key[-4:] not in shown
        assert "HW-ANN" not in shown
        for action, fields in (
            ("end", {"sessid": "a1" * 16}),
            ("end-user", {"user": "ann"}),
            ("end-all", {}),
        ):
            refused = await dash.post(path(shop, action), {**fields, "confirmed": "1"}, follow=False)
            assert refused.status_code == 403, action
    assert await sessions_of(services, shop) == before


async def test_a_user_is_named_by_the_applications_rule_for_names(
    services: Services, dash: Dashboard
) -> None:
    """The filter and End user's sessions find a user as a client login does: by the name's NFKC
    form (fullwidth `ａｎｎ`) and, where the application ignores case, in any case."""
    from licensegate.domain import settings

    shop, _key = await a_shop_with_sessions(services)
    await dash.sign_in("alice")

    def ids(page: str) -> list[str]:
        return ROW.findall(page)

    assert ids((await dash.get(path(shop), params={"user": "\uff41\uff4e\uff4e"})).text) == [
        "a2" * 16,
        "a1" * 16,
    ]
    assert ids((await dash.get(path(shop), params={"user": "ANN"})).text) == []  # case counts by default
    await dash.get(path(shop))
    assert (await dash.post(path(shop, "end-user"), {"user": "ANN"})).status_code == 404
    await settings.update(
        services.db,
        services.secrets,
        shop.app_id,
        values={"case_insensitive_usernames": True},
        texts={},
        now=services.clock.now(),
    )
    assert ids((await dash.get(path(shop), params={"user": "ANN"})).text) == ["a2" * 16, "a1" * 16]
    ended = await dash.post(path(shop, "end-user"), {"user": "aNN"})
    assert "2 sessions of aNN ended." in text_of(ended.text)
    assert await sessions_of(services, shop) == {"k1" * 16, "w1" * 16, "x1" * 16}
