"""Invitation links for team accounts: instead of a password the owner types (and must pass on),
a link with which the new reseller or manager chooses its own.

The link is random (256 bits), works once and for three days, and only its SHA-256 is kept; a new
link for the same account replaces the earlier one, and setting the account's password otherwise
cancels it. Until it is used the account holds a random password nobody was shown, so nobody can
sign in as it. Opening the link changes nothing (a mail scanner may open it): choosing the
password does, and ends any session of the account."""

from __future__ import annotations

import secrets

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain.accounts import check_password
from licensegate.mailer import Mailer
from licensegate.passwords import Passwords
from licensegate.store import accounts as account_store
from licensegate.store import invitations as store
from licensegate.store import websessions as session_store
from licensegate.store.database import Database, Executor, Row

LIFETIME = 3 * 86400
PATH = "/dashboard/invitation"
MAX_TOKEN = 128


def unknown_password() -> str:
    """The password an invited account holds until it chooses its own: random, never shown."""
    return secrets.token_urlsafe(32)


def link(public_url: str, token: str) -> str:
    return f"{public_url}{PATH}?token={token}"


async def issue(db: Database, account_id: int, now: int) -> tuple[str, int]:
    """A new link for the account (the earlier one stops working): the token, and when it stops."""
    token = secrets.token_urlsafe(32)
    expires_at = now + LIFETIME
    async with db.transaction() as tx:
        await store.replace(tx, account_id, token_hash=ids.digest(token), now=now, expires_at=expires_at)
    return token, expires_at


def send(mailer: Mailer, to: str, *, url: str, username: str, role: str, app_name: str) -> None:
    mailer.send_later(
        to,
        f"You are invited to {app_name} on licensegate",
        f"You have a {role} account on the licensegate application '{app_name}', with the "
        f"username '{username}'.\n\n"
        f"To choose your password, open this link within three days:\n\n{url}\n\n"
        "The link works once. If you did not expect this, ignore this e-mail.\n",
        purpose="team invitation",
    )


async def check(db: Executor, token: str, now: int) -> Row | None:
    """The account (username, role, app_name) of a live link, without spending it."""
    if not token or len(token) > MAX_TOKEN:
        return None
    return await store.find(db, ids.digest(token), now)


async def pending(db: Executor, account_id: int, now: int) -> int | None:
    return await store.pending(db, account_id, now)


async def pending_in_app(db: Executor, app_id: int, now: int) -> dict[int, int]:
    """Accounts of the application's team with a live link, and when it stops working."""
    return await store.pending_in_app(db, app_id, now)


async def cancel(db: Executor, account_id: int) -> bool:
    return bool(await store.cancel(db, account_id))


async def accept(db: Database, passwords: Passwords, token: str, password: str, now: int) -> str:
    """Spend the link and give its account `password`; the account's username."""
    found = await check(db, token, now)
    if found is None:
        raise errorcodes.INVITATION_INVALID()
    check_password(password, found["username"])
    password_hash = await passwords.hash(password)  # slow on purpose: before the transaction
    async with db.transaction() as tx:
        account_id = await store.take(tx, ids.digest(token), now)
        if account_id is None:  # spent meanwhile by another request
            raise errorcodes.INVITATION_INVALID()
        await account_store.set_password(tx, account_id, password_hash)
        await session_store.delete_for_account(tx, account_id)
    username: str = found["username"]
    return username
