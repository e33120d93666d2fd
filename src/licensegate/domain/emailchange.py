"""Changing a dashboard account's e-mail address: the new address counts only once the link sent
to it is opened, so a typo or an address someone else owns never becomes the account's.

The link is random (256 bits), works once and for an hour, and only its SHA-256 is kept; asking
again replaces the earlier link. The old address, when there was one, is told of the change, so a
stolen session that changed it does not go unnoticed. The caller asks for the password (and the
second step, when the account has one) before `request`."""

from __future__ import annotations

import secrets

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain.accounts import Account
from licensegate.domain.users import check_email
from licensegate.mailer import Mailer
from licensegate.store import emailchanges as store
from licensegate.store.database import Database, Executor

LINK_SECONDS = 3600
MAX_EMAIL = 254
PATH = "/dashboard/account/email/confirm"


def masked(email: str) -> str:
    """The address as a notice to another address shows it: enough to recognise, not to use."""
    local, _, domain = email.partition("@")
    return f"{local[:2]}{'*' * max(1, len(local) - 2)}@{domain}"


async def request(
    db: Database, mailer: Mailer, account: Account, *, new_email: str, public_url: str, now: int
) -> int:
    """Send the confirmation link to `new_email`; returns when the link stops working."""
    if not mailer.configured:
        raise errorcodes.EMAIL_NOT_CONFIGURED(
            "E-mail is not set up on this server, so the address cannot be confirmed."
        )
    new_email = new_email.strip()
    if len(new_email) > MAX_EMAIL:
        raise errorcodes.INVALID_EMAIL(f"An e-mail address is at most {MAX_EMAIL} characters.")
    check_email(new_email)
    if account.email is not None and new_email.lower() == account.email.lower():
        raise errorcodes.INVALID_EMAIL("That is your address already.")
    token = secrets.token_urlsafe(32)
    expires_at = now + LINK_SECONDS
    async with db.transaction() as tx:
        await store.replace(
            tx, account.id, token_hash=ids.digest(token), new_email=new_email, now=now, expires_at=expires_at
        )
    mailer.send_later(
        new_email,
        "Confirm your new licensegate e-mail address",
        f"Someone signed in to the licensegate account '{account.username}' asked to use this "
        "address for it.\n\n"
        f"To confirm, open this link within the next hour:\n\n{public_url}{PATH}?token={token}\n\n"
        "The link works once. If you did not ask for this, ignore this e-mail: nothing changes.\n",
        purpose="e-mail change",
    )
    return expires_at


async def pending(db: Executor, account_id: int, now: int) -> str | None:
    """The address a live link would set, if one was sent."""
    return await store.pending(db, account_id, now)


async def cancel(db: Executor, account_id: int) -> bool:
    return bool(await store.cancel(db, account_id))


async def check(db: Executor, token: str, now: int) -> tuple[str, str] | None:
    """(username, new address) of a live link, without spending it; None otherwise."""
    row = await store.find(db, ids.digest(token[:128]), now)
    return None if row is None else (row["username"], row["new_email"])


async def confirm(db: Database, mailer: Mailer, token: str, now: int) -> tuple[str, str] | None:
    """Spend the link and set the new address; (username, new address), or None when the link is
    unknown, used or expired. The old address is told."""
    async with db.transaction() as tx:
        change = await store.take(tx, ids.digest(token[:128]), now)
        if change is None:
            return None
        await store.set_email(tx, change["account_id"], change["new_email"])
    old = change["old_email"]
    if old and old.lower() != change["new_email"].lower():
        mailer.send_later(
            old,
            "Your licensegate e-mail address was changed",
            f"The e-mail address of the licensegate account '{change['username']}' is now "
            f"{masked(change['new_email'])}; this address no longer receives its messages.\n\n"
            "If you did not make this change, sign in, change your password, sign out every other "
            "session and set your address again on your account page, or ask the operator of "
            "this service for help.\n",
            purpose="e-mail change notice",
        )
    return change["username"], change["new_email"]
