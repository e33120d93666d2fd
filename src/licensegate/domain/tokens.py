"""KeyAuth's token system: every license key and every user gets a random token when it is made.
The seller ships a customer's token in a token file with the program; with the application's
"token validation" on, `init` must present the token and the file's hash (`thash`). An unknown
token, a banned one (or one whose key or user is banned), or a `thash` other than the one bound
at the token's first use is refused with the application's messages. Tokens are found by their
SHA-256 and kept sealed (the seller lists them to ship them)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import NamedTuple

from licensegate import ids
from licensegate.domain import errorcodes
from licensegate.domain.paging import Page, PageRequest, finish
from licensegate.secretbox import SecretBox
from licensegate.store import tokens as store
from licensegate.store.database import Executor
from licensegate.store.tokens import TokenRow

SEALED = "tokens.token"
KINDS = ("license", "user")
STATES = tuple(store.STATES)  # the filters `list_page` takes
MAX_REASON = 256
Message = Callable[..., str]


def new(box: SecretBox) -> tuple[str, str]:
    """A new token: (its digest, the lookup; the token sealed, so the seller can ship it)."""
    token = secrets.token_hex(16)
    return ids.digest(token), box.seal(token, SEALED)


async def issue(
    db: Executor,
    box: SecretBox,
    *,
    app_id: int,
    kind: str,
    assigned: str,
    now: int,
    user_id: int | None = None,
    license_key_id: int | None = None,
) -> None:
    """Make the token of a new license key or user (inside the transaction that makes it)."""
    token_hash, sealed = new(box)
    await store.insert(
        db,
        app_id=app_id,
        token_hash=token_hash,
        token_sealed=sealed,
        kind=kind,
        assigned=assigned,
        user_id=user_id,
        license_key_id=license_key_id,
        now=now,
    )


async def check_at_init(
    db: Executor, app_id: int, token: str | None, thash: str | None, msg: Message, now: int
) -> None:
    if not token:
        raise errorcodes.TOKEN_REQUIRED(msg("tokenrequired"))
    if not thash:
        raise errorcodes.TOKEN_HASH_REQUIRED(msg("thashrequired"))
    row = await store.for_init(db, app_id, ids.digest(token))
    if row is None:
        raise errorcodes.TOKEN_INVALID(msg("tokeninvalid"))
    if row["any_ban"] is not None:
        raise errorcodes.TOKEN_BANNED(msg("tokenbanned", reason=row["any_ban"]))
    if row["file_hash"] is None:
        if await store.bind(db, row["id"], thash, now):
            return  # first use: this file's hash is the token's from now on
        row = await store.for_init(db, app_id, ids.digest(token))  # another first use won
        if row is None:
            raise errorcodes.TOKEN_INVALID(msg("tokeninvalid"))
    if row["file_hash"] != thash:
        raise errorcodes.TOKEN_HASH_MISMATCH(msg("tokenhashmismatch"))


async def list_page(
    db: Executor,
    box: SecretBox,
    app_id: int,
    *,
    state: str | None,
    kind: str | None,
    search: str | None,
    limit: int,
    offset: int,
) -> tuple[list[ListedToken], int]:
    """A page of tokens, oldest first, each with its text opened, and how many match."""
    rows = await store.list_page(
        db, app_id, kind=kind, state=state, search=search, limit=limit, offset=offset
    )
    total = await store.count(db, app_id, kind=kind, state=state, search=search)
    return [ListedToken(row, box.open(row["token_sealed"], SEALED)) for row in rows], total


class ListedToken(NamedTuple):
    row: TokenRow
    token: str  # its text, opened


def _hash_of(token: str) -> str:
    return ids.digest(token.strip())


def _changed(count: int, token: str) -> None:
    if count == 0:
        raise errorcodes.TOKEN_NOT_FOUND(token=token[:64])


async def ban(db: Executor, app_id: int, token: str, reason: str) -> None:
    if not reason.strip():
        raise errorcodes.MISSING_PARAMETER("A ban needs a reason.", param="reason")
    _changed(await store.set_ban(db, app_id, _hash_of(token), reason[:MAX_REASON]), token)


async def unban(db: Executor, app_id: int, token: str) -> None:
    _changed(await store.set_ban(db, app_id, _hash_of(token), None), token)


async def reset_hash(db: Executor, app_id: int, token: str) -> None:
    _changed(await store.reset_hash(db, app_id, _hash_of(token)), token)


async def delete(db: Executor, app_id: int, token: str) -> None:
    _changed(await store.delete(db, app_id, _hash_of(token)), token)


TOKEN_LENGTH = 32  # a token's text: 32 hex digits


async def browse(
    db: Executor,
    box: SecretBox,
    app_id: int,
    *,
    search: str | None,
    kind: str | None,
    state: str | None,
    request: PageRequest,
) -> Page:
    """One keyset page of tokens, each with its text opened; `search` is a whole token, or the
    key or username a token belongs to."""
    token_hash = assigned = None
    if search is not None:
        text = search.strip()
        if len(text) == TOKEN_LENGTH and all(c in "0123456789abcdefABCDEF" for c in text):
            token_hash = _hash_of(text)
        else:
            assigned = text
    rows = await store.browse(
        db, app_id, kind=kind, state=state, assigned=assigned, token_hash=token_hash, request=request
    )
    page = finish([dict(row) for row in rows], request)
    for row in page.rows:
        row["token"] = box.open(row.pop("token_sealed"), SEALED)
    return page
