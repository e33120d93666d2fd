"""store.users.insert_imported: a user as the KeyAuth importer writes one."""

from __future__ import annotations

import pytest

from licensegate.domain import users
from licensegate.services import Services
from licensegate.store import users as store
from tests.helpers import Seller
from tests.imported import insert_user

pytestmark = pytest.mark.anyio

BCRYPT = "$2y$10$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01"  # shape only


async def test_insert_imported_keeps_keyauths_values(services: Services, seller: Seller) -> None:
    user_id = await store.insert_imported(
        services.db,
        app_id=seller.app_id,
        username="Lee",
        username_fold=users.fold("Lee"),
        password_hash=BCRYPT,
        email_sha1="a" * 40,
        hwid="HWID-ONEHWID-TWO",
        banned_reason=None,
        created_at=1_600_000_000,
        last_login_at=1_600_000_100,
        last_ip="198.51.100.4",
        hwid_reset_at=None,
        created_by="KeyAuth",
    )
    assert user_id is not None
    row = await services.db.fetch_one(
        "SELECT username_key, password_hash, email, email_lower, email_sha1, created_at, last_login_at, "
        "last_ip, hwid_lock FROM users WHERE id = ?",
        user_id,
    )
    assert row == {
        "username_key": "Lee",
        "password_hash": BCRYPT,
        "email": None,
        "email_lower": None,
        "email_sha1": "a" * 40,
        "created_at": 1_600_000_000,
        "last_login_at": 1_600_000_100,
        "last_ip": "198.51.100.4",
        "hwid_lock": 1,
    }
    hwids = await services.db.fetch_all("SELECT hwid, appended FROM user_hwids WHERE user_id = ?", user_id)
    assert hwids == [{"hwid": "HWID-ONEHWID-TWO", "appended": 1}]
    again = await store.insert_imported(
        services.db,
        app_id=seller.app_id,
        username="Lee",
        username_fold=users.fold("Lee"),
        password_hash=None,
        email_sha1=None,
        hwid=None,
        banned_reason=None,
        created_at=1_600_000_000,
        last_login_at=None,
        last_ip=None,
        hwid_reset_at=None,
        created_by="KeyAuth",
    )
    assert again is None  # the name is taken: nothing written


async def test_a_rehash_never_overwrites_a_password_changed_meanwhile(
    services: Services, seller: Seller
) -> None:
    user_id = await insert_user(services.db, seller.app_id, "kim", password_hash=BCRYPT)
    # The seller sets a new password while a login's re-hash of the old one is under way.
    await store.set_password(services.db, user_id, "$argon2id$set-by-the-seller")
    assert await store.replace_password_hash(services.db, user_id, BCRYPT, "$argon2id$old-password") == 0
    stored = await services.db.fetch_value("SELECT password_hash FROM users WHERE id = ?", user_id)
    assert stored == "$argon2id$set-by-the-seller"
    assert await store.replace_password_hash(services.db, user_id, stored, "$argon2id$next") == 1
