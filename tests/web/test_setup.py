"""First run: the one-time setup link, claiming an owner `create-app` made, and sign-up."""

from __future__ import annotations

import pytest

from licensegate.clock import MovableClock
from licensegate.domain import setuplinks
from licensegate.domain.apps import create_application
from licensegate.services import Services
from tests.web.pages import PASSWORD, Dashboard, browser, text_of

pytestmark = pytest.mark.anyio


def _owner_form(token: str, username: str = "founder", **extra: str) -> dict[str, str]:
    return {
        "token": token,
        "username": username,
        "email": "",
        "password": PASSWORD,
        "confirm": PASSWORD,
        **extra,
    }


async def test_a_setup_link_makes_one_owner_and_signs_it_in(services: Services, dash: Dashboard) -> None:
    token = await setuplinks.issue(services.db, services.clock.now())
    page = await dash.get(setuplinks.PATH, params={"token": token})
    assert "Create the owner account" in text_of(page.text)
    done = await dash.post(setuplinks.PATH, _owner_form(token))
    assert done.url.path == "/dashboard/apps"
    assert "Welcome, founder." in text_of(done.text)
    row = await services.db.fetch_one(
        "SELECT role, ownerid, password_hash FROM accounts WHERE username = 'founder'"
    )
    assert row is not None
    assert row["role"] == "seller"
    assert len(row["ownerid"]) == 10
    assert row["password_hash"].startswith("$argon2id$")
    # The link works once.
    async with browser(services) as other:
        again = await other.get(setuplinks.PATH, params={"token": token})
        assert again.status_code == 400
        assert "expired or was used already" in text_of(again.text)


async def test_the_link_is_spent_in_the_transaction_that_makes_the_account(services: Services) -> None:
    """Two people posting the same link at once: the link's conditional update lets one through;
    the other's account is never made (its transaction is undone)."""
    from licensegate.domain import accounts
    from licensegate.domain.errors import Forbidden

    token = await setuplinks.issue(services.db, services.clock.now())
    now = services.clock.now()
    first = await accounts.create_owner(
        services.db,
        services.passwords,
        username="one",
        password=PASSWORD,
        email=None,
        now=now,
        guard=setuplinks.spend(token, now),
    )
    assert first.username == "one"
    with pytest.raises(Forbidden):
        await accounts.create_owner(
            services.db,
            services.passwords,
            username="two",
            password=PASSWORD,
            email=None,
            now=now,
            guard=setuplinks.spend(token, now),
        )
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts") == 1


async def test_a_setup_link_expires_after_an_hour(
    services: Services, dash: Dashboard, clock: MovableClock
) -> None:
    token = await setuplinks.issue(services.db, clock.now())
    await dash.get(setuplinks.PATH, params={"token": token})
    clock.advance(setuplinks.LIFETIME)
    page = await dash.post(setuplinks.PATH, _owner_form(token))
    assert page.status_code == 400
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts") == 0


async def test_a_refused_form_leaves_the_link_usable(services: Services, dash: Dashboard) -> None:
    token = await setuplinks.issue(services.db, services.clock.now())
    await dash.get(setuplinks.PATH, params={"token": token})
    differ = await dash.post(setuplinks.PATH, _owner_form(token, confirm="something else"))
    assert differ.status_code == 400
    assert "The two passwords differ." in text_of(differ.text)
    short = await dash.post(setuplinks.PATH, _owner_form(token, password="short", confirm="short"))
    assert short.status_code == 400
    assert "8 to 256 characters" in text_of(short.text)
    assert 'value="founder"' in short.text  # what was typed stays
    ok = await dash.post(setuplinks.PATH, _owner_form(token))
    assert ok.url.path == "/dashboard/apps"


async def test_bad_tokens_open_nothing(dash: Dashboard) -> None:
    for token in ("", "nope", "x" * 500):
        page = await dash.get(setuplinks.PATH, params={"token": token})
        assert page.status_code == 400


async def test_the_setup_link_can_claim_an_owner_create_app_made(services: Services, dash: Dashboard) -> None:
    created = await create_application(
        services.db, services.secrets, owner="legacy", name="App", now=services.clock.now()
    )
    token = await setuplinks.issue(services.db, services.clock.now())
    await dash.get(setuplinks.PATH, params={"token": token})
    done = await dash.post(setuplinks.PATH, _owner_form(token, "legacy"))
    assert done.url.path == "/dashboard/apps"
    assert "App" in text_of(done.text)
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts") == 1
    assert created.ownerid in (await dash.get(f"/dashboard/apps/{created.app_id}/integration")).text


async def test_the_setup_link_cannot_take_over_an_account_with_a_password(
    services: Services, dash: Dashboard
) -> None:
    from tests.web.pages import make_owner

    await make_owner(services, "taken")
    token = await setuplinks.issue(services.db, services.clock.now())
    await dash.get(setuplinks.PATH, params={"token": token})
    page = await dash.post(
        setuplinks.PATH, _owner_form(token, "taken", password="another password", confirm="another password")
    )
    assert page.status_code == 409
    assert "already taken" in text_of(page.text)
    assert await setuplinks.is_live(services.db, token, services.clock.now())


async def test_sign_up_is_off_unless_configured(services: Services, dash: Dashboard) -> None:
    assert (await dash.get("/dashboard/signup")).status_code == 404
    signin = await dash.get("/dashboard/signin")
    assert "/dashboard/signup" not in signin.text
    page = await dash.post("/dashboard/signup", {"username": "x", "password": PASSWORD, "confirm": PASSWORD})
    assert page.status_code == 404
    assert await services.db.fetch_value("SELECT COUNT(*) FROM accounts") == 0


async def test_sign_up_when_configured_makes_an_owner(services: Services) -> None:
    services.settings = services.settings.with_overrides(dashboard_signup="on")
    async with browser(services) as dash:
        assert "/dashboard/signup" in (await dash.get("/dashboard/signin")).text
        await dash.get("/dashboard/signup")
        done = await dash.post(
            "/dashboard/signup", {"username": "newbie", "password": PASSWORD, "confirm": PASSWORD}
        )
        assert done.url.path == "/dashboard/apps"
        await dash.get("/dashboard/signup")
        taken = await dash.post(
            "/dashboard/signup", {"username": "newbie", "password": PASSWORD, "confirm": PASSWORD}
        )
        assert taken.status_code == 409
