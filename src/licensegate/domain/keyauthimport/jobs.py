"""Imports from KeyAuth started on the dashboard, as work that outlives the request: the read
(a seller-API read takes about a second per user) and the import run as background jobs of the
worker, their state and progress kept in `keyauth_imports`, so a page shows them again after a
reload, on any worker. A read whose worker stopped (its row untouched for `STALE` seconds) is
taken over by whoever asks to resume it, from its checkpoint.

The job's folder (in the data folder, owner-only) holds the read's checkpoint or the uploaded
files; the seller key and the application's identity given with export files are sealed in the
row. The folder goes when the import is done."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from licensegate import private
from licensegate.background import Background
from licensegate.clock import Clock
from licensegate.config import Settings
from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport.checkpoint import CheckpointError
from licensegate.domain.keyauthimport.dumpfile import DumpError, DumpSource
from licensegate.domain.keyauthimport.exportfiles import ExportFileError, ExportFilesSource
from licensegate.domain.keyauthimport.pacing import DEFAULT_PACE, parse_pace
from licensegate.domain.keyauthimport.sellerapi import read_seller_api
from licensegate.domain.keyauthimport.sellerread import DEFAULT_URL, SellerApiError
from licensegate.secretbox import SecretBox
from licensegate.store import keyauthimports as store
from licensegate.store.database import Database

log = logging.getLogger("licensegate.keyauthimport")

STALE = 120  # seconds without progress after which a read (or an import) may be taken over
HEARTBEAT = 10  # seconds between touches of the row while a job waits or writes
KEY_PURPOSE = "keyauth_imports.sellerkey_sealed"
OPTIONS_PURPOSE = "keyauth_imports.options"
INVITATIONS_PURPOSE = "keyauth_imports.report.invitations"
CHECKPOINT = "read.checkpoint"
KEYS_FILE = "KeyAuthKeys.json"
USERS_FILE = "KeyAuthUsers.json"
DUMP_FILE = "dump.sql"

# The writer: (source, dry run, told each stage) -> the report, `{"applications": [...]}`.
Writer = Callable[[r.Source, bool, Callable[[str], None]], Awaitable[dict[str, Any]]]
# Refusals of the writer, shown as they are (nothing was written).


class ImportFailed(Exception):
    """A message for the person who started the import."""


@dataclass(frozen=True, slots=True)
class Context:
    """What a job needs from the worker it runs in."""

    settings: Settings
    db: Database
    secrets: SecretBox
    clock: Clock
    background: Background
    writer: Writer
    refused: tuple[type[Exception], ...] = ()  # the writer's refusals, shown as they are


ImportRow = store.ImportRow


async def get(db: Database, import_id: int, account_id: int) -> ImportRow | None:
    """One of the account's imports."""
    return await store.get(db, import_id, account_id)


async def abandon(ctx: Context, import_id: int, error: str) -> None:
    """An import that cannot start (say, no file was chosen)."""
    await store.move(
        ctx.db, import_id, expected=("reading",), state="failed", now=ctx.clock.now(), error=error
    )
    shutil.rmtree(folder_of(ctx.settings, import_id), ignore_errors=True)


def folder_of(settings: Settings, import_id: int) -> Path:
    return settings.data_dir / "keyauth-imports" / str(import_id)


async def create(
    ctx: Context,
    account_id: int,
    source: str,
    *,
    seller_key: str | None = None,
    options: dict[str, Any] | None = None,
) -> tuple[int, Path]:
    """A new import (state `reading`) and its folder, where the caller puts uploaded files."""
    sealed_key = ctx.secrets.seal(seller_key, KEY_PURPOSE) if seller_key else None
    sealed_options = ctx.secrets.seal(json.dumps(options or {}), OPTIONS_PURPOSE)
    import_id = await store.insert(
        ctx.db,
        account_id,
        source=source,
        state="reading",
        sellerkey_sealed=sealed_key,
        options=sealed_options,
        now=ctx.clock.now(),
    )
    where = private.folder(folder_of(ctx.settings, import_id))
    return import_id, where


def options_of(ctx: Context, row: store.ImportRow) -> dict[str, Any]:
    opened: dict[str, Any] = json.loads(ctx.secrets.open(row["options"], OPTIONS_PURPOSE))
    return opened


