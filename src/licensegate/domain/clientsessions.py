"""Client sessions: `init` opens one (after the application's gatekeeping), a login validates it,
`logout` ends it. A session id is 128 bits from the CSPRNG; a session lives the application's
session length from its start, however active it is."""

from __future__ import annotations

from collections.abc import Callable

from licensegate import ids
from licensegate.domain.clientapp import ClientApp
from licensegate.domain.errors import Forbidden
from licensegate.store import hashes as hash_store
from licensegate.store import sessions as store
from licensegate.store import tamper as tamper_store
from licensegate.store.database import Executor

Message = Callable[..., str]

# KeyAuth clients compare the message with this literal to start their auto-update.
VERSION_MISMATCH = "invalidver"
# fetchOnline shows at most this many characters of a credential (a license key is a secret).
VISIBLE_CREDENTIAL = 10
ONLINE_LIMIT = 1000


async def start(
    db: Executor,
    app: ClientApp,
    *,
    ip: str,
    version: str | None,
    program_hash: str | None,
    msg: Message,
    now: int,
) -> str:
    if app.paused:
        raise Forbidden(msg("pausedApp"), "app_paused")
    if version is not None and version != app.version:
        raise Forbidden(VERSION_MISMATCH, "version_mismatch", {"download": app.download_link or ""})
    if app.hash_check and (program_hash is None or not await hash_store.contains(db, app.id, program_hash)):
        await tamper_store.insert(
            db,
            app.id,
            user_id=None,
            credential=None,
            hwid=None,
            ip=ip,
            reason="program hash mismatch",
            details=f"hash sent: {program_hash or '(none)'}",
            now=now,
        )
        raise Forbidden(msg("hashcheckfail"), "hash_mismatch")
    session_id = ids.session_id()
    await store.start(
        db, session_id=session_id, app_id=app.id, ip=ip, now=now, expires_at=now + app.session_seconds
    )
    return session_id


def mask(credential: str) -> str:
    """Enough of a name to recognise it; a license key used as a name stays secret."""
    if len(credential) <= VISIBLE_CREDENTIAL:
        return credential
    return credential[:VISIBLE_CREDENTIAL] + "*" * (len(credential) - VISIBLE_CREDENTIAL)


async def online(db: Executor, app: ClientApp, now: int) -> list[dict[str, str]]:
    credentials = await store.online_credentials(db, app.id, now, ONLINE_LIMIT)
    return [{"credential": mask(c)} for c in credentials]


async def end(db: Executor, session_id: str) -> None:
    await store.end(db, session_id)
