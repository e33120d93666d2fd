"""Forgot Password: a single-use link, valid for an hour, sent by e-mail to the address the user
registered with; the page behind it sets a new password.

The answer to a request is the same whether or not the username and address match an account,
so the operation cannot be used to learn who has an account or which address they use."""

from __future__ import annotations

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


async def request(
    db: Database, mailer: Mailer, app: ClientApp, *, username: str, email: str, public_url: str, now: int
) -> None:
    if not mailer.configured:
        raise errorcodes.EMAIL_NOT_CONFIGURED()
    key = users.lookup_key(username, case_insensitive=app.case_insensitive_usernames)
    user = await store.user_with_email(db, app.id, key, email.strip().lower())
    if user is None:
        return
    token = secrets.token_urlsafe(32)
    await store.insert(
        db, user_id=user["id"], token_hash=ids.digest(token), now=now, expires_at=now + LINK_SECONDS
    )
    link = f"{public_url}{PATH}?token={token}"
    mailer.send_later(
        user["email"],
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