async def open_source(ctx: Context, row: store.ImportRow, *, resume: bool = True) -> r.Source:
    """The import's source: for a seller key, the read (continued from its checkpoint)."""
    where = folder_of(ctx.settings, row["id"])
    options = options_of(ctx, row)
    if row["source"] == "seller":
        if row["sellerkey_sealed"] is None:
            raise ImportFailed("This import is finished; start a new one to read the application again.")
        seller_key = ctx.secrets.open(row["sellerkey_sealed"], KEY_PURPOSE)
        checkpoint = where / CHECKPOINT

        async def progress(done: int, total: int | None, _step: str) -> None:
            await store.progress(ctx.db, row["id"], done=done, total=total, now=ctx.clock.now())

        reading = read_seller_api(
            ctx.settings,
            seller_key,
            checkpoint=checkpoint,
            resume=resume and checkpoint.exists(),
            now=ctx.clock.now(),
            base_url=str(options.get("from") or DEFAULT_URL),
            pace=parse_pace(str(options.get("pace") or DEFAULT_PACE)),
            progress=progress,
            sleep=_beating(ctx, row["id"]),
        )
        source, _stats = await reading
        return source
    if row["source"] == "files":
        app = r.App(
            name=str(options["name"]),
            secret=str(options["secret"]),
            ownerid=str(options["ownerid"]),
            owner=None,
            sellerkey=None,
            ver=options.get("version") or None,
        )
        subscriptions = [r.Subscription(app.secret, name, level) for name, level in options["subscriptions"]]
        keys, users = where / KEYS_FILE, where / USERS_FILE
        return ExportFilesSource(
            app,
            subscriptions,
            keys=keys if keys.exists() else None,
            users=users if users.exists() else None,
        )
    return DumpSource(where / DUMP_FILE, options.get("app") or None)


def _beating(ctx: Context, import_id: int) -> Callable[[float], Awaitable[None]]:
    """The pacer's sleep (a 429 may ask for half an hour), touching the row every `HEARTBEAT`
    seconds so the read is not taken for a stopped one."""

    async def sleep(seconds: float) -> None:
        while seconds > 0:
            step = min(seconds, HEARTBEAT)
            await asyncio.sleep(step)
            seconds -= step
            await store.touch(ctx.db, import_id, ctx.clock.now())

    return sleep


def summary(source: r.Source) -> dict[str, Any]:
    """What the source holds, per application: the records of each kind and its warnings."""
    found: list[dict[str, Any]] = []
    for app in source.apps():
        counts: dict[str, int] = {}
        for kind, table in r.TABLES.items():
            count = sum(1 for _ in source.rows(kind, app.secret))
            if count:
                counts[table] = count
        found.append(
            {
                "ownerid": app.ownerid,
                "name": app.name,
                "read": counts,
                "warnings": source.warnings(app.secret),
            }
        )
    return {"applications": found}


def _close(source: r.Source) -> None:
    """A dump keeps its file open until closed."""
    close = getattr(source, "close", None)
    if close is not None:
        close()


def _known(ctx: Context) -> tuple[type[Exception], ...]:
    """Failures whose message is for the person who started the import."""
    return (SellerApiError, CheckpointError, ExportFileError, DumpError, ImportFailed, *ctx.refused)


async def run_read(ctx: Context, import_id: int, account_id: int, *, resume: bool = False) -> None:
    """Read the source and check the import (a dry run): the row ends `read` with the report,
    or `failed` with what went wrong."""
    row = await store.get(ctx.db, import_id, account_id)
    if row is None:
        return
    try:
        source = await open_source(ctx, row, resume=resume)
        try:
            report = await _write(ctx, import_id, source, dry_run=True)
        finally:
            _close(source)
    except Exception as exc:
        if isinstance(exc, _known(ctx)):
            error = str(exc)
        else:
            log.exception("the read of KeyAuth import %d failed", import_id)
            error = "The read stopped on an unexpected error; resume it to try again."
        await store.move(
            ctx.db, import_id, expected=("reading",), state="failed", now=ctx.clock.now(), error=error
        )
        return
    await store.move(
        ctx.db, import_id, expected=("reading",), state="read", now=ctx.clock.now(), report=json.dumps(report)
    )


