"""Look-alike usernames (issue 10 item 17): names are stored in NFKC, invisible and bidi control
characters and names mixing Latin, Cyrillic and Greek letters are refused (400), and an
application may ask for usernames that compare case-insensitively."""

from __future__ import annotations

import asyncio

import pytest
from alembic import command

from licensegate.services import Services
from licensegate.store import migrate
from tests.helpers import Client, Seller, client_of

pytestmark = pytest.mark.anyio

INVISIBLE = [
    ("ad\u200bmin", "U+200B"),  # zero-width space
    ("ad\u200dmin", "U+200D"),  # zero-width joiner
    ("\u202enimda", "U+202E"),  # right-to-left override
    ("admin\u2066", "U+2066"),  # left-to-right isolate
    ("ad\u00admin", "U+00AD"),  # soft hyphen
    ("admin\ufe0f", "U+FE0F"),  # variation selector
    ("ad\u3164min", "U+3164"),  # Hangul filler
]


async def session(seller: Seller) -> Client:
    client = client_of(seller)
    await client.init()
    return client


async def register(seller: Seller, client: Client, username: str) -> dict[str, object]:
    key = (await seller.ok("add", expiry=1))["key"]
    return await client.ok("register", username=username, key=key, **{"pass": "pw"})


async def refuse_register(seller: Seller, client: Client, username: str, status: int, error: str) -> None:
    key = (await seller.ok("add", expiry=1))["key"]
    await client.fails("register", status, error, username=username, key=key, **{"pass": "pw"})


@pytest.mark.parametrize(("name", "codepoint"), INVISIBLE)
async def test_invisible_and_bidi_characters_are_refused_everywhere_a_name_is_chosen(
    seller: Seller, name: str, codepoint: str
) -> None:
    client = await session(seller)
    await refuse_register(seller, client, name, 400, "username_invisible_character")
    body = await seller.fails(
        "adduser", 400, "username_invisible_character", user=name, sub="default", expiry=1
    )
    assert codepoint in body["message"]
    await seller.ok("adduser", user="plain", sub="default", expiry=1)
    await seller.fails(
        "editusername", 400, "username_invisible_character", currentUsername="plain", newUsername=name
    )
    await register(seller, client, "mine")
    await client.fails("changeUsername", 400, "username_invisible_character", newUsername=name)


async def test_names_mixing_latin_and_cyrillic_or_greek_are_refused(seller: Seller) -> None:
    client = await session(seller)
    await refuse_register(seller, client, "\u0430dmin", 400, "username_mixed_scripts")  # Cyrillic а
    await refuse_register(seller, client, "p\u03b1ypal", 400, "username_mixed_scripts")  # Greek α
    await seller.fails("adduser", 400, "username_mixed_scripts", user="\u0430dmin", sub="default", expiry=1)
    await register(seller, client, "\u0430\u0434\u043c\u0438\u043d")  # all Cyrillic: a name of its own
    await register(seller, await session(seller), "k\u00f6nig_2")  # one script, digits and marks


async def test_compatibility_forms_are_stored_in_nfkc_and_cannot_twin_a_name(seller: Seller) -> None:
    client = await session(seller)
    info = (await register(seller, client, "\uff4b\uff49\uff4d"))["info"]  # fullwidth ｋｉｍ
    assert info["username"] == "kim"  # type: ignore[index]
    await refuse_register(seller, await session(seller), "kim", 409, "username_taken")
    await seller.fails(
        "adduser", 409, "user_exists", user="\uff4bim", sub="default", expiry=1
    )  # fullwidth ｋ
    await seller.ok("adduser", user="Kim", sub="default", expiry=1)  # another case: another user by default
    again = await session(seller)
    await again.ok("login", username="\uff4b\uff49\uff4d", **{"pass": "pw"})  # found by its NFKC form
    assert (await seller.ok("userexists", user="kim"))["success"] is True


