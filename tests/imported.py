"""A user as the KeyAuth importer writes one, for tests: KeyAuth's own values (a `$2y$10$`
bcrypt hash as PHP's password_hash makes it, the SHA-1 of the lower-cased address, every HWID
appended with no separator), through `store.users.insert_imported`."""

from __future__ import annotations

import hashlib

import bcrypt

from licensegate.domain import users
from licensegate.store import users as store
from licensegate.store.database import Executor

PASSWORD = "hunter2 from keyauth"
EMAIL = "Lee@Example.org"
# KeyAuth's `addhwiduser` appends: two machines' HWIDs, one string.
HWID_A = "S-1-5-21-1111111111-2222222222-3333333333-1001"
HWID_B = "S-1-5-21-4444444444-5555555555-6666666666-1002"
HWIDS = HWID_A + HWID_B


def keyauth_hash(password: str) -> str:
    """PHP's password_hash(PASSWORD_BCRYPT): `$2y$10$...` (bcrypt's `$2b$` renamed)."""
    made = bcrypt.hashpw(password.encode(), bcrypt.gensalt(10)).decode()
    return "$2y$" + made.removeprefix("$2b$")


def keyauth_email(address: str) -> str:
    return hashlib.sha1(address.lower().encode(), usedforsecurity=False).hexdigest()


async def insert_user(
    db: Executor,
    app_id: int,
    username: str = "lee",
    *,
    password_hash: str | None = None,
    email: str | None = EMAIL,
    hwid: str | None = HWIDS,
    now: int = 1_700_000_000,
) -> int:
    user_id = await store.insert_imported(
        db,
        app_id=app_id,
        username=username,
        username_fold=users.fold(username),
        password_hash=password_hash,
        email_sha1=keyauth_email(email) if email is not None else None,
        hwid=hwid,
        banned_reason=None,
        created_at=now - 86_400,
        last_login_at=now - 3_600,
        last_ip="198.51.100.20",
        hwid_reset_at=None,
        created_by="KeyAuth",
    )
    assert user_id is not None
    return user_id
