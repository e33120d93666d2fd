"""An account's second factor: TOTP (RFC 6238, via domain/totp) and single-use recovery codes.
WebAuthn keys, the other second factor, are in domain/passkeys.

Enrolment takes two steps (a secret is shown, then confirmed by one of its codes), so a mistyped
scan never locks anyone out. A TOTP code works once: the last accepted time step is kept and a
code of that step or an earlier one is refused. The secret is sealed at rest (`secretbox`).
Recovery codes carry 80 random bits; only their SHA-256 is kept.
"""

from __future__ import annotations

import base64
import secrets

from licensegate import ids
from licensegate.domain import errorcodes, totp
from licensegate.secretbox import SecretBox
from licensegate.store import secondfactor as store
from licensegate.store.database import Database, Executor

ENROL_SECONDS = 600  # time to scan the QR code and type the first code
RECOVERY_CODES = 10
ISSUER = "licensegate"
PURPOSE = "accounts.totp_secret"  # sealed under it, pending or confirmed (moved as sealed text)


def _recovery_code() -> str:
    raw = base64.b32encode(secrets.token_bytes(10)).decode().lower()  # 80 bits, 16 characters
    return "-".join(raw[i : i + 4] for i in range(0, 16, 4))


def normalise_code(code: str) -> str:
    return "".join(ch for ch in code.lower() if ch.isalnum())


def _code_digest(code: str) -> str:
    return ids.digest("recovery:" + normalise_code(code))


async def begin_totp(
    db: Executor, box: SecretBox, account_id: int, username: str, now: int
) -> tuple[str, str]:
    """A new secret waiting for its first code: (secret, otpauth:// URI for the QR code)."""
    secret = totp.new_secret()
    await store.set_pending(db, account_id, box.seal(secret, PURPOSE), now + ENROL_SECONDS)
    return secret, totp.provisioning_uri(secret, username, ISSUER)


async def pending_totp(db: Executor, box: SecretBox, account_id: int, now: int) -> str | None:
    row = await store.totp_of(db, account_id)
    if row is None or row["totp_pending_secret"] is None or (row["totp_pending_expires"] or 0) <= now:
        return None
    return box.open(row["totp_pending_secret"], PURPOSE)


async def confirm_totp(db: Database, box: SecretBox, account_id: int, code: str, now: int) -> list[str]:
    """Turn TOTP on with the first code of the pending secret. Returns new recovery codes when the
    account had none (shown once), else an empty list."""
    row = await store.totp_of(db, account_id)
    if row is None or row["totp_pending_secret"] is None or (row["totp_pending_expires"] or 0) <= now:
        raise errorcodes.TOTP_EXPIRED()
    sealed: str = row["totp_pending_secret"]
    step = totp.matching_step(box.open(sealed, PURPOSE), code, now)
    if step is None:
        raise errorcodes.WRONG_CODE("That code is not right; check the time on your phone and try again.")
    async with db.transaction() as tx:
        if not await store.confirm(tx, account_id, sealed, step):
            raise errorcodes.TOTP_EXPIRED("Start again: the set-up of the authenticator app changed.")
        if await store.codes_left(tx, account_id) == 0:
            return await _replace_codes(tx, account_id, now)
    return []


async def _replace_codes(db: Executor, account_id: int, now: int) -> list[str]:
    codes = [_recovery_code() for _ in range(RECOVERY_CODES)]
    await store.replace_codes(db, account_id, [_code_digest(code) for code in codes], now)
    return codes


async def new_recovery_codes(db: Database, account_id: int, now: int) -> list[str]:
    """Replace every recovery code of the account (the old ones stop working)."""
    async with db.transaction() as tx:
        return await _replace_codes(tx, account_id, now)


async def ensure_recovery_codes(db: Database, account_id: int, now: int) -> list[str]:
    """Recovery codes for an account that just got its first second factor; [] when it has some."""
    async with db.transaction() as tx:
        if await store.codes_left(tx, account_id) > 0:
            return []
        return await _replace_codes(tx, account_id, now)


async def check_code(db: Executor, box: SecretBox, account_id: int, code: str, now: int) -> bool:
    """True when `code` is a current TOTP code not used before or an unused recovery code; either
    is then spent."""
    code = code.strip()
    if len(code) == totp.DIGITS and code.isdigit():
        row = await store.totp_of(db, account_id)
        if row is None or row["totp_secret"] is None:
            return False
        step = totp.matching_step(box.open(row["totp_secret"], PURPOSE), code, now)
        return step is not None and await store.use_step(db, account_id, step)
    if len(normalise_code(code)) != 16:
        return False
    return await store.use_code(db, account_id, _code_digest(code), now)


async def disable_totp(db: Executor, account_id: int) -> None:
    await store.clear_totp(db, account_id)


async def forget_recovery_codes(db: Executor, account_id: int) -> None:
    await store.delete_codes(db, account_id)


async def codes_left(db: Executor, account_id: int) -> int:
    return await store.codes_left(db, account_id)
