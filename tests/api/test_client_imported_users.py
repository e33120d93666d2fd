"""Users imported from KeyAuth, through the client API on SQLite and PostgreSQL: the bcrypt
password KeyAuth made logs in (plain 1.0, KeyAuth 1.2 HMAC and legacy 1.0 AES libraries) and is
re-hashed with argon2id at the first success; a NULL password is set by the first login; the
HWID string KeyAuth appended to matches every HWID it contains; Forgot Password finds a user by
the SHA-1 of their address; the seller API's `verifyuser` checks the bcrypt hash too."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from licensegate.config import Settings
from licensegate.domain.apps import CreatedApp
from licensegate.services import Services
from tests.conftest import make_settings
from tests.helpers import Client, Seller, client_of, seller_of
from tests.imported import EMAIL, HWID_A, HWID_B, HWIDS, PASSWORD, insert_user, keyauth_hash
from tests.keyauth_clients import Hmac12Client, Legacy10Client
from tests.smtp import Inbox, mail_settings

pytestmark = pytest.mark.anyio

OTHER_HWID = "S-1-5-21-7777777777-8888888888-9999999999-1003"


@pytest.fixture
def settings(db_url: str, tmp_path: Path, smtp: tuple[Inbox, int]) -> Settings:
    return make_settings(
        db_url,
        tmp_path / "data",
        login_lock_failures=3,
        **mail_settings(smtp[1], "https://licenses.example.test"),
    )


@pytest.fixture
def seller(created: CreatedApp, client: httpx.AsyncClient) -> Seller:
    return seller_of(created, client)


async def imported(
    services: Services, seller: Seller, *, password: str | None = PASSWORD, **more: str
) -> int:
    """An imported user `lee` with 30 days of the default subscription."""
    stored = keyauth_hash(password) if password is not None else None
    user_id = await insert_user(
        services.db, seller.app_id, password_hash=stored, now=services.clock.now(), **more
    )
    await seller.ok("extend", user="lee", sub="default", expiry=30)
    return user_id


async def stored_hash(services: Services, user_id: int) -> str | None:
    found: str | None = await services.db.fetch_value("SELECT password_hash FROM users WHERE id = ?", user_id)
    return found


async def program(seller: Seller) -> Client:
    app = client_of(seller)
    await app.init()
    return app


def login(password: str, hwid: str | None = HWID_B, username: str = "lee") -> dict[str, str]:
    return {"username": username, "pass": password} | ({"hwid": hwid} if hwid is not None else {})


async def test_the_keyauth_password_logs_in_and_is_rehashed_with_argon2id(
    services: Services, seller: Seller
) -> None:
    user_id = await imported(services, seller)
    before = await stored_hash(services, user_id)
    assert before is not None
    assert before.startswith("$2y$10$")
    app = await program(seller)
    body = await app.ok("login", **login(PASSWORD))
    assert body["info"]["username"] == "lee"
    assert [entry["subscription"] for entry in body["info"]["subscriptions"]] == ["default"]
    after = await stored_hash(services, user_id)
    assert after is not None
    assert after.startswith("$argon2id$")
    # The same password still logs in, now checked with argon2id.
    await (await program(seller)).ok("login", **login(PASSWORD))
    assert await stored_hash(services, user_id) == after


async def test_a_wrong_password_is_refused_and_counts_toward_the_lockout(
    services: Services, seller: Seller
) -> None:
    user_id = await imported(services, seller)
    before = await stored_hash(services, user_id)
    app = await program(seller)
    for _ in range(2):
        await app.fails("login", 403, "invalid_credentials", **login("not the password"))
    assert await services.db.fetch_value("SELECT failed_logins FROM users WHERE id = ?", user_id) == 2
    assert await stored_hash(services, user_id) == before  # a refusal re-hashes nothing
    await app.fails("login", 403, "invalid_credentials", **login("still not it"))
    locked = await services.db.fetch_value("SELECT locked_until FROM users WHERE id = ?", user_id)
    assert locked is not None
    assert locked > services.clock.now()
    # Locked: from another machine and address even the right password waits (429) ...
    stranger = await program(seller)
    response = await stranger.call("login", **login(PASSWORD, hwid=OTHER_HWID))
    assert (response.status_code, response.json()["error"]) == (429, "rate_limited")
    # ... but a machine whose HWID is in the appended string is one of the user's own.
    await app.ok("login", **login(PASSWORD, hwid=HWID_A))
    assert await services.db.fetch_value("SELECT failed_logins FROM users WHERE id = ?", user_id) == 0


async def test_the_appended_hwid_string_admits_every_hwid_it_contains_and_no_other(
    services: Services, seller: Seller
) -> None:
    user_id = await imported(services, seller)
    app = await program(seller)
    await app.fails("login", 403, "hwid_mismatch", **login(PASSWORD, hwid=OTHER_HWID))
    await app.fails("login", 403, "hwid_mismatch", **login(PASSWORD, hwid=None))
    assert (await app.ok("login", **login(PASSWORD, hwid=HWID_A)))["info"]["hwid"] == HWID_A
    await (await program(seller)).ok("login", **login(PASSWORD, hwid=HWID_B))
    # Matching a part writes nothing: the string stays whole, one place, still matched by containment.
    rows = await services.db.fetch_all("SELECT hwid, appended FROM user_hwids WHERE user_id = ?", user_id)
    assert rows == [{"hwid": HWIDS, "appended": 1}]
    await (await program(seller)).fails("login", 403, "hwid_mismatch", **login(PASSWORD, hwid=OTHER_HWID))


async def test_a_device_presenting_the_whole_string_makes_it_an_ordinary_hwid(
    services: Services, seller: Seller
) -> None:
    user_id = await imported(services, seller, hwid=HWID_A)  # one machine: the string is its HWID
    await (await program(seller)).ok("login", **login(PASSWORD, hwid=HWID_A))
    rows = await services.db.fetch_all("SELECT hwid, appended FROM user_hwids WHERE user_id = ?", user_id)
    assert rows == [{"hwid": HWID_A, "appended": 0}]
    # Matched exactly from now on: a part of it no longer passes.
    await (await program(seller)).fails("login", 403, "hwid_mismatch", **login(PASSWORD, hwid=HWID_A[:30]))
    await (await program(seller)).ok("login", **login(PASSWORD, hwid=HWID_A))


async def test_resetting_the_hwid_forgets_the_appended_string(services: Services, seller: Seller) -> None:
    user_id = await imported(services, seller)
    await seller.ok("resetuser", user="lee")
    assert await services.db.fetch_value("SELECT COUNT(*) FROM user_hwids WHERE user_id = ?", user_id) == 0
    await (await program(seller)).ok("login", **login(PASSWORD, hwid=OTHER_HWID))  # binds the new machine
    hwids = await services.db.fetch_all("SELECT hwid, appended FROM user_hwids WHERE user_id = ?", user_id)
    assert hwids == [{"hwid": OTHER_HWID, "appended": 0}]


async def test_a_null_password_is_set_by_the_first_login(services: Services, seller: Seller) -> None:
    user_id = await imported(services, seller, password=None)
    assert await stored_hash(services, user_id) is None
    await (await program(seller)).ok("login", **login("chosen at first login"))
    chosen = await stored_hash(services, user_id)
    assert chosen is not None
    assert chosen.startswith("$argon2id$")
    await (await program(seller)).fails("login", 403, "invalid_credentials", **login("another one"))
    await (await program(seller)).ok("login", **login("chosen at first login"))


async def test_keyauth_libraries_log_in_with_the_imported_password(
    services: Services, seller: Seller, created: CreatedApp, client: httpx.AsyncClient
) -> None:
    user_id = await imported(services, seller)
    hmac_lib = Hmac12Client(client, created.ownerid, "app", created.secret)
    assert (await hmac_lib.init())["success"] is True
    wrong = await hmac_lib.call("login", username="lee", **{"pass": "nope"}, hwid=HWID_A)
    assert wrong["success"] is False
    done = await hmac_lib.call("login", username="lee", **{"pass": PASSWORD}, hwid=HWID_A)
    assert (done["success"], done["info"]["username"]) == (True, "lee")
    rehashed = await stored_hash(services, user_id)
    assert rehashed is not None
    assert rehashed.startswith("$argon2id$")
    legacy = Legacy10Client(client, created.ownerid, "app", created.secret)
    assert (await legacy.init())["success"] is True
    again = await legacy.call("login", username="lee", **{"pass": PASSWORD}, hwid=HWID_B)
    assert (again["success"], again["info"]["username"]) == (True, "lee")


async def test_keyauths_input_cleaning_is_honoured_for_its_hashes(services: Services, seller: Seller) -> None:
    # KeyAuth trimmed the password and stripped tags before hashing it, and before checking it.
    user_id = await imported(services, seller, password="secret")
    await (await program(seller)).fails("login", 403, "invalid_credentials", **login("secrets"))
    await (await program(seller)).ok("login", **login("  secret<b>\n"))
    assert (await stored_hash(services, user_id) or "").startswith("$argon2id$")


async def test_the_seller_apis_verifyuser_checks_and_rehashes_the_bcrypt_hash(
    services: Services, seller: Seller
) -> None:
    user_id = await imported(services, seller)
    await seller.fails("verifyuser", 403, "password_mismatch", user="lee", **{"pass": "nope"})
    assert (await stored_hash(services, user_id) or "").startswith("$2y$")
    await seller.ok("verifyuser", user="lee", **{"pass": PASSWORD})
    assert (await stored_hash(services, user_id) or "").startswith("$argon2id$")


async def test_forgot_password_finds_a_user_known_by_the_sha1_of_their_address(
    services: Services, seller: Seller, smtp: tuple[Inbox, int], client: httpx.AsyncClient
) -> None:
    user_id = await imported(services, seller)
    app = await program(seller)
    await app.ok("forgot", username="lee", email="someone.else@example.org")
    await services.mailer.drain()
    assert smtp[0].messages == []
    await app.ok("forgot", username="lee", email=" lee@EXAMPLE.org ")  # KeyAuth hashed it lower-cased
    await services.mailer.drain()
    assert [mail["To"] for mail in smtp[0].messages] == ["lee@EXAMPLE.org"]
    row = await services.db.fetch_one(
        "SELECT email, email_lower, email_sha1 FROM users WHERE id = ?", user_id
    )
    assert row == {"email": "lee@EXAMPLE.org", "email_lower": "lee@example.org", "email_sha1": None}
    text = smtp[0].messages[0].get_payload(decode=True).decode()  # type: ignore[union-attr]
    token = text.split("reset-password?token=")[1].split()[0]
    done = await client.post(
        "/reset-password", data={"token": token, "password": "new-pw", "confirm": "new-pw"}
    )
    assert done.status_code == 200
    await (await program(seller)).fails("login", 403, "invalid_credentials", **login(PASSWORD))
    await (await program(seller)).ok("login", **login("new-pw"))
    # The address is known now: normal rules (by the address, any case).
    await (await program(seller)).ok("forgot", username="lee", email=EMAIL.upper())
    await services.mailer.drain()
    assert len(smtp[0].messages) == 2


async def test_setting_an_address_ends_matching_by_the_sha1(
    services: Services, seller: Seller, smtp: tuple[Inbox, int]
) -> None:
    user_id = await imported(services, seller)
    await seller.ok("editemail", user="lee", email="new@example.org")
    assert await services.db.fetch_value("SELECT email_sha1 FROM users WHERE id = ?", user_id) is None
    app = await program(seller)
    await app.ok("forgot", username="lee", email=EMAIL)
    await app.ok("forgot", username="lee", email="new@example.org")
    await services.mailer.drain()
    assert [mail["To"] for mail in smtp[0].messages] == ["new@example.org"]
