"""Checking an end user's password: argon2id, or the bcrypt hash a user imported from KeyAuth
brings, which the first right password replaces with its argon2id hash.

Every place that checks a user's password (the client API's Login in every dialect, the customer
panel, the seller API's `verifyuser`) goes through `matches`, so an imported user signs in
everywhere with the password they had, and is on argon2id from then on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable

from licensegate.passwords import Busy, Passwords, is_bcrypt
from licensegate.store import users as store
from licensegate.store.database import Executor


async def matches(
    db: Executor, passwords: Passwords, user_id: int, stored: str, password: str, *, queue: Hashable
) -> bool:
    """Whether `password` is the user's. Both the check and the new hash run on the hashing
    threads; the hash is replaced only while it is still the bcrypt one that was checked (with
    every hashing thread busy, it is replaced at a later sign-in instead)."""
    if not await passwords.verify(stored, password, queue=queue):
        return False
    if is_bcrypt(stored):
        with contextlib.suppress(Busy):
            new_hash = await passwords.hash(password, queue=queue)
            await store.replace_password_hash(db, user_id, stored, new_hash)
    return True