async def run_import(ctx: Context, import_id: int, account_id: int) -> dict[str, Any] | None:
    """Write what was read (the row ends `done` with the import's report, or `failed`)."""
    row = await store.get(ctx.db, import_id, account_id)
    if row is None:
        return None
    try:
        source = await open_source(ctx, row, resume=True)
        try:
            report = await _write(ctx, import_id, source, dry_run=False)
        finally:
            _close(source)
    except Exception as exc:
        known = _known(ctx)
        message = str(exc) if isinstance(exc, known) else "unexpected error"
        if not isinstance(exc, known):
            log.exception("KeyAuth import %d failed", import_id)
        await store.move(
            ctx.db,
            import_id,
            expected=("importing",),
            state="failed",
            now=ctx.clock.now(),
            error=f"The import stopped: {message}. Running it again adds only what is missing.",
        )
        return None
    await store.move(
        ctx.db,
        import_id,
        expected=("importing",),
        state="done",
        now=ctx.clock.now(),
        report=json.dumps(report),
    )
    await store.forget_key(ctx.db, import_id)
    shutil.rmtree(folder_of(ctx.settings, import_id), ignore_errors=True)
    return report


async def _write(ctx: Context, import_id: int, source: r.Source, *, dry_run: bool) -> dict[str, Any]:
    """The writer's run, its latest stage written to the row every second meanwhile. The team's
    invitation links are sealed before the report is kept."""
    latest: list[str] = []

    async def tick() -> None:
        shown, quiet = "", 0
        while True:
            await asyncio.sleep(1.0)
            quiet += 1
            if (latest and latest[-1] != shown) or quiet >= HEARTBEAT:  # a heartbeat while quiet
                shown, quiet = (latest[-1] if latest else shown), 0
                await store.stage(ctx.db, import_id, shown[:200] or None, ctx.clock.now())

    ticker = asyncio.create_task(tick())
    try:
        report = await ctx.writer(source, dry_run, latest.append)
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
    for app in report.get("applications", []):
        if app.get("invitations"):  # links that let someone set a team account's password
            app["invitations"] = ctx.secrets.seal(json.dumps(app["invitations"]), INVITATIONS_PURPOSE)
    return report


def invitations_of(ctx: Context, app: dict[str, Any]) -> dict[str, str]:
    """The team's invitation links of one application of a report (sealed in the row)."""
    sealed = app.get("invitations")
    if not isinstance(sealed, str):
        return {}
    links: dict[str, str] = json.loads(ctx.secrets.open(sealed, INVITATIONS_PURPOSE))
    return links


def start_read(ctx: Context, import_id: int, account_id: int, *, resume: bool = False) -> None:
    async def attempt() -> None:
        await run_read(ctx, import_id, account_id, resume=resume)

    ctx.background.run_later(attempt, what=f"KeyAuth import {import_id} (read)", delays=(0.0,))


async def resume_read(ctx: Context, row: store.ImportRow) -> bool:
    """Take over a read that failed or whose worker stopped; False if another has it."""
    now = ctx.clock.now()
    if row["state"] == "reading" and now - row["updated_at"] < STALE:
        return False
    moved = await store.move(
        ctx.db,
        row["id"],
        expected=("reading", "failed"),
        state="reading",
        now=now,
        seen_update=row["updated_at"],
    )
    if moved:
        start_read(ctx, row["id"], row["account_id"], resume=True)
    return moved


async def confirm(
    ctx: Context, row: store.ImportRow, on_done: Callable[[dict[str, Any]], Awaitable[None]]
) -> bool:
    """Start the import of what was read and checked; False if it is not waiting for that."""
    if row["report"] is None:  # nothing was read and checked yet
        return False
    now = ctx.clock.now()
    if row["state"] == "importing":  # only when its worker stopped (its writes are idempotent)
        if now - row["updated_at"] < STALE:
            return False
        moved = await store.move(
            ctx.db,
            row["id"],
            expected=("importing",),
            state="importing",
            now=now,
            seen_update=row["updated_at"],
        )
    else:
        moved = await store.move(ctx.db, row["id"], expected=("read", "failed"), state="importing", now=now)
    if not moved:
        return False

    async def attempt() -> None:
        report = await run_import(ctx, row["id"], row["account_id"])
        if report is not None:
            await on_done(report)

    ctx.background.run_later(attempt, what=f"KeyAuth import {row['id']}", delays=(0.0,))
    return True
