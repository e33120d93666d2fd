"""Forgot Password: a single-use link, valid for an hour, sent by e-mail to the address the user
registered with; the page behind it sets a new password. A user imported from KeyAuth, whose
address only KeyAuth's SHA-1 of it tells, is matched by hashing the address given (which then
becomes their address).

The answer to a request is the same whether or not the username and address match an account,
so the operation cannot be used to learn who has an account or which address they use."""

from __future__ import annotations

import hashlib
import secrets

from licensegate import ids
from licensegate.domain import errorcodes, users
from licensegate.domain.apps import ClientApp
from licensegate.mailer import Mailer
from licensegate.passwords import Passwords
from licensegate.store import panel as panel_store
from licensegate.store import passwordreset as store
from licensegate.store import sessions as session_store
from licensegate.store import users as user_store
from licensegate.store.database import Database

LINK_SECONDS = 3600
MAX_PASSWORD = 256
PATH = "/reset-password"


def keyauth_email_sha1(address: str) -> str:
    """An address as KeyAuth keeps it (and a user imported from it is matched by): the SHA-1 hex
    of the lower-cased address."""
    return hashlib.sha1(address.lower().encode(), usedforsecurity=False).hexdigest()


async def request(
    db: Database, mailer: Mailer, app: ClientApp, *, username: str, email: str, public_url: str, now: int
) -> None:
    if not mailer.configured:
        raise errorcodes.EMAIL_NOT_CONFIGURED()
    key = users.lookup_key(username, case_insensitive=app.case_insensitive_usernames)
    address = email.strip()
    sha1 = keyauth_email_sha1(address)
    user = await store.user_with_email(db, app.id, key, address.lower(), sha1)
    if user is None:
        return
    to = user["email"]
    if to is None:  # imported from KeyAuth, matched by the SHA-1: now the address is known
        to = address
        await store.learn_email(db, user["id"], address, sha1)
    token = secrets.token_urlsafe(32)
    await store.insert(
        db, user_id=user["id"], token_hash=ids.digest(token), now=now, expires_at=now + LINK_SECONDS
    )
    link = f"{public_url}{PATH}?token={token}"
    mailer.send_later(
        to,
        f"Reset your {app.name} password",
        f"Someone asked to reset the password of the account '{user['username']}' of {app.name}.\n\n"
        f"To choose a new password, open this link within the next hour:\n\n{link}\n\n"
        "The link works once. If you did not ask for this, ignore this e-mail: "
        "your password stays as it is.\n",
        purpose="password reset",
    )


async def check_token(db: Database, token: str, now: int) -> tuple[str, str] | None:
    """(username, application name) for a usable token, else None."""
    row = await store.find_usable(db, ids.digest(token), now)
    return None if row is None else (row["username"], row["app_name"])


async def complete(db: Database, passwords: Passwords, *, token: str, password: str, now: int) -> str:
    """Set the new password and spend the token; returns the username. The user's sessions end."""
    if not password or len(password) > MAX_PASSWORD:
        raise errorcodes.INVALID_PASSWORD(maximum=MAX_PASSWORD)
    row = await store.find_usable(db, ids.digest(token), now)
    if row is None:
        raise errorcodes.INVALID_RESET_TOKEN()
    password_hash = await passwords.hash(password, queue=row["app_id"])  # before the transaction
    async with db.transaction() as tx:
        if not await store.use(tx, row["id"], now):
            raise errorcodes.INVALID_RESET_TOKEN()
        await user_store.set_password(tx, row["user_id"], password_hash)
        await store.spend_all_for_user(tx, row["user_id"], now)
        await session_store.end_for_user(tx, row["user_id"])
        await panel_store.delete_for_user(tx, row["user_id"])
    username: str = row["username"]
    return username