async def test_case_insensitive_usernames_on_request(seller: Seller, services: Services) -> None:
    assert (await seller.ok("getsettings"))["settings"]["case_insensitive_usernames"] == 0
    await register(seller, await session(seller), "Kim")
    await register(seller, await session(seller), "kim")
    refused = await seller.fails(
        "updatesettings", 409, "usernames_differ_only_in_case", caseinsensitiveusernames=1
    )
    assert "Kim, kim" in refused["message"]
    await seller.ok("deluser", user="kim")
    await seller.ok("updatesettings", caseinsensitiveusernames=1)
    assert (await seller.ok("getsettings"))["settings"]["case_insensitive_usernames"] == 1

    await refuse_register(seller, await session(seller), "KIM", 409, "username_taken")
    await seller.fails("adduser", 409, "user_exists", user="kIM", sub="default", expiry=1)
    for spelling in ("kim", "KIM", "\uff2b\uff29\uff2d"):  # any case, fullwidth too
        client = await session(seller)
        info = (await client.ok("login", username=spelling, **{"pass": "pw"}))["info"]
        assert info["username"] == "Kim"
    await seller.ok("adduser", user="Lee", sub="default", expiry=1)
    await seller.fails("editusername", 409, "user_exists", currentUsername="Lee", newUsername="KIM")
    await seller.ok("editusername", currentUsername="Lee", newUsername="LEE")  # its own name, recased
    mine = await session(seller)
    await mine.ok("login", username="kim", **{"pass": "pw"})
    await mine.fails("changeUsername", 409, "username_taken", newUsername="lee")
    await mine.ok("changeUsername", newUsername="KIM")

    await seller.ok("updatesettings", caseinsensitiveusernames=0)
    await register(seller, await session(seller), "kim")  # exact comparison again
    await session(seller)
    keys = await services.db.fetch_all(
        "SELECT username, username_key FROM users WHERE app_id = ? ORDER BY username", seller.app_id
    )
    assert [(row["username"], row["username_key"]) for row in keys] == [
        ("KIM", "KIM"),
        ("LEE", "LEE"),
        ("kim", "kim"),
    ]


async def test_a_name_stored_before_normalisation_still_logs_in(seller: Seller, services: Services) -> None:
    """Rows the migration kept as they were (their key is their exact name) stay reachable."""
    await seller.ok("adduser", user="placeholder", sub="default", expiry=1, **{"pass": "pw"})
    # Raw: a row as a version before the normalisation stored it.
    await services.db.execute(
        "UPDATE users SET username = ?, username_key = ? WHERE username = 'placeholder'", "\uff41b", "\uff41b"
    )
    client = await session(seller)
    assert (await client.ok("login", username="\uff41b", **{"pass": "pw"}))["info"]["username"] == "\uff41b"
    await register(seller, await session(seller), "ab")  # its NFKC form is a name of its own


# --- the migration keeps existing users as they are -----------------------------------------


def migrate_to(url: str, revision: str) -> None:
    engine = migrate._engine(url)
    try:
        with engine.begin() as conn:
            cfg = migrate._config()
            cfg.attributes["connection"] = conn
            if revision == "head":
                command.upgrade(cfg, revision)
            else:
                command.downgrade(cfg, revision)
    finally:
        engine.dispose()


async def test_the_upgrade_keys_existing_users_by_their_names(
    seller: Seller, services: Services, db_url: str
) -> None:
    for name in ("alice", "Alice", "bob"):
        await seller.ok("adduser", user=name, sub="default", expiry=1, **{"pass": "pw"})
    # Raw: a row as a version before the normalisation stored it.
    await services.db.execute("UPDATE users SET username = ? WHERE username = 'bob'", "\uff42ob")
    await asyncio.to_thread(migrate_to, db_url, "0007")
    await asyncio.to_thread(migrate_to, db_url, "head")
    rows = await services.db.fetch_all("SELECT username, username_fold, username_key FROM users ORDER BY id")
    assert [tuple(row.values()) for row in rows] == [
        ("alice", "alice", "alice"),
        ("Alice", "alice", "Alice"),
        ("\uff42ob", "bob", "\uff42ob"),
    ]
    for spelling in ("alice", "Alice", "\uff42ob"):
        await (await session(seller)).ok("login", username=spelling, **{"pass": "pw"})
