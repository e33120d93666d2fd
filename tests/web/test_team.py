"""The Seller team page: resellers and managers listed; creating one (which then signs in);
a reseller's balance changed all at once or not at all; its levels, a manager's areas (ticked),
e-mail, password and disabled flag changed; deleting one after a confirmation; bad input shown
next to its field with the right status; nobody but the application's owner reaching it."""

from __future__ import annotations

import pytest

from licensegate.domain import permissions, team
from licensegate.services import Services
from tests.web.pages import Dashboard, Shop, browser, give_balance, make_keys, make_member, make_shop, text_of

pytestmark = pytest.mark.anyio
NEW = "fresh password 42"


def tp(shop: Shop, rest: str = "") -> str:
    return f"/dashboard/apps/{shop.app_id}/team" + (f"/{rest}" if rest else "")


async def test_create_a_reseller_and_a_manager_that_then_sign_in(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    empty = await dash.get(tp(shop))
    assert empty.status_code == 200
    assert "No resellers yet" in text_of(empty.text)

    made = await dash.post(
        tp(shop),
        {
            "role": "reseller",
            "username": "rita",
            "email": "rita@example.com",
            "password": NEW,
            "keylevels": "1, 2",
        },
    )
    assert made.status_code == 200
    assert "The reseller rita is created" in text_of(made.text)
    assert made.url.path == tp(shop, "rita")
    row = await team.get_member(services.db, shop.app_id, "rita", "reseller")
    assert (row["email"], row["key_levels"]) == ("rita@example.com", "1,2")

    made = await dash.post(
        tp(shop),
        {
            "role": "manager",
            "username": "max",
            "password": NEW,
            "areas": ["licenses", "logs"],
            "keylevels": "9",
        },
    )
    assert made.status_code == 200
    row = await team.get_member(services.db, shop.app_id, "max", "manager")
    assert permissions.names(row["permissions"]) == ["licenses", "logs"]

    listed = text_of((await dash.get(tp(shop))).text)
    assert "rita rita@example.com 0 0 0 0 0 0 0 1, 2 Active" in listed
    assert "max — licenses, logs Active" in listed
    audit = await services.db.fetch_value(
        "SELECT COUNT(*) FROM audit_log WHERE app_id = ? AND action = 'addAccount'", shop.app_id
    )
    assert audit == 2
    async with browser(services) as member:
        await member.sign_in("max", NEW)
        home = await member.get(f"/dashboard/apps/{shop.app_id}/")
        assert home.status_code == 200
        assert (await member.http.get(tp(shop))).status_code == 403


@pytest.mark.parametrize(
    ("fields", "field", "status", "says"),
    [
        ({"username": "alice"}, "f-username-error", 409, "alice"),
        ({"email": "not an address"}, "f-email-error", 400, "not an email address"),
        ({"username": ""}, "f-username-error", 400, "Fill this in."),
        ({"password": ""}, "f-password-error", 400, "Fill this in."),
        ({"keylevels": "a-level-far-too-long"}, "f-keylevels-error", 400, "at most 12 characters"),
        ({"role": "boss"}, "role-error", 400, "Reseller"),
        ({"role": "manager"}, "areas-error", 400, "Tick at least one area."),
        ({"role": "manager", "areas": ["licenses", "bogus"]}, "areas-error", 400, "bogus"),
        ({"username": "u" * 65}, "f-username-error", 400, ""),
    ],
)
async def test_bad_input_is_shown_next_to_its_field(
    services: Services, dash: Dashboard, fields: dict[str, object], field: str, status: int, says: str
) -> None:
    shop = await make_shop(services)
    await dash.sign_in("alice")
    await dash.get(tp(shop))
    before = await services.db.fetch_value("SELECT COUNT(*) FROM accounts")
    base: dict[str, object] = {"role": "reseller", "username": "rita", "email": "", "password": NEW}
    answer = await dash.post(tp(shop), {**base, **fields})
    assert answer.status_code == status, text_of(answer.text)
    assert f'id="{field}"' in answer.text
    assert says in answer.text.split(f'id="{field}"', 1)[1].split("</p>", 1)[0]
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts") == before


async def test_balance_changes_all_at_once_or_not_at_all(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    await give_balance(services, shop, "rita", month=2)
    await dash.sign_in("alice")
    shown = await dash.get(tp(shop, "rita"))
    assert 'id="balance-month">2<' in shown.text

    added = await dash.post(tp(shop, "rita/balance"), {"day": "5", "month": "-1", "lifetime": ""})
    assert added.status_code == 200
    assert "The balance of rita is now: Day 5, Month 1." in text_of(added.text)
    assert 'id="balance-day">5<' in added.text

    short = await dash.post(tp(shop, "rita/balance"), {"day": "3", "month": "-2"})
    assert short.status_code == 409
    assert "month" in short.text.split('id="balance-error"', 1)[1].split("</div>", 1)[0]
    assert 'value="-2"' in short.text  # what was typed is kept
    nothing = await dash.post(tp(shop, "rita/balance"), {})
    assert nothing.status_code == 400
    assert "at least one duration" in text_of(nothing.text)
    word = await dash.post(tp(shop, "rita/balance"), {"week": "many"})
    assert word.status_code == 400
    assert 'id="f-week-error"' in word.text
    huge = await dash.post(tp(shop, "rita/balance"), {"year": "9999999999"})
    assert huge.status_code == 400
    assert 'id="f-year-error"' in huge.text
    row = await team.get_member(services.db, shop.app_id, "rita")
    assert team.balance(row) == {**dict.fromkeys(team.BUCKETS, 0), "day": 5, "month": 1}


async def test_edit_levels_areas_and_account(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita", levels="1")
    await make_member(services, shop, "manager", "max", permissions="licenses")
    await dash.sign_in("alice")
    page = await dash.get(tp(shop, "max"))
    assert 'id="area-licenses" name="areas" type="checkbox" value="licenses" checked' in page.text
    assert 'name="areas" type="checkbox" value="team"' not in page.text  # never a manager's

    edited = await dash.post(tp(shop, "rita/edit"), {"keylevels": "2,3", "email": "r@example.com"})
    assert "The reseller rita is changed." in text_of(edited.text)
    row = await team.get_member(services.db, shop.app_id, "rita")
    assert (row["key_levels"], row["email"], row["disabled"]) == ("2,3", "r@example.com", 0)
    bad = await dash.post(tp(shop, "rita/edit"), {"keylevels": "x" * 13})
    assert bad.status_code == 400
    assert 'id="f-keylevels-error"' in bad.text

    edited = await dash.post(
        tp(shop, "max/edit"), {"areas": ["users", "files"], "password": NEW, "disabled": "1"}
    )
    assert "The manager max is changed." in text_of(edited.text)
    row = await team.get_member(services.db, shop.app_id, "max")
    assert permissions.names(row["permissions"]) == ["users", "files"]
    assert row["disabled"] == 1
    none = await dash.post(tp(shop, "max/edit"), {})
    assert none.status_code == 400
    assert "Tick at least one area." in none.text
    email = await dash.post(tp(shop, "max/edit"), {"areas": ["users"], "email": "nope"})
    assert email.status_code == 400
    assert 'id="f-email-error"' in email.text

    await dash.post(tp(shop, "max/edit"), {"areas": ["users"]})  # enabled again
    async with browser(services) as member:
        signed = await member.sign_in("max", NEW)
        assert "Signed in" in text_of(signed.text) or signed.url.path.startswith("/dashboard")
        assert (await member.http.get(f"/dashboard/apps/{shop.app_id}/users")).status_code == 200
        assert (await member.http.get(f"/dashboard/apps/{shop.app_id}/licenses")).status_code == 403


async def test_delete_asks_first(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    await dash.sign_in("alice")
    await dash.get(tp(shop, "rita"))
    asked = await dash.post(tp(shop, "rita/delete"), {})
    assert "Delete the reseller rita?" in text_of(asked.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts WHERE username = 'rita'") == 1
    done = await dash.post(tp(shop, "rita/delete"), {"confirmed": "1"})
    assert "The reseller rita is deleted." in text_of(done.text)
    assert done.url.path == tp(shop)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts WHERE username = 'rita'") == 0
    gone = await dash.get(tp(shop, "rita"))
    assert gone.status_code == 404
    assert (await dash.post(tp(shop, "rita/delete"), {"confirmed": "1"})).status_code == 404


@pytest.mark.parametrize("who", ["bob", "manager", "reseller"])
async def test_only_the_owner_reaches_it(services: Services, who: str) -> None:
    shop = await make_shop(services)
    await make_member(services, shop, "reseller", "rita")
    if who == "bob":
        await make_shop(services, "bob", "Bob Shop")
        await make_member(services, shop, "reseller", "other", levels="1")
    else:
        await make_member(services, shop, who, who, permissions="all" if who == "manager" else None)
    before = await services.db.fetch_all("SELECT id, username, disabled FROM accounts ORDER BY id")
    async with browser(services) as dash:
        await dash.sign_in(who)
        await dash.get("/dashboard/account")
        for answer in (
            await dash.http.get(tp(shop)),
            await dash.http.get(tp(shop, "rita")),
            await dash.post(tp(shop), {"role": "reseller", "username": "x", "password": NEW}, follow=False),
            await dash.post(tp(shop, "rita/balance"), {"day": "5"}, follow=False),
            await dash.post(tp(shop, "rita/edit"), {"disabled": "1"}, follow=False),
            await dash.post(tp(shop, "rita/delete"), {"confirmed": "1"}, follow=False),
        ):
            assert answer.status_code == 403
            assert "Not allowed" in answer.text
            assert "rita" not in text_of(answer.text)
    assert await services.db.fetch_all("SELECT id, username, disabled FROM accounts ORDER BY id") == before


async def as_member(services: Services, shop: Shop, account_id: int, operation: str, **params: str) -> None:
    from licensegate.domain.permissions import identity_of_account
    from licensegate.operations.seller import Caller, invoke

    identity = await identity_of_account(services.db, shop.app_id, account_id)
    await invoke(services, Caller(identity, via="test"), operation, params)


async def test_delete_with_or_without_what_it_made(services: Services, dash: Dashboard) -> None:
    shop = await make_shop(services)
    owners = await make_keys(services, shop, 1)
    await make_member(services, shop, "reseller", "rita")
    await make_member(services, shop, "reseller", "ron")
    rita = await give_balance(services, shop, "rita", month=5)
    ron = await give_balance(services, shop, "ron", month=5)
    await as_member(services, shop, rita, "add", expiry="30", amount="2", level="1")
    await as_member(services, shop, rita, "adduser", user="rita-customer", expiry="30")
    await as_member(services, shop, ron, "add", expiry="30", amount="1", level="1")
    await dash.sign_in("alice")
    page = text_of((await dash.get(tp(shop, "rita"))).text)
    assert "It generated 2 license keys; 1 user belongs to it." in page
    assert "Also delete the license keys it generated and the users that belong to it" in page

    # Unticked: ron goes, its key stays (no longer linked to it).
    asked = await dash.post(tp(shop, "ron/delete"), {})
    assert "The keys and users it made stay." in text_of(asked.text)
    await dash.post(tp(shop, "ron/delete"), {"confirmed": "1"})
    assert await services.db.fetch_value("SELECT COUNT(*) FROM license_keys WHERE generated_by = 'ron'") == 1

    # Ticked: rita goes with its two keys and its user; nothing else is touched.
    asked = await dash.post(tp(shop, "rita/delete"), {"purge": "1"})
    assert "the license keys it generated and the users that belong to it are deleted too" in text_of(
        asked.text
    )
    done = await dash.post(tp(shop, "rita/delete"), {"purge": "1", "confirmed": "1"})
    assert "The reseller rita is deleted, with 2 license keys and 1 user it made." in text_of(done.text)
    keys = await services.db.fetch_all("SELECT key, generated_by FROM license_keys ORDER BY id")
    assert [row["key"] for row in keys] == [
        owners[0],
        *[r["key"] for r in keys if r["generated_by"] == "ron"],
    ]
    assert len(keys) == 2
    assert await services.db.fetch_value("SELECT COUNT(*) FROM users WHERE username = 'rita-customer'") == 0
    entry = await services.db.fetch_one(
        "SELECT action, after FROM audit_log WHERE action = 'deleteAccount' ORDER BY id DESC LIMIT 1"
    )
    assert entry is not None
    assert "deleted_keys" in entry["after"]
